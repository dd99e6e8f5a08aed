// Values that untrusted code (a tool, a validator, a hook, a listener) threw or returned: read
// without running their code, described as a bounded message, awaited without trusting them.
//
// Turning whatever a validator or tool threw (or rejected with) into a readable message.
// Never throws and never runs code supplied by the value: no getters, toString, toJSON or traps.
// docs/contract.md: rule 9 — failure classification.
import { Limits } from "./constants.js";
import {
  ArrayPrototype,
  type DOMExceptionInstance,
  DOMExceptionPrototype,
  DOMExceptionPrototypeGetMessage,
  DOMExceptionPrototypeGetName,
  ErrorPrototype,
  FunctionPrototype,
  isNativeError,
  isPromise,
  isProxy,
  NativePromise,
  ObjectGetOwnPropertyDescriptor,
  ObjectGetPrototypeOf,
  ObjectHasOwn,
  ObjectPrototype,
  PromisePrototypeThen,
  ReflectApply,
} from "./primordials.js";
import { cutToCodePoints, renderValue } from "./serialize.js";

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
      return cutToCodePoints(value, Limits.MAX_STRING_CODE_POINTS);
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
    return text.length > 0 ? cutToCodePoints(text, Limits.MAX_STRING_CODE_POINTS) : { text: "Error", cut: false };
  }
  return cutToCodePoints(text.length > 0 ? name + ": " + text : name, Limits.MAX_STRING_CODE_POINTS);
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
  return cutToCodePoints(message.length > 0 ? name + ": " + message : name, Limits.MAX_STRING_CODE_POINTS);
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
 * getter ever runs. `object` must not be a Proxy (its descriptor trap would run). One
 * descriptor read, whose own `value` is there only for a data property (V8 makes the
 * descriptor with its own fields: nothing on Object.prototype is read). Counted by callgrind
 * on Node 20, GC included, for a key that may be absent, it costs three quarters of an
 * own-key check, a getter lookup and a read (each lookup a call into the runtime; the
 * descriptor's allocation is cheaper than that).
 */
export function ownDataOr<T>(object: object, key: string, absent: T): unknown {
  const descriptor = ObjectGetOwnPropertyDescriptor(object, key);
  return descriptor !== undefined && ObjectHasOwn(descriptor, "value") ? descriptor.value : absent;
}

/** A data property found on the object or its prototypes; stops at accessors and Proxies. */
export function readDataProperty(object: object, key: string): unknown {
  return isPlainObject(object) ? readPlainDataProperty(object, key) : readInheritedData(object, key);
}

/** Not a Proxy, and Object.prototype is its prototype: `readPlainDataProperty` reads it. */
export function isPlainObject(object: object): boolean {
  return !isProxy(object) && ObjectGetPrototypeOf(object) === ObjectPrototype;
}

/**
 * `readDataProperty` of an object `isPlainObject` accepted (checked once for several keys).
 * `in` looks at the object and Object.prototype alone (no Proxy on that chain: nothing runs), so
 * an absent key costs one lookup; when Object.prototype has no such key, only an own data
 * property can hold the value: read without a descriptor.
 */
export function readPlainDataProperty(object: object, key: string): unknown {
  if (!(key in object)) return undefined;
  return ObjectHasOwn(ObjectPrototype, key) ? readInheritedData(object, key) : ownDataOr(object, key, undefined);
}

/** The walk up the chain: the first own property named `key` decides (its value if data). */
function readInheritedData(object: object, key: string): unknown {
  let current: object | null = object;
  for (let hops = 0; current !== null && hops < MAX_PROTOTYPE_HOPS; hops += 1) {
    if (isProxy(current)) return undefined;
    const descriptor = ObjectGetOwnPropertyDescriptor(current, key);
    if (descriptor !== undefined) return ObjectHasOwn(descriptor, "value") ? descriptor.value : undefined;
    current = ObjectGetPrototypeOf(current) as object | null;
  }
  return undefined;
}

// Waiting for what untrusted code returned (a tool's execute, a validator, a hook, a listener):
// the one way toolgate subscribes to a promise it did not make.
// `Promise.prototype.then` looks up the promise's species (its `constructor`, then
// `[Symbol.species]`) and constructs the derived promise with it, before it registers anything:
// a throwing `constructor` getter, or a subclass whose constructor wants other arguments,
// throws out of `then` itself. So does `Promise.resolve(x)` and `await x` (they read
// `x.constructor`). A native promise is subscribed to here, through the captured `then`, and
// such a throw becomes its rejection; nothing else reads the value.
// docs/contract.md: rule 8 — abort wins (while awaiting execute), rule 9 — failure classification.

/**
 * Subscribes to `pending`, a promise untrusted code returned: exactly one of `onFulfilled`
 * and `onRejected` is called, later, or `onRejected` at once with what reading its species
 * threw (then `then` registered nothing, so nothing else is ever called). Never throws.
 * A promise whose species cannot be read can never be observed by any script: if it rejects,
 * that rejection stays its maker's (docs/contract.md, rule 9).
 */
export function whenSettled(
  pending: Promise<unknown>,
  onFulfilled: (value: unknown) => unknown,
  onRejected: (reason: unknown) => unknown,
): void {
  try {
    void PromisePrototypeThen(pending, onFulfilled, onRejected);
  } catch (error) {
    onRejected(error);
  }
}

/**
 * What untrusted code returned, when it is to be awaited: a native promise as it is (subscribe
 * to it only with `whenSettled`), a thenable (a callable `then` data property) adopted into a
 * promise of ours; undefined for anything else, including an object whose `then` is a getter
 * and a Proxy (never touched). A `then` found only on Object.prototype, Array.prototype or
 * Function.prototype is pollution, not a thenable: a plain value is never handed to it.
 */
export function untrustedPromise(value: unknown): Promise<unknown> | undefined {
  if ((typeof value !== "object" && typeof value !== "function") || value === null || isProxy(value)) return undefined;
  if (isPromise(value)) return value as Promise<unknown>;
  // The common case, a plain object with no `then` on it or on Object.prototype, is settled
  // without a descriptor (`in` on that chain runs nothing: no Proxy on it); anything else walks the chain.
  if (ObjectGetPrototypeOf(value) === ObjectPrototype && !("then" in value)) return undefined;
  const then = readDataProperty(value, "then");
  if (then !== undefined && isPlantedOnIntrinsic(value)) return undefined;
  if (typeof then !== "function") return undefined;
  // A throw from `then` rejects; a hostile promise it resolves with is adopted by the
  // resolve function, whose job turns a species throw into a rejection too.
  return new NativePromise((resolve, reject) => ReflectApply(then, value, [resolve, reject]));
}

/**
 * `untrustedPromise`, as a promise of ours (safe to subscribe to with the captured `then`):
 * for callers that are not on a hot path. Undefined when `value` is not awaited.
 */
export function asPromise(value: unknown): Promise<unknown> | undefined {
  const pending = untrustedPromise(value);
  if (pending === undefined || pending !== value) return pending; // undefined, or a thenable already adopted
  return new NativePromise((resolve, reject) => whenSettled(pending, resolve, reject));
}

/**
 * For a value an observer returned (a hook, a progress listener), which is never awaited: a
 * native promise's rejection goes to `onRejected` (never unhandled); anything else, a
 * thenable included, is not touched.
 */
export function observeRejection(value: unknown, onRejected: (reason: unknown) => unknown): void {
  if (isPromise(value)) whenSettled(value as Promise<unknown>, ignore, onRejected);
}

/** True when the `then` that `value` inherits comes from an intrinsic prototype (own or class ones are real). */
function isPlantedOnIntrinsic(value: object): boolean {
  let current: object | null = value;
  for (let hops = 0; current !== null && hops < 32; hops += 1) {
    if (ObjectGetOwnPropertyDescriptor(current, "then") !== undefined) {
      return current === ObjectPrototype || current === ArrayPrototype || current === FunctionPrototype;
    }
    current = ObjectGetPrototypeOf(current) as object | null;
  }
  return false;
}

function ignore(): void {}
