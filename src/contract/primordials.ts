// Built-ins captured once, at module load, before any tool or caller code runs.
// Everything toolgate does to untrusted values goes through these, called via
// Reflect.apply, so a later patch of a prototype (Map.prototype.entries,
// Function.prototype.call, Array.prototype.push, JSON.stringify, ...) cannot
// redirect the boundary. This is the habit of Node's own lib/ ("primordials").
// docs/contract.md: rule 10 — safe serialization (and rules 1, 2 and 8: "How the code keeps the rules").
import { types } from "node:util";

export const ReflectApply = Reflect.apply;

function getterOf<T, R>(proto: object, name: PropertyKey): (self: T) => R {
  const descriptor = Reflect.getOwnPropertyDescriptor(proto, name);
  const get = descriptor?.get;
  if (typeof get !== "function") throw new Error(`toolgate: missing intrinsic getter ${String(name)}`);
  return (self) => ReflectApply(get, self, []) as R;
}

export const ObjectCreate = Object.create;
export const ObjectDefineProperty = Object.defineProperty;
export const ObjectFreeze = Object.freeze;
export const ObjectGetOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
export const ObjectGetOwnPropertyNames = Object.getOwnPropertyNames;
export const ObjectGetOwnPropertySymbols = Object.getOwnPropertySymbols;
export const ObjectGetPrototypeOf = Object.getPrototypeOf;
export const ObjectKeys = Object.keys;
export const ObjectPrototype = Object.prototype;
export const ObjectHasOwn = Object.hasOwn;
export const ObjectIsExtensible = Object.isExtensible;
export const ReflectOwnKeys = Reflect.ownKeys;
// Annex B's __lookupGetter__: for an own data property it returns undefined without allocating
// a descriptor (an array element's descriptor read costs twice as much on Node 20).
const lookupGetter = (Object.prototype as unknown as { __lookupGetter__: (key: PropertyKey) => unknown }).__lookupGetter__;
export const ObjectPrototypeLookupGetter = (self: object, key: PropertyKey): unknown => ReflectApply(lookupGetter, self, [key]);
const lookupSetter = (Object.prototype as unknown as { __lookupSetter__: (key: PropertyKey) => unknown }).__lookupSetter__;
export const ObjectPrototypeLookupSetter = (self: object, key: PropertyKey): unknown => ReflectApply(lookupSetter, self, [key]);

export const ArrayIsArray = Array.isArray;
export const ArrayPrototype = Array.prototype;
export const FunctionPrototype = Function.prototype;
// Fixed-arity wrappers (no rest parameters): they sit on hot paths.
const sort = Array.prototype.sort;
export const ArrayPrototypeSort = (self: string[]): string[] => ReflectApply(sort, self, []);
const includes = Array.prototype.includes;
export const ArrayPrototypeIncludes = <T>(self: readonly T[], value: T): boolean => ReflectApply(includes, self, [value]);
const join = Array.prototype.join;
export const ArrayPrototypeJoin = (self: readonly string[], separator: string): string => ReflectApply(join, self, [separator]);

const charCodeAt = String.prototype.charCodeAt;
export const StringPrototypeCharCodeAt = (self: string, index: number): number => ReflectApply(charCodeAt, self, [index]);
const slice = String.prototype.slice;
export const StringPrototypeSlice = (self: string, start: number, end: number): string => ReflectApply(slice, self, [start, end]);
const toWellFormed = String.prototype.toWellFormed;
export const StringPrototypeToWellFormed = (self: string): string => ReflectApply(toWellFormed, self, []);
const toLowerCase = String.prototype.toLowerCase;
export const StringPrototypeToLowerCase = (self: string): string => ReflectApply(toLowerCase, self, []);
export const NumberIsFinite = Number.isFinite;
export const NumberIsInteger = Number.isInteger;
export const NumberIsSafeInteger = Number.isSafeInteger;
export const NumberPositiveInfinity = Number.POSITIVE_INFINITY;
const bigIntToString = BigInt.prototype.toString;
export const BigIntPrototypeToString = (self: bigint): string => ReflectApply(bigIntToString, self, []);
export const DatePrototype = Date.prototype;
const getTime = Date.prototype.getTime;
export const DatePrototypeGetTime = (self: Date): number => ReflectApply(getTime, self, []);
const toISOString = Date.prototype.toISOString;
export const DatePrototypeToISOString = (self: Date): string => ReflectApply(toISOString, self, []);

const exec = RegExp.prototype.exec;
export const RegExpPrototypeExec = (self: RegExp, text: string): RegExpExecArray | null => ReflectApply(exec, self, [text]);

export const JSONStringify = JSON.stringify as (value: unknown) => string;
export const JSONParse = JSON.parse as (text: string) => unknown;

export const MapPrototype = Map.prototype;
const mapGet = Map.prototype.get;
export const MapPrototypeGet = <K, V>(self: Map<K, V>, key: K): V | undefined => ReflectApply(mapGet, self, [key]);
const mapSet = Map.prototype.set;
export const MapPrototypeSet = <K, V>(self: Map<K, V>, key: K, value: V): Map<K, V> => ReflectApply(mapSet, self, [key, value]);
const mapDelete = Map.prototype.delete;
export const MapPrototypeDelete = <K, V>(self: Map<K, V>, key: K): boolean => ReflectApply(mapDelete, self, [key]);
const mapHas = Map.prototype.has;
export const MapPrototypeHas = <K, V>(self: Map<K, V>, key: K): boolean => ReflectApply(mapHas, self, [key]);
const mapClear = Map.prototype.clear;
export const MapPrototypeClear = (self: Map<unknown, unknown>): void => ReflectApply(mapClear, self, []);
export const MapPrototypeGetSize = getterOf<Map<unknown, unknown>, number>(Map.prototype, "size");
const MapPrototypeEntriesMethod = Map.prototype.entries;
const MapPrototypeKeysMethod = Map.prototype.keys;
const MapIteratorNext = ObjectGetPrototypeOf(new Map().entries()).next as () => IteratorResult<unknown>;
export const SetPrototype = Set.prototype;
const setAdd = Set.prototype.add;
export const SetPrototypeAdd = <T>(self: Set<T>, value: T): Set<T> => ReflectApply(setAdd, self, [value]);
const setDelete = Set.prototype.delete;
export const SetPrototypeDelete = <T>(self: Set<T>, value: T): boolean => ReflectApply(setDelete, self, [value]);
const setHas = Set.prototype.has;
export const SetPrototypeHas = <T>(self: Set<T>, value: T): boolean => ReflectApply(setHas, self, [value]);
export const SetPrototypeGetSize = getterOf<Set<unknown>, number>(Set.prototype, "size");
const SetPrototypeValuesMethod = Set.prototype.values;
const SetIteratorNext = ObjectGetPrototypeOf(new Set().values()).next as () => IteratorResult<unknown>;

/**
 * A stepper over a Map's entries through the intrinsic iterator: neither the
 * instance's own `entries`/`next` nor a patched Map.prototype is consulted.
 */
export function mapEntryStepper<K, V>(map: Map<K, V>): () => IteratorResult<[K, V]> {
  const iterator = ReflectApply(MapPrototypeEntriesMethod, map, []);
  return () => ReflectApply(MapIteratorNext, iterator, []) as IteratorResult<[K, V]>;
}

/** A stepper over a Map's keys through the intrinsic iterator. */
export function mapKeyStepper<K>(map: Map<K, unknown>): () => IteratorResult<K> {
  const iterator = ReflectApply(MapPrototypeKeysMethod, map, []);
  return () => ReflectApply(MapIteratorNext, iterator, []) as IteratorResult<K>;
}

/** A stepper over a Set's values through the intrinsic iterator. */
export function setValueStepper<T>(set: Set<T>): () => IteratorResult<T> {
  const iterator = ReflectApply(SetPrototypeValuesMethod, set, []);
  return () => ReflectApply(SetIteratorNext, iterator, []) as IteratorResult<T>;
}

const weakMapGet = WeakMap.prototype.get;
export const WeakMapPrototypeGet = <K extends object, V>(self: WeakMap<K, V>, key: K): V | undefined =>
  ReflectApply(weakMapGet, self, [key]);
const weakMapSet = WeakMap.prototype.set;
export const WeakMapPrototypeSet = <K extends object, V>(self: WeakMap<K, V>, key: K, value: V): WeakMap<K, V> =>
  ReflectApply(weakMapSet, self, [key, value]);
const weakSetAdd = WeakSet.prototype.add;
export const WeakSetPrototypeAdd = <T extends object>(self: WeakSet<T>, value: T): WeakSet<T> => ReflectApply(weakSetAdd, self, [value]);
const weakSetHas = WeakSet.prototype.has;
export const WeakSetPrototypeHas = <T extends object>(self: WeakSet<T>, value: T): boolean => ReflectApply(weakSetHas, self, [value]);

const then = Promise.prototype.then;
export const PromisePrototypeThen = <T>(
  self: Promise<T>,
  onFulfilled: ((value: T) => unknown) | undefined,
  onRejected?: (reason: unknown) => unknown,
): Promise<unknown> => ReflectApply(then, self, [onFulfilled, onRejected]);
/** The realm's own Promise constructor, captured at load (`new NativePromise(...)` never reads a replaced global). */
export const NativePromise = Promise;
const promiseResolve = Promise.resolve;
const promiseReject = Promise.reject;
/** `Promise.resolve(value)` through the captured static (a patched `Promise.resolve` is not consulted). */
export const PromiseResolve = <T>(value: T): Promise<Awaited<T>> => ReflectApply(promiseResolve, Promise, [value]) as Promise<Awaited<T>>;
/** `Promise.reject(reason)` through the captured static. */
export const PromiseReject = (reason: unknown): Promise<never> => ReflectApply(promiseReject, Promise, [reason]) as Promise<never>;

// Timers, captured at load: a tool module that replaces the globals (or patches
// Timeout.prototype) when it loads cannot switch off a timeout, a grace period or its own
// setup() timer. Node's timer functions need no receiver.
export const SetTimeout = setTimeout;
export const ClearTimeout = clearTimeout;
export const SetInterval = setInterval;
export const ClearInterval = clearInterval;
export const SetImmediate = setImmediate;
export const ClearImmediate = clearImmediate;
export const QueueMicrotask = queueMicrotask;
const timerProbe = SetTimeout(() => {}, 0);
const timeoutPrototype = ObjectGetPrototypeOf(timerProbe) as { unref: () => unknown; refresh: () => unknown };
ClearTimeout(timerProbe);
const timeoutUnref = timeoutPrototype.unref;
const timeoutRefresh = timeoutPrototype.refresh;
/** A timer made by `SetTimeout`. */
export type TimerHandle = NodeJS.Timeout;
/** `timer.unref()` through Timeout.prototype's own method, captured at load. */
export const TimeoutPrototypeUnref = (self: TimerHandle): void => {
  ReflectApply(timeoutUnref, self, []);
};
/** `timer.refresh()` through Timeout.prototype's own method, captured at load. */
export const TimeoutPrototypeRefresh = (self: TimerHandle): void => {
  ReflectApply(timeoutRefresh, self, []);
};

/** The realm's own DOMException, captured at load (abort and timeout reasons never come from a replaced global). */
export const NativeDOMException = DOMException;
/** The type of a DOMException, for modules where the global's name is not used (it may be replaced). */
export type DOMExceptionInstance = DOMException;

/** The realm's own AbortController, captured at load (a tool module that replaces the global later is not consulted). */
export const NativeAbortController = AbortController;
/** The type of an AbortController, for modules where the global's name is not used. */
export type AbortControllerInstance = AbortController;
const abort = AbortController.prototype.abort;
export const AbortControllerPrototypeAbort = (self: AbortController, reason: unknown): void => ReflectApply(abort, self, [reason]);
export const AbortControllerPrototypeGetSignal = getterOf<AbortController, AbortSignal>(AbortController.prototype, "signal");
export const DOMExceptionPrototype = DOMException.prototype;
export const DOMExceptionPrototypeGetName = getterOf<DOMException, string>(DOMException.prototype, "name");
export const DOMExceptionPrototypeGetMessage = getterOf<DOMException, string>(DOMException.prototype, "message");
export const AbortSignalPrototype = AbortSignal.prototype;
export const AbortSignalPrototypeGetAborted = getterOf<AbortSignal, boolean>(AbortSignal.prototype, "aborted");
export const AbortSignalPrototypeGetReason = getterOf<AbortSignal, unknown>(AbortSignal.prototype, "reason");
export const EventTargetPrototype = EventTarget.prototype;
const addEventListener = EventTarget.prototype.addEventListener;
export const EventTargetPrototypeAddEventListener = (self: EventTarget, type: string, listener: () => void): void =>
  ReflectApply(addEventListener, self, [type, listener]);

// %TypedArray%.prototype, which every typed array inherits from: its getters and `set` taken
// from there, so a patched Uint8Array.prototype or a subclass's own `length` chooses nothing.
export const TypedArrayPrototype = ObjectGetPrototypeOf(Uint8Array.prototype) as object;
export const TypedArrayPrototypeGetLength = getterOf<Uint8Array, number>(TypedArrayPrototype, "length");
export const TypedArrayPrototypeGetBuffer = getterOf<Uint8Array, ArrayBuffer>(TypedArrayPrototype, "buffer");
const typedArraySet = (ObjectGetOwnPropertyDescriptor(TypedArrayPrototype, "set") as PropertyDescriptor).value as (
  source: ArrayLike<number>,
) => void;
export const TypedArrayPrototypeSet = (self: Uint8Array, source: ArrayLike<number>): void => ReflectApply(typedArraySet, self, [source]);
export const NativeUint8Array = Uint8Array;

// Bound at load, through the captured bind: a patched performance.now (or Function.prototype.bind,
// when a module of toolgate loads after a tool module patched it) cannot skew or throw into a timing.
const bind = Function.prototype.bind;
export const PerformanceNow: () => number = ReflectApply(bind, performance.now, [performance]);

export const ErrorPrototype = Error.prototype;
/** The realm's `structuredClone`, captured at load. */
export const StructuredClone = structuredClone;

export const isProxy = types.isProxy;
export const isArrayBufferView = types.isArrayBufferView;
export const isBoxedPrimitive = types.isBoxedPrimitive;
export const isPromise = types.isPromise;
export const isNativeError = types.isNativeError;
export const isDate = types.isDate;
export const isMap = types.isMap;
export const isSet = types.isSet;
export const isWeakSet = types.isWeakSet;
export const isUint8Array = types.isUint8Array;

export const SymbolFor = Symbol.for;
export const globalThisRef = globalThis;
export const EncodeURIComponent = encodeURIComponent;
