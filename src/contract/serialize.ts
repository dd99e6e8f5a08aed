// A tool's value as content: the bounded serializer (rules 10 and 11), then the code-point cap
// every content string ends with (rule 12).
//
// The bounded, safe serializer: the resource and safety boundary between a tool that has
// already run and the transcript. It never calls code supplied by the value (no toJSON,
// getters, Proxy traps, instance or patched collection methods) and its work is bounded by
// its budgets (budgets.ts; defaults in constants.ts). Pure and synchronous: it runs
// unchanged inside a worker.
// docs/contract.md: rule 10 — safe serialization, rule 11 — work budgets; the budget table: docs/guarantees.md.
import { DEFAULT_OUTPUT_BUDGETS, type OutputBudgets, type ResolvedOutputBudgets, readOutputBudgets, resolveBudgets } from "./budgets.js";
import { Limits } from "./constants.js";
import { describeValue } from "./grammar.js";
import {
  ArrayIsArray,
  ArrayPrototype,
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
  MapPrototypeClear,
  MapPrototypeGet,
  MapPrototypeGetSize,
  MapPrototypeSet,
  mapEntryStepper,
  NumberIsFinite,
  ObjectGetPrototypeOf,
  ObjectHasOwn,
  ObjectKeys,
  ObjectPrototype,
  ObjectPrototypeLookupGetter,
  RegExpPrototypeExec,
  SetPrototype,
  SetPrototypeGetSize,
  StringPrototypeCharCodeAt,
  StringPrototypeSlice,
  StringPrototypeToWellFormed,
  setValueStepper,
} from "./primordials.js";

/** The outcome of serializing a tool's output: bounded content, or why it was refused. */
export type SerializationOutcome = { readonly ok: true; readonly content: string } | { readonly ok: false; readonly message: string };

/** A rendering before the content cap: `cut` says a string or key was shortened. */
export type Rendering =
  | { readonly ok: true; readonly text: string; readonly cut: boolean }
  | { readonly ok: false; readonly message: string };

/**
 * Serializes a tool's output to the final `content` string (at most 4096 code points by
 * default). A top-level string is used verbatim; `undefined` gives ""; everything else is
 * rendered as deterministic JSON (see docs/guarantees.md for every type's rendering).
 * `budgets` overrides the default budgets (validated: ToolContractError(INVALID_ARGUMENT)).
 * Never throws otherwise.
 */
export function serializeToolOutput(value: unknown, budgets?: OutputBudgets): SerializationOutcome {
  const resolved =
    budgets === undefined ? DEFAULT_OUTPUT_BUDGETS : resolveBudgets(DEFAULT_OUTPUT_BUDGETS, readOutputBudgets(budgets, "budgets"));
  return serializeWithin(value, resolved);
}

/** `serializeToolOutput` with budgets already validated and resolved. */
export function serializeWithin(value: unknown, budgets: ResolvedOutputBudgets): SerializationOutcome {
  const content = contentWithin(value, budgets);
  return typeof content === "string" ? { ok: true, content } : { ok: false, message: content.message };
}

/** Why a tool's output cannot be serialized: what `contentWithin` gives instead of content. */
export class OutputRefusal {
  constructor(readonly message: string) {}
}

/**
 * `serializeWithin` for the executors' path: the content itself, or an OutputRefusal. An
 * object (the common output) is walked with no record around its text.
 */
export function contentWithin(value: unknown, budgets: ResolvedOutputBudgets): string | OutputRefusal {
  if (typeof value !== "object" || value === null) {
    const rendering = renderValue(value, budgets);
    return rendering.ok ? capContent(rendering.text, rendering.cut, budgets.maxContentCodePoints) : new OutputRefusal(rendering.message);
  }
  const walk = sharedWalk.reset(budgets);
  let text: string;
  try {
    text = renderObject(walk, value, 0);
  } catch (error) {
    return new OutputRefusal(refusalReason(error));
  } finally {
    walk.release();
  }
  return capContent(text, walk.cut, budgets.maxContentCodePoints);
}

/** The serializer's walk without the final cap; shared with error-message rendering. */
export function renderValue(value: unknown, budgets: ResolvedOutputBudgets = DEFAULT_OUTPUT_BUDGETS): Rendering {
  if (typeof value === "string") {
    const { text, cut } = cutToCodePoints(value, budgets.maxStringCodePoints);
    return { ok: true, text: StringPrototypeToWellFormed(text), cut };
  }
  if (value === undefined) return { ok: true, text: "", cut: false };
  if (typeof value === "function" || typeof value === "symbol") {
    return { ok: false, message: `${describeValue(value)} cannot be serialized` };
  }
  const walk = sharedWalk.reset(budgets);
  try {
    return { ok: true, text: render(walk, value, 0) ?? "null", cut: walk.cut };
  } catch (error) {
    return { ok: false, message: refusalReason(error) };
  } finally {
    walk.release();
  }
}

function refusalReason(error: unknown): string {
  // Only an engine failure (e.g. out of memory) is not a Refusal; it must not escape.
  return error instanceof Refusal ? error.reason : "the output could not be serialized";
}

/** Thrown inside the walk when a budget or rule refuses the value; caught at the top. */
class Refusal {
  constructor(readonly reason: string) {}
}

/**
 * One serialization's state. `containers[d]` is the container at depth d around the value
 * being rendered (for cycles) and `keys[d]` the member of it being rendered (for paths):
 * two reused arrays instead of an object per container.
 */
class Walk {
  nodes = 0;
  members = 0;
  cut = false;
  /** Code units of strings and keys rendered so far: a lower bound of the text's length. */
  emitted = 0;
  readonly containers: (object | undefined)[] = [];
  readonly keys: (string | number)[] = [];
  /** Deepest index written to `containers` (cleared after the walk). */
  deepest = 0;
  maxDepth = 0;
  maxNodes = 0;
  maxMembers = 0;
  maxStringCodePoints = 0;
  maxBigIntBits = 0;
  bigIntLimit = 0n;
  /**
   * Past this many code units (twice the content cap: a code point is at most two units), the
   * text is already longer than the content cap, so what follows is cut anyway: later strings
   * are not scanned or copied (the structure is still walked, so refusals stay the same).
   */
  textNoLongerShown = 0;
  /** The (frozen) budgets the limits above were read from: the next walk within them reads nothing again. */
  budgets: ResolvedOutputBudgets | undefined = undefined;

  /** Ready for a new serialization within `budgets`. */
  reset(budgets: ResolvedOutputBudgets): this {
    this.nodes = 0;
    this.members = 0;
    this.cut = false;
    this.emitted = 0;
    this.deepest = 0;
    if (budgets === this.budgets) return this;
    this.budgets = budgets;
    this.maxDepth = budgets.maxDepth;
    this.maxNodes = budgets.maxNodes;
    this.maxMembers = budgets.maxMembers;
    this.maxStringCodePoints = budgets.maxStringCodePoints;
    this.maxBigIntBits = budgets.maxBigIntBits;
    this.bigIntLimit = bigIntLimitOf(budgets.maxBigIntBits);
    this.textNoLongerShown = 2 * budgets.maxContentCodePoints;
    return this;
  }

  /** Drops the references to the value's containers and keys, so the walk keeps nothing alive. */
  release(): void {
    for (let index = 0; index <= this.deepest; index += 1) {
      this.containers[index] = undefined;
      this.keys[index] = 0;
    }
  }
}

// One walk, reused: the serializer runs no code of the value's, so it never re-enters.
const sharedWalk = new Walk();

let lastBigIntBits = DEFAULT_OUTPUT_BUDGETS.maxBigIntBits;
let lastBigIntLimit = 1n << BigInt(lastBigIntBits);

/** 2^bits, memoized for the last value (the budget rarely changes). */
function bigIntLimitOf(bits: number): bigint {
  if (bits !== lastBigIntBits) {
    lastBigIntLimit = 1n << BigInt(bits);
    lastBigIntBits = bits;
  }
  return lastBigIntLimit;
}

/** Renders one value at `depth` containers deep; `undefined` means omit it. */
function render(walk: Walk, value: unknown, depth: number): string | undefined {
  switch (typeof value) {
    case "string":
      countNode(walk, depth);
      return quote(walk, value);
    case "number":
      countNode(walk, depth);
      // -0 renders as 0 and non-finite numbers as null, as JSON.stringify does.
      return NumberIsFinite(value) ? (value === 0 ? "0" : "" + value) : "null";
    case "boolean":
      countNode(walk, depth);
      return value ? "true" : "false";
    case "bigint":
      countNode(walk, depth);
      if (value >= walk.bigIntLimit || value <= -walk.bigIntLimit) {
        refuse(walk, depth, `a BigInt larger than ${walk.maxBigIntBits} bits`);
      }
      return BigIntPrototypeToString(value);
    case "object":
      if (value === null) {
        countNode(walk, depth);
        return "null";
      }
      return renderObject(walk, value, depth);
    default:
      // undefined, functions and symbols are omitted, as JSON.stringify omits them.
      return undefined;
  }
}

function renderObject(walk: Walk, value: object, depth: number): string {
  if (isProxy(value)) refuse(walk, depth, "a Proxy");
  const prototype: unknown = ObjectGetPrototypeOf(value);
  if (prototype === DatePrototype && isDate(value)) {
    // A Date is a value, not a container: it counts as a node, not against the depth.
    countNode(walk, depth);
    const time = DatePrototypeGetTime(value as Date);
    return NumberIsFinite(time) ? JSONStringify(DatePrototypeToISOString(value as Date)) : "null";
  }
  const containers = walk.containers;
  for (let index = 0; index < depth; index += 1) {
    if (containers[index] === value) {
      countNode(walk, depth);
      return CIRCULAR;
    }
  }
  if (depth >= walk.maxDepth) refuse(walk, depth, `nesting deeper than ${walk.maxDepth} containers`);
  countNode(walk, depth);
  containers[depth] = value;
  if (depth > walk.deepest) walk.deepest = depth;
  if (prototype === ObjectPrototype || prototype === null) {
    // Exotic objects with a swapped prototype would list every index as a key. Only an
    // object with an own "0" can be one of those, which keeps the common case cheap.
    if (ArrayIsArray(value) || (ObjectHasOwn(value, 0) && (isArrayBufferView(value) || isBoxedPrimitive(value)))) {
      refuse(walk, depth, "an object with an unsupported prototype");
    }
    return renderPlainObject(walk, value, depth);
  }
  if (prototype === ArrayPrototype && ArrayIsArray(value)) return renderArray(walk, value, depth);
  if (prototype === MapPrototype && isMap(value)) return renderMap(walk, value as Map<unknown, unknown>, depth);
  if (prototype === SetPrototype && isSet(value)) return renderSet(walk, value as Set<unknown>, depth);
  return refuse(walk, depth, "an object with an unsupported prototype (only plain objects, arrays, Map, Set and Date are serialized)");
}

const CIRCULAR = JSONStringify(Limits.CIRCULAR_MARKER);

function renderPlainObject(walk: Walk, object: object, depth: number): string {
  const keys = ObjectKeys(object); // own enumerable string keys; no user code on a non-Proxy
  reserveMembers(walk, keys.length, depth);
  sortKeys(keys);
  const inner = depth + 1;
  const path = walk.keys;
  let text = "";
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index] as string;
    // Accessors are skipped without being called: an own key (Object.keys listed it) with no
    // getter is data, or a setter-only accessor, which reads undefined and is omitted.
    if (ObjectPrototypeLookupGetter(object, key) !== undefined) continue;
    path[depth] = key;
    // The key comes before its member in the text: whether it is still shown is decided first.
    const keyShown = walk.emitted <= walk.textNoLongerShown;
    const member = render(walk, (object as Record<string, unknown>)[key], inner);
    if (member === undefined) continue;
    // The opening brace or the comma comes with the key's piece: one concatenation fewer per member.
    const first = text.length === 0;
    const start = keyShown ? memberStart(walk, key, first) : hiddenMemberStart(walk, first);
    text = first ? start + member : text + (start + member);
  }
  return text.length === 0 ? "{}" : text + "}";
}

/**
 * Sorts keys in UTF-16 code-unit order (the default sort's order) without calling into the
 * built-in sort: an insertion sort for the handful of keys most objects have, a merge sort
 * above that (measured: both beat Array.prototype.sort's string comparisons).
 */
function sortKeys(keys: string[]): void {
  const length = keys.length;
  if (length <= SMALL_SORT) insertionSort(keys, 0, length);
  else mergeSort(keys, [], 0, length);
}

const SMALL_SORT = 16;

function insertionSort(keys: string[], start: number, end: number): void {
  for (let index = start + 1; index < end; index += 1) {
    const key = keys[index] as string;
    let position = index - 1;
    while (position >= start && (keys[position] as string) > key) {
      keys[position + 1] = keys[position] as string;
      position -= 1;
    }
    keys[position + 1] = key;
  }
}

/** Sorts keys[start, end) in place, `scratch` holding a copy of the left half while merging. */
function mergeSort(keys: string[], scratch: string[], start: number, end: number): void {
  if (end - start <= SMALL_SORT) {
    insertionSort(keys, start, end);
    return;
  }
  const middle = (start + end) >>> 1;
  mergeSort(keys, scratch, start, middle);
  mergeSort(keys, scratch, middle, end);
  if ((keys[middle - 1] as string) <= (keys[middle] as string)) return; // already in order
  const leftLength = middle - start;
  for (let index = 0; index < leftLength; index += 1) scratch[index] = keys[start + index] as string;
  let left = 0;
  let right = middle;
  let out = start;
  while (left < leftLength && right < end) {
    const fromLeft = scratch[left] as string;
    const fromRight = keys[right] as string;
    if (fromRight < fromLeft) {
      keys[out] = fromRight;
      right += 1;
    } else {
      keys[out] = fromLeft;
      left += 1;
    }
    out += 1;
  }
  while (left < leftLength) {
    keys[out] = scratch[left] as string;
    left += 1;
    out += 1;
  }
}

function renderArray(walk: Walk, array: unknown[], depth: number): string {
  const length = array.length; // an own data property of a genuine, non-Proxy array
  reserveMembers(walk, length, depth);
  if (length === 0) return "[]";
  const inner = depth + 1;
  const path = walk.keys;
  let text = "[";
  for (let index = 0; index < length; index += 1) {
    // Holes and accessors render as null without reading anything inherited or calling a getter:
    // an own element with no getter is data (or a setter-only accessor, which reads undefined).
    path[depth] = index;
    const member =
      ObjectHasOwn(array, index) && ObjectPrototypeLookupGetter(array, index) === undefined ? render(walk, array[index], inner) : "null";
    text += (index === 0 ? "" : ",") + (member ?? "null");
  }
  return text + "]";
}

/** A Map renders as an array of [key, value] pairs in insertion order. */
function renderMap(walk: Walk, map: Map<unknown, unknown>, depth: number): string {
  reserveMembers(walk, MapPrototypeGetSize(map), depth);
  const next = mapEntryStepper(map);
  const inner = depth + 1;
  const path = walk.keys;
  let text = "[";
  for (let step = next(), index = 0; step.done !== true; step = next(), index += 1) {
    const entry = step.value;
    path[depth] = index;
    const key = render(walk, entry[0], inner) ?? "null";
    const member = render(walk, entry[1], inner) ?? "null";
    text += (index === 0 ? "[" : ",[") + key + "," + member + "]";
  }
  return text + "]";
}

/** A Set renders as an array of its values in insertion order. */
function renderSet(walk: Walk, set: Set<unknown>, depth: number): string {
  reserveMembers(walk, SetPrototypeGetSize(set), depth);
  const next = setValueStepper(set);
  const inner = depth + 1;
  const path = walk.keys;
  let text = "[";
  for (let step = next(), index = 0; step.done !== true; step = next(), index += 1) {
    path[depth] = index;
    text += (index === 0 ? "" : ",") + (render(walk, step.value, inner) ?? "null");
  }
  return text + "]";
}

// Characters JSON.stringify would escape; lone surrogates are among them.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point: JSON escapes them.
const NEEDS_ESCAPE = /[\u0000-\u001f"\\\uD800-\uDFFF]/;

function quote(walk: Walk, text: string): string {
  return walk.emitted > walk.textNoLongerShown ? hidden(walk) : quoteText(walk, text);
}

/** A string past the point where the content is cut anyway: not scanned, not copied. */
function hidden(walk: Walk): string {
  walk.cut = true;
  return '""';
}

function quoteText(walk: Walk, text: string): string {
  if (text.length > walk.maxStringCodePoints) {
    const bounded = cutToCodePoints(text, walk.maxStringCodePoints);
    if (bounded.cut) walk.cut = true;
    text = bounded.text;
  }
  walk.emitted += text.length;
  // A long string: JSON.stringify scans it once (a check first would scan it twice).
  if (text.length > MAX_CACHED_KEY_LENGTH) return JSONStringify(text);
  // Short values repeat too (statuses, enums, names): cached like keys.
  const cached = MapPrototypeGet(quotedValues, text);
  if (cached !== undefined) return cached;
  const fresh = quoted(text);
  remember(quotedValues, text, fresh);
  return fresh;
}

/** JSON.stringify escapes lone surrogates too, so the JSON stays well-formed. */
function quoted(text: string): string {
  return needsEscape(text) ? JSONStringify(text) : '"' + text + '"';
}

function remember(cache: Map<string, string>, text: string, rendered: string): void {
  if (MapPrototypeGetSize(cache) >= MAX_CACHED_KEYS) MapPrototypeClear(cache);
  MapPrototypeSet(cache, text, rendered);
}

const quotedValues = new Map<string, string>();

// `{"key":` and `,"key":` by key: objects of one shape repeat their keys across rows and calls,
// and one cached piece saves quoting and three concatenations per member. Bounded: each emptied
// when full, and only short keys are kept.
const firstMemberStarts = new Map<string, string>();
const laterMemberStarts = new Map<string, string>();
const MAX_CACHED_KEYS = 1024;
const MAX_CACHED_KEY_LENGTH = 64;

/** What starts a member in an object's text: `{` (the first member) or `,`, then its key quoted, with its colon. */
function memberStart(walk: Walk, key: string, first: boolean): string {
  const opening = first ? "{" : ",";
  if (key.length > MAX_CACHED_KEY_LENGTH || key.length > walk.maxStringCodePoints) return opening + quoteText(walk, key) + ":";
  walk.emitted += key.length;
  const starts = first ? firstMemberStarts : laterMemberStarts;
  const cached = MapPrototypeGet(starts, key);
  if (cached !== undefined) return cached;
  const start = opening + quoted(key) + ":";
  remember(starts, key, start);
  return start;
}

/** What starts a member whose key is past the point where the content is cut anyway. */
function hiddenMemberStart(walk: Walk, first: boolean): string {
  walk.cut = true;
  return first ? '{"":' : ',"":';
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

function countNode(walk: Walk, depth: number): void {
  walk.nodes += 1;
  if (walk.nodes > walk.maxNodes) refuse(walk, depth, `more than ${walk.maxNodes} values`);
}

/** Members are counted before any is read, so a huge collection is refused in O(1). */
function reserveMembers(walk: Walk, members: number, depth: number): void {
  walk.members += members;
  if (walk.members > walk.maxMembers) refuse(walk, depth, `more than ${walk.maxMembers} collection members`);
}

/** Refuses the value at `depth`: the path is the keys that lead to it. */
function refuse(walk: Walk, depth: number, what: string): never {
  throw new Refusal(`output contains ${what} at ${formatPath(walk.keys, depth)}`);
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/;

/** "$.a[3]["odd key"]": the first `depth` keys of the path. */
function formatPath(keys: readonly (string | number)[], depth: number): string {
  let text = "$";
  for (let index = 0; index < depth; index += 1) {
    const key = keys[index] as string | number;
    if (typeof key === "number") text += "[" + key + "]";
    else if (RegExpPrototypeExec(IDENTIFIER, key) !== null) text += "." + key;
    else text += "[" + JSONStringify(cutToCodePoints(key, 64).text) + "]";
  }
  return text;
}

// Code-point arithmetic for the content cap (4096 code points by default). A surrogate pair counts as
// one code point and is never split; a lone surrogate counts as one code point.
// docs/contract.md: rule 12 — content cap.

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * The UTF-16 index just past the first `maxCodePoints` code points of `text`,
 * or `text.length` when it has no more than that. Work is O(maxCodePoints).
 */
function codePointBoundary(text: string, maxCodePoints: number): number {
  const length = text.length;
  if (length <= maxCodePoints) return length;
  // Fast path: with no surrogate among the first maxCodePoints units, units are code points.
  if (RegExpPrototypeExec(SURROGATE, StringPrototypeSlice(text, 0, maxCodePoints)) === null) return maxCodePoints;
  let index = 0;
  let codePoints = 0;
  while (index < length && codePoints < maxCodePoints) {
    const unit = StringPrototypeCharCodeAt(text, index);
    const pairs = unit >= 0xd800 && unit <= 0xdbff && index + 1 < length && isLowSurrogate(StringPrototypeCharCodeAt(text, index + 1));
    index += pairs ? 2 : 1;
    codePoints += 1;
  }
  return index;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** `text` cut to at most `maxCodePoints` code points, and whether anything was cut. */
export function cutToCodePoints(text: string, maxCodePoints: number): { text: string; cut: boolean } {
  const end = codePointBoundary(text, maxCodePoints);
  return end === text.length ? { text, cut: false } : { text: StringPrototypeSlice(text, 0, end), cut: true };
}

const MARKER_CODE_POINTS = Limits.TRUNCATION_MARKER.length; // the marker is ASCII

/**
 * The final content rule: at most `maxCodePoints` (4096 by default); when the text is longer,
 * or when something was already cut on the way (`alreadyCut`), exactly `maxCodePoints` code
 * points ending with the single truncation marker.
 */
export function capContent(text: string, alreadyCut: boolean, maxCodePoints: number = Limits.MAX_CONTENT_CODE_POINTS): string {
  if (!alreadyCut && codePointBoundary(text, maxCodePoints) === text.length) return text;
  const keep = codePointBoundary(text, maxCodePoints - MARKER_CODE_POINTS);
  return StringPrototypeSlice(text, 0, keep) + Limits.TRUNCATION_MARKER;
}
