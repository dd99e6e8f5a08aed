// The call snapshot: an untrusted tool call becomes an isolated, deeply frozen copy made of
// own data properties read exactly once, or a ToolContractError(INVALID_TOOL_CALL).
import { COURSE_TOOL_INVALID_TOOL_CALL, COURSE_TOOL_MAX_ARGUMENT_DEPTH } from "./constants.js";
import { ToolContractError } from "./errors.js";
import {
  ArrayIsArray,
  ArrayPrototype,
  isArrayBufferView,
  isBoxedPrimitive,
  isProxy,
  NumberIsFinite,
  ObjectDefineProperty,
  ObjectFreeze,
  ObjectGetOwnPropertyDescriptor,
  ObjectGetPrototypeOf,
  ObjectHasOwn,
  ObjectPrototype,
  ReflectOwnKeys,
} from "./primordials.js";

/** A JSON value: what a model can put in a tool call's arguments. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A normalized tool call, as the model layer hands it over. */
export interface CourseToolCall {
  type: "toolCall";
  /** Provider-assigned id; every result and event of this call carries it. */
  id: string;
  /** The registered tool's name. */
  name: string;
  arguments: Record<string, JsonValue>;
}

/**
 * Takes the isolated, deeply frozen snapshot of an untrusted call. Throws
 * ToolContractError(INVALID_TOOL_CALL) for anything that is not a well-formed call:
 * wrong shape, accessors, Proxies, non-JSON arguments, an empty id or name.
 */
export function snapshotToolCall(call: unknown): Readonly<CourseToolCall> {
  if (!isPlainRecord(call)) invalid("the call must be a plain object (not a Proxy, array or class instance)");
  const type = readOwnData(call, "type");
  if (type !== "toolCall") invalid('call.type must be "toolCall"');
  const id = readOwnData(call, "id");
  if (typeof id !== "string" || id.length === 0) invalid("call.id must be a non-empty string");
  const name = readOwnData(call, "name");
  if (typeof name !== "string" || name.length === 0) invalid("call.name must be a non-empty string");
  const args = readOwnData(call, "arguments");
  if (!isPlainRecord(args)) invalid("call.arguments must be a plain JSON object");
  return ObjectFreeze({
    type: "toolCall",
    id,
    name,
    arguments: snapshotJson(args, 0, [], [], "arguments") as Record<string, JsonValue>,
  });
}

function invalid(message: string): never {
  throw new ToolContractError(COURSE_TOOL_INVALID_TOOL_CALL, message);
}

function isPlainRecord(value: unknown): value is object {
  if (typeof value !== "object" || value === null || isProxy(value) || ArrayIsArray(value)) return false;
  const prototype: unknown = ObjectGetPrototypeOf(value);
  return prototype === ObjectPrototype || prototype === null;
}

/** Reads an own data property once; an accessor or a missing property is a malformed call. */
function readOwnData(record: object, key: string): unknown {
  const descriptor = ObjectGetOwnPropertyDescriptor(record, key);
  if (descriptor === undefined) invalid(`call.${key} is missing (it must be an own property)`);
  if (!ObjectHasOwn(descriptor, "value")) invalid(`call.${key} is an accessor; only data properties are read`);
  return descriptor.value;
}

/**
 * Deep copy of a JSON value into fresh frozen objects; anything else is refused. `trail`
 * holds the keys leading here, so an error message can name the path without building a
 * path string for every member of every call.
 */
function snapshotJson(value: unknown, depth: number, ancestors: object[], trail: (string | number)[], root: string): unknown {
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (!NumberIsFinite(value)) invalidAt(root, trail, depth, "is not a finite number");
      return value;
    case "object":
      if (value === null) return value;
      break;
    default:
      invalidAt(root, trail, depth, `is a ${typeof value}, which is not JSON`);
  }
  if (isProxy(value)) invalidAt(root, trail, depth, "is a Proxy");
  if (depth >= COURSE_TOOL_MAX_ARGUMENT_DEPTH) invalidAt(root, trail, depth, `nests deeper than ${COURSE_TOOL_MAX_ARGUMENT_DEPTH} levels`);
  for (let index = 0; index < depth; index += 1) {
    if (ancestors[index] === value) invalidAt(root, trail, depth, "is circular");
  }
  ancestors[depth] = value;
  const prototype: unknown = ObjectGetPrototypeOf(value);
  if (ArrayIsArray(value)) {
    if (prototype !== ArrayPrototype) invalidAt(root, trail, depth, "is an array with an unusual prototype");
    return snapshotArray(value, depth, ancestors, trail, root);
  }
  // A typed array or boxed primitive with a swapped prototype is no JSON object (and a typed
  // array would be copied index by index).
  if ((prototype !== ObjectPrototype && prototype !== null) || isArrayBufferView(value) || isBoxedPrimitive(value)) {
    invalidAt(root, trail, depth, "is not a plain object");
  }
  return snapshotObject(value, depth, ancestors, trail, root);
}

function snapshotArray(array: unknown[], depth: number, ancestors: object[], trail: (string | number)[], root: string): readonly unknown[] {
  const length = array.length;
  if (ReflectOwnKeys(array).length !== length + 1) invalidAt(root, trail, depth, "is sparse or has non-index properties");
  const copy: unknown[] = [];
  for (let index = 0; index < length; index += 1) {
    trail[depth] = index;
    const descriptor = ObjectGetOwnPropertyDescriptor(array, index);
    if (descriptor === undefined || !ObjectHasOwn(descriptor, "value")) invalidAt(root, trail, depth + 1, "is a hole or an accessor");
    setOwn(copy, index, snapshotJson(descriptor.value, depth + 1, ancestors, trail, root));
  }
  return ObjectFreeze(copy);
}

function snapshotObject(
  record: object,
  depth: number,
  ancestors: object[],
  trail: (string | number)[],
  root: string,
): Readonly<Record<string, unknown>> {
  const keys = ReflectOwnKeys(record);
  const copy: Record<string, unknown> = {};
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index];
    if (typeof key !== "string") invalidAt(root, trail, depth, "has a symbol key");
    trail[depth] = key;
    const descriptor = ObjectGetOwnPropertyDescriptor(record, key);
    if (descriptor === undefined || !ObjectHasOwn(descriptor, "value")) invalidAt(root, trail, depth + 1, "is an accessor");
    if (descriptor.enumerable !== true) invalidAt(root, trail, depth + 1, "is not enumerable");
    setOwn(copy, key, snapshotJson(descriptor.value, depth + 1, ancestors, trail, root));
  }
  return ObjectFreeze(copy);
}

/**
 * Adds an own data property to a fresh copy. Plain assignment is several times faster than
 * defineProperty, and safe unless the key exists up the prototype chain ("__proto__", a
 * setter someone put on Object.prototype or Array.prototype): those keys are defined instead,
 * so they stay ordinary keys and no inherited setter ever sees the copy.
 */
function setOwn(copy: object, key: string | number, value: unknown): void {
  if (key in ObjectGetPrototypeOf(copy)) {
    ObjectDefineProperty(copy, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    (copy as Record<string | number, unknown>)[key] = value;
  }
}

function invalidAt(root: string, trail: readonly (string | number)[], depth: number, problem: string): never {
  let path = root;
  for (let index = 0; index < depth; index += 1) {
    const key = trail[index] as string | number;
    path += typeof key === "number" ? `[${key}]` : `.${key}`;
  }
  invalid(`${path} ${problem}`);
}
