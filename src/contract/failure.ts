// Turning whatever a validator or tool threw (or rejected with) into a readable message.
// Never throws and never runs code supplied by the value: no getters, toString, toJSON or traps.
// docs/contract.md: rule 9 — failure classification.
import { COURSE_TOOL_MAX_STRING_CODE_POINTS } from "./constants.js";
import { cutToCodePoints } from "./content.js";
import {
  type DOMExceptionInstance,
  DOMExceptionPrototype,
  DOMExceptionPrototypeGetMessage,
  DOMExceptionPrototypeGetName,
  ErrorPrototype,
  isNativeError,
  isProxy,
  ObjectGetOwnPropertyDescriptor,
  ObjectGetPrototypeOf,
  ObjectHasOwn,
  ObjectPrototypeLookupGetter,
  ObjectPrototypeLookupSetter,
} from "./primordials.js";
import { renderValue } from "./serialize.js";

/** A failure's message, and whether it was cut to the string budget. */
export interface FailureText {
  readonly text: string;
  readonly cut: boolean;
}

const MAX_PROTOTYPE_HOPS = 32;

/** A readable, bounded description of a thrown or rejected value. */
export function describeFailure(value: unknown): FailureText {
  switch (typeof value) {
    case "string":
      return cutToCodePoints(value, COURSE_TOOL_MAX_STRING_CODE_POINTS);
    case "object":
      if (value === null) return { text: "null", cut: false };
      if (isProxy(value)) return { text: "a Proxy was thrown", cut: false };
      return describeErrorLike(value);
    case "function":
      return { text: "a function was thrown", cut: false };
    case "symbol":
      return { text: String(value), cut: false }; // String(symbol) is an intrinsic, not Symbol.prototype.toString
    default:
      return { text: String(value), cut: false }; // undefined, number, bigint, boolean
  }
}

/**
 * An object, by what it is. A DOMException first: since Node 22 it is also a native error
 * (made by the Error constructor, so Error.isError and util.types.isNativeError see it), but
 * its name and message are not data properties, so the error reading would see only "Error".
 * Its brand is checked only when it inherits DOMException.prototype (a failed check throws,
 * and building that TypeError costs microseconds every ordinary error would pay).
 * An error rebuilt from another realm (a worker's error as Node deserializes it) is not a
 * native error but still descends from this realm's Error.prototype: described as an error.
 */
function describeErrorLike(value: object): FailureText {
  const ancestry = errorAncestry(value);
  if (ancestry === INHERITS_DOM_EXCEPTION) {
    const described = describeDOMException(value);
    if (described !== undefined) return described;
  }
  return ancestry !== INHERITS_NOTHING || isNativeError(value) ? describeError(value) : describeObject(value);
}

const INHERITS_NOTHING = 0;
const INHERITS_ERROR = 1;
const INHERITS_DOM_EXCEPTION = 2;

/** Whether DOMException.prototype (which inherits Error.prototype) or Error.prototype is on the chain; stops at a Proxy. */
function errorAncestry(value: object): number {
  let current: object | null = ObjectGetPrototypeOf(value) as object | null;
  for (let hops = 0; current !== null && hops < MAX_PROTOTYPE_HOPS; hops += 1) {
    if (current === DOMExceptionPrototype) return INHERITS_DOM_EXCEPTION;
    if (current === ErrorPrototype) return INHERITS_ERROR;
    if (isProxy(current)) return INHERITS_NOTHING;
    current = ObjectGetPrototypeOf(current) as object | null;
  }
  return INHERITS_NOTHING;
}

/**
 * The error's name: its `name` data property, or, when that is only the inherited "Error",
 * the name of its class (`class QuotaError extends Error {}`). Data properties only.
 */
function errorName(error: object): unknown {
  const name = readDataProperty(error, "name");
  if (name !== "Error") return name;
  const errorClass = readDataProperty(error, "constructor");
  if (typeof errorClass !== "function" || isProxy(errorClass)) return name;
  const className = readDataProperty(errorClass, "name");
  return typeof className === "string" && className.length > 0 ? className : name;
}

/** "TypeError: message" for a genuine error; plain "message" when the name is just "Error". */
function describeError(error: object): FailureText {
  const name = errorName(error);
  const message = readDataProperty(error, "message");
  const text = typeof message === "string" ? message : "";
  if (typeof name !== "string" || name === "Error" || name.length === 0) {
    return text.length > 0 ? cutToCodePoints(text, COURSE_TOOL_MAX_STRING_CODE_POINTS) : { text: "Error", cut: false };
  }
  return cutToCodePoints(text.length > 0 ? name + ": " + text : name, COURSE_TOOL_MAX_STRING_CODE_POINTS);
}

/**
 * A genuine DOMException (AbortError, TimeoutError, DataCloneError, ...): its name and
 * message are intrinsic getters that brand-check the receiver, so calling them runs no
 * code of the value's. Anything else makes the brand check throw: undefined.
 */
function describeDOMException(value: object): FailureText | undefined {
  let name: string;
  let message: string;
  try {
    name = DOMExceptionPrototypeGetName(value as DOMExceptionInstance);
    message = DOMExceptionPrototypeGetMessage(value as DOMExceptionInstance);
  } catch {
    return undefined;
  }
  return cutToCodePoints(message.length > 0 ? name + ": " + message : name, COURSE_TOOL_MAX_STRING_CODE_POINTS);
}

/** Anything else (a look-alike error, a validator's details object) is shown as its safe JSON. */
function describeObject(value: object): FailureText {
  const rendering = renderValue(value);
  if (rendering.ok) return { text: rendering.text, cut: rendering.cut };
  return { text: "a value that cannot be described (" + rendering.message + ")", cut: false };
}

/** An own data property's value; undefined when absent, an accessor (never called), or on a Proxy. */
export function readOwnDataProperty(object: object, key: string): unknown {
  return isProxy(object) ? undefined : ownDataOr(object, key, undefined);
}

/**
 * An own data property's value, or `absent` when the key is not own or is an accessor; no
 * getter ever runs. `object` must not be a Proxy. Cheaper than a descriptor read (it
 * allocates nothing): an own key whose getter lookup finds none is read directly, and a
 * setter-only accessor, which reads as undefined without running anything, is told apart
 * by its setter.
 */
export function ownDataOr<T>(object: object, key: string, absent: T): unknown {
  if (!ObjectHasOwn(object, key) || ObjectPrototypeLookupGetter(object, key) !== undefined) return absent;
  const value = (object as Record<string, unknown>)[key];
  return value === undefined && ObjectPrototypeLookupSetter(object, key) !== undefined ? absent : value;
}

/** A data property found on the object or its prototypes; stops at accessors and Proxies. */
export function readDataProperty(object: object, key: string): unknown {
  let current: object | null = object;
  for (let hops = 0; current !== null && hops < MAX_PROTOTYPE_HOPS; hops += 1) {
    if (isProxy(current)) return undefined;
    const descriptor = ObjectGetOwnPropertyDescriptor(current, key);
    if (descriptor !== undefined) return ObjectHasOwn(descriptor, "value") ? descriptor.value : undefined;
    current = ObjectGetPrototypeOf(current) as object | null;
  }
  return undefined;
}
