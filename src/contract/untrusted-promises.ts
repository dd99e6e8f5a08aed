// Waiting for what untrusted code returned (a tool's execute, a validator, a hook, a listener):
// the one way toolgate subscribes to a promise it did not make.
// `Promise.prototype.then` looks up the promise's species (its `constructor`, then
// `[Symbol.species]`) and constructs the derived promise with it, before it registers anything:
// a throwing `constructor` getter, or a subclass whose constructor wants other arguments,
// throws out of `then` itself. So does `Promise.resolve(x)` and `await x` (they read
// `x.constructor`). A native promise is subscribed to here, through the captured `then`, and
// such a throw becomes its rejection; nothing else reads the value.
// docs/contract.md: rule 8 — abort wins (while awaiting execute), rule 9 — failure classification.
import { readDataProperty } from "./failure.js";
import {
  ArrayPrototype,
  FunctionPrototype,
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
  // without a descriptor (hasOwn allocates nothing); anything else walks the chain.
  if (ObjectGetPrototypeOf(value) === ObjectPrototype && !ObjectHasOwn(value, "then") && !ObjectHasOwn(ObjectPrototype, "then")) {
    return undefined;
  }
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
