// The bounded, safe serializer: the resource and safety boundary between a tool that has
// already run and the transcript. It never calls code supplied by the value (no toJSON,
// getters, Proxy traps, instance or patched collection methods) and its work is bounded by
// the budgets in constants.ts. Pure and synchronous: it runs unchanged inside a worker.
import {
  COURSE_TOOL_CIRCULAR_MARKER,
  COURSE_TOOL_MAX_BIGINT_BITS,
  COURSE_TOOL_MAX_COLLECTION_VISITS,
  COURSE_TOOL_MAX_DEPTH,
  COURSE_TOOL_MAX_NODES,
  COURSE_TOOL_MAX_STRING_CODE_POINTS,
} from "./constants.js";
import { capContent, cutToCodePoints } from "./content.js";
import {
  ArrayIsArray,
  ArrayPrototype,
  ArrayPrototypeSort,
  BigIntPrototypeToString,
  DatePrototype,
  DatePrototypeGetTime,
  DatePrototypeToISOString,
  isArrayBufferView,
  isBoxedPrimitive,
  isDate,
  isMap,
  isProxy,
  isSet,
  JSONStringify,
  MapPrototype,
  MapPrototypeGetSize,
  mapEntryStepper,
  NumberIsFinite,
  ObjectGetOwnPropertyDescriptor,
  ObjectGetPrototypeOf,
  ObjectHasOwn,
  ObjectKeys,
  ObjectPrototype,
  RegExpPrototypeExec,
  SetPrototype,
  SetPrototypeGetSize,
  StringPrototypeCharCodeAt,
  StringPrototypeToWellFormed,
  setValueStepper,
} from "./primordials.js";

/** The outcome of serializing a tool's output: bounded content, or why it was refused. */
export type SerializationOutcome = { readonly ok: true; readonly content: string } | { readonly ok: false; readonly message: string };

/** A rendering before the content cap: `cut` says a string or key was shortened. */
export type Rendering =
  | { readonly ok: true; readonly text: string; readonly cut: boolean }
  | { readonly ok: false; readonly message: string };

const BIGINT_LIMIT = 1n << BigInt(COURSE_TOOL_MAX_BIGINT_BITS);

/** Thrown inside the walk when a budget or rule refuses the value; caught at the top. */
class Refusal {
  constructor(readonly reason: string) {}
}

interface Walk {
  nodes: number;
  visits: number;
  cut: boolean;
}

/** One container being rendered; the chain of frames is the ancestry (cycles, paths). */
interface Frame {
  readonly container: object;
  readonly parent: Frame | undefined;
  /** Depth of this container's members (the number of containers around them). */
  readonly depth: number;
  /** The member being rendered, for error paths. */
  key: string | number | undefined;
}

/**
 * Serializes a tool's output to the final `content` string (at most 4096 code points).
 * A top-level string is used verbatim; `undefined` gives ""; everything else is rendered
 * as deterministic JSON (see the README for every type's rendering). Never throws.
 */
export function serializeToolOutput(value: unknown): SerializationOutcome {
  const rendering = renderValue(value);
  return rendering.ok ? { ok: true, content: capContent(rendering.text, rendering.cut) } : rendering;
}

/** The serializer's walk without the final cap; shared with error-message rendering. */
export function renderValue(value: unknown): Rendering {
  if (typeof value === "string") {
    const { text, cut } = cutToCodePoints(value, COURSE_TOOL_MAX_STRING_CODE_POINTS);
    return { ok: true, text: StringPrototypeToWellFormed(text), cut };
  }
  if (value === undefined) return { ok: true, text: "", cut: false };
  if (typeof value === "function" || typeof value === "symbol") {
    return { ok: false, message: `a ${typeof value} cannot be serialized` };
  }
  const walk: Walk = { nodes: 0, visits: 0, cut: false };
  try {
    return { ok: true, text: render(walk, value, undefined) ?? "null", cut: walk.cut };
  } catch (error) {
    if (error instanceof Refusal) return { ok: false, message: error.reason };
    // Only an engine failure (e.g. out of memory) can get here; it must not escape.
    return { ok: false, message: "the output could not be serialized" };
  }
}

/** Renders one value, a member of `parent` (none at the top); `undefined` means omit it. */
function render(walk: Walk, value: unknown, parent: Frame | undefined): string | undefined {
  switch (typeof value) {
    case "string":
      countNode(walk, parent);
      return quote(walk, value);
    case "number":
      countNode(walk, parent);
      // -0 renders as 0 and non-finite numbers as null, as JSON.stringify does.
      return NumberIsFinite(value) ? (value === 0 ? "0" : "" + value) : "null";
    case "boolean":
      countNode(walk, parent);
      return value ? "true" : "false";
    case "bigint":
      countNode(walk, parent);
      if (value >= BIGINT_LIMIT || value <= -BIGINT_LIMIT) {
        refuse(parent, `a BigInt larger than ${COURSE_TOOL_MAX_BIGINT_BITS} bits`);
      }
      return BigIntPrototypeToString(value);
    case "object":
      if (value === null) {
        countNode(walk, parent);
        return "null";
      }
      return renderObject(walk, value, parent);
    default:
      // undefined, functions and symbols are omitted, as JSON.stringify omits them.
      return undefined;
  }
}

function renderObject(walk: Walk, value: object, parent: Frame | undefined): string {
  if (isProxy(value)) refuse(parent, "a Proxy");
  const prototype: unknown = ObjectGetPrototypeOf(value);
  if (prototype === DatePrototype && isDate(value)) {
    // A Date is a value, not a container: it counts as a node, not against the depth.
    countNode(walk, parent);
    const time = DatePrototypeGetTime(value as Date);
    return NumberIsFinite(time) ? JSONStringify(DatePrototypeToISOString(value as Date)) : "null";
  }
  for (let frame = parent; frame !== undefined; frame = frame.parent) {
    if (frame.container === value) {
      countNode(walk, parent);
      return CIRCULAR;
    }
  }
  const depth = parent === undefined ? 0 : parent.depth;
  if (depth >= COURSE_TOOL_MAX_DEPTH) refuse(parent, `nesting deeper than ${COURSE_TOOL_MAX_DEPTH} containers`);
  countNode(walk, parent);
  if (prototype === ObjectPrototype || prototype === null) {
    // Exotic objects with a swapped prototype would list every index as a key. Only an
    // object with an own "0" can be one of those, which keeps the common case cheap.
    if (ArrayIsArray(value) || (ObjectHasOwn(value, 0) && (isArrayBufferView(value) || isBoxedPrimitive(value)))) {
      refuse(parent, "an object with an unsupported prototype");
    }
    return renderPlainObject(walk, frameOf(value, parent, depth));
  }
  if (prototype === ArrayPrototype && ArrayIsArray(value)) return renderArray(walk, frameOf(value, parent, depth));
  if (prototype === MapPrototype && isMap(value)) return renderMap(walk, frameOf(value, parent, depth));
  if (prototype === SetPrototype && isSet(value)) return renderSet(walk, frameOf(value, parent, depth));
  return refuse(parent, "an object with an unsupported prototype (only plain objects, arrays, Map, Set and Date are serialized)");
}

const CIRCULAR = JSONStringify(COURSE_TOOL_CIRCULAR_MARKER);

function frameOf(container: object, parent: Frame | undefined, depth: number): Frame {
  return { container, parent, depth: depth + 1, key: undefined };
}

function renderPlainObject(walk: Walk, frame: Frame): string {
  const object = frame.container;
  const keys = ObjectKeys(object); // own enumerable string keys; no user code on a non-Proxy
  reserveVisits(walk, keys.length, frame);
  sortKeys(keys);
  let text = "{";
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index] as string;
    const descriptor = ObjectGetOwnPropertyDescriptor(object, key);
    // Accessors are skipped without being called; hasOwn, not `in`, so a patched
    // Object.prototype.value cannot make an accessor look like data.
    if (descriptor === undefined || !ObjectHasOwn(descriptor, "value")) continue;
    frame.key = key;
    const member = render(walk, descriptor.value, frame);
    if (member === undefined) continue;
    text += (text.length === 1 ? "" : ",") + quote(walk, key) + ":" + member;
  }
  return text + "}";
}

/**
 * Sorts keys in UTF-16 code-unit order (the default sort's order). Objects usually have a
 * handful of keys: an insertion sort beats the built-in sort there (measured: ~2x at 3-10 keys).
 */
function sortKeys(keys: string[]): void {
  const length = keys.length;
  if (length > SMALL_SORT) {
    ArrayPrototypeSort(keys); // the default comparison: string code units, no callback
    return;
  }
  for (let index = 1; index < length; index += 1) {
    const key = keys[index] as string;
    let position = index - 1;
    while (position >= 0 && (keys[position] as string) > key) {
      keys[position + 1] = keys[position] as string;
      position -= 1;
    }
    keys[position + 1] = key;
  }
}

const SMALL_SORT = 16;

function renderArray(walk: Walk, frame: Frame): string {
  const array = frame.container as unknown[];
  const length = array.length; // an own data property of a genuine, non-Proxy array
  reserveVisits(walk, length, frame);
  let text = "[";
  for (let index = 0; index < length; index += 1) {
    // Holes and accessors render as null without reading anything inherited or calling a getter.
    const descriptor = ObjectGetOwnPropertyDescriptor(array, index);
    frame.key = index;
    const member = descriptor !== undefined && ObjectHasOwn(descriptor, "value") ? render(walk, descriptor.value, frame) : "null";
    text += (index === 0 ? "" : ",") + (member ?? "null");
  }
  return text + "]";
}

/** A Map renders as an array of [key, value] pairs in insertion order. */
function renderMap(walk: Walk, frame: Frame): string {
  const map = frame.container as Map<unknown, unknown>;
  reserveVisits(walk, MapPrototypeGetSize(map), frame);
  const next = mapEntryStepper(map);
  let text = "[";
  for (let step = next(), index = 0; step.done !== true; step = next(), index += 1) {
    const entry = step.value;
    frame.key = index;
    const key = render(walk, entry[0], frame) ?? "null";
    const member = render(walk, entry[1], frame) ?? "null";
    text += (index === 0 ? "[" : ",[") + key + "," + member + "]";
  }
  return text + "]";
}

/** A Set renders as an array of its values in insertion order. */
function renderSet(walk: Walk, frame: Frame): string {
  const set = frame.container as Set<unknown>;
  reserveVisits(walk, SetPrototypeGetSize(set), frame);
  const next = setValueStepper(set);
  let text = "[";
  for (let step = next(), index = 0; step.done !== true; step = next(), index += 1) {
    frame.key = index;
    text += (index === 0 ? "" : ",") + (render(walk, step.value, frame) ?? "null");
  }
  return text + "]";
}

// Characters JSON.stringify would escape; lone surrogates are among them.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point: JSON escapes them.
const NEEDS_ESCAPE = /[\u0000-\u001f"\\\uD800-\uDFFF]/;

function quote(walk: Walk, text: string): string {
  if (text.length > COURSE_TOOL_MAX_STRING_CODE_POINTS) {
    const bounded = cutToCodePoints(text, COURSE_TOOL_MAX_STRING_CODE_POINTS);
    if (bounded.cut) walk.cut = true;
    text = bounded.text;
  }
  // JSON.stringify escapes lone surrogates too, so the JSON stays well-formed.
  return needsEscape(text) ? JSONStringify(text) : '"' + text + '"';
}

/** Short strings are scanned inline (cheaper than a regex call); long ones by the regex. */
function needsEscape(text: string): boolean {
  const length = text.length;
  if (length > 32) return RegExpPrototypeExec(NEEDS_ESCAPE, text) !== null;
  for (let index = 0; index < length; index += 1) {
    const unit = StringPrototypeCharCodeAt(text, index);
    if (unit < 0x20 || unit === 0x22 || unit === 0x5c || (unit >= 0xd800 && unit <= 0xdfff)) return true;
  }
  return false;
}

function countNode(walk: Walk, parent: Frame | undefined): void {
  walk.nodes += 1;
  if (walk.nodes > COURSE_TOOL_MAX_NODES) refuse(parent, `more than ${COURSE_TOOL_MAX_NODES} values`);
}

/** Members are counted before any is read, so a huge collection is refused in O(1). */
function reserveVisits(walk: Walk, members: number, frame: Frame): void {
  walk.visits += members;
  if (walk.visits > COURSE_TOOL_MAX_COLLECTION_VISITS) {
    refuse(frame, `more than ${COURSE_TOOL_MAX_COLLECTION_VISITS} collection members`);
  }
}

function refuse(at: Frame | undefined, what: string): never {
  throw new Refusal(`output contains ${what} at ${formatPath(at)}`);
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/;

/** "$.a[3]["odd key"]": the keys of the frames from the top down to `at`. */
function formatPath(at: Frame | undefined): string {
  let text = "";
  for (let frame = at; frame !== undefined; frame = frame.parent) {
    const key = frame.key;
    if (key === undefined) continue;
    if (typeof key === "number") text = "[" + key + "]" + text;
    else if (RegExpPrototypeExec(IDENTIFIER, key) !== null) text = "." + key + text;
    else text = "[" + JSONStringify(cutToCodePoints(key, 64).text) + "]" + text;
  }
  return "$" + text;
}
