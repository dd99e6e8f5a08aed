// The one way toolgate reads an options object (an executor's, a call's, a batch's, hooks,
// budgets, the queue's and the host's, the adapters'), after the small validators of Node's
// lib/internal/validators.js: each checks one value and throws ToolContractError(INVALID_ARGUMENT)
// saying "name must be … (got …)". Only own data properties are read: an accessor is refused
// and never run, an inherited field is never consulted, a Proxy is refused before any trap can
// run, and an own key that is not a known option is refused (naming the option it is closest
// to), so a misspelt approval hook is an error rather than a gate that is silently absent.
// docs/operations.md — Options (how every options object is read).
import { ContractErrorCode, Limits } from "./constants.js";
import { ToolContractError } from "./errors.js";
import { describeValue } from "./grammar.js";
import {
  ArrayIsArray,
  ArrayPrototypeIncludes,
  ArrayPrototypeJoin,
  isProxy,
  JSONStringify,
  NumberIsSafeInteger,
  ObjectFreeze,
  ObjectGetOwnPropertyDescriptor,
  ObjectGetPrototypeOf,
  ObjectHasOwn,
  ObjectPrototype,
  ReflectOwnKeys,
  StringPrototypeCharCodeAt,
  StringPrototypeSlice,
  StringPrototypeToLowerCase,
} from "./primordials.js";

/**
 * The longest delay any option may ask for, in ms: 2^31 − 1. Node runs a timer of 2^31 ms
 * or more after 1 ms (with a warning), so a larger value would mean "at once", not "a long
 * time". Every timeout and delay option of every executor, the queue and the host uses it.
 */
export const MAX_DELAY_MS = Limits.MAX_TIMEOUT_MS;

/** Characters of an unknown key quoted in a message (a huge key is cut, not echoed). */
const MAX_QUOTED_KEY = 64;

/** Throws ToolContractError(INVALID_ARGUMENT) with `message`. */
export function invalidArgument(message: string): never {
  throw new ToolContractError(ContractErrorCode.INVALID_ARGUMENT, message);
}

/** `value` must be an object that is neither null, an array, a function nor a Proxy. */
export function validateObject(value: unknown, name: string): asserts value is object {
  if (typeof value !== "object" || value === null || isProxy(value) || ArrayIsArray(value)) {
    invalidArgument(`${name} must be an object (got ${describeValue(value)})`);
  }
}

/**
 * Every own key of `value` (strings and symbols, enumerable or not) must be one of `known`.
 * An unknown key is refused, naming it and, where it is close to a known one (a small edit
 * distance, or the same letters in another case), the one it probably means. `elsewhere`
 * maps a key that belongs to another options object to where it goes ("hooks.beforeExecute").
 */
export function validateOptionKeys(
  value: object,
  name: string,
  known: readonly string[],
  elsewhere?: { readonly [key: string]: string },
): void {
  const keys = ReflectOwnKeys(value);
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index] as string | symbol;
    if (typeof key === "string" && ArrayPrototypeIncludes(known, key)) continue;
    if (typeof key !== "string") invalidArgument(`${name} has a symbol key, which is not an option; ${knownList(known)}`);
    const moved = elsewhere !== undefined && ObjectHasOwn(elsewhere, key) ? elsewhere[key] : undefined;
    const suggestion = moved ?? closestKey(key, known);
    const hint = suggestion === undefined ? "" : ` (did you mean ${JSONStringify(suggestion)}?)`;
    invalidArgument(`${name} has an unknown option ${quoteKey(key)}${hint}; ${knownList(known)}`);
  }
}

/**
 * The value of an own data property (undefined when absent). An accessor is refused and
 * never run; nothing inherited is consulted.
 */
export function readOwnOption(value: object, key: string, name: string): unknown {
  const descriptor = ObjectGetOwnPropertyDescriptor(value, key);
  if (descriptor === undefined) return undefined;
  if (!ObjectHasOwn(descriptor, "value")) invalidArgument(`${name}.${key} must be a data property, not an accessor`);
  return descriptor.value;
}

/** What `readOptions` gives: each known option's own value (undefined when absent), in a null-prototype record. */
export type OptionValues<K extends string> = { readonly [key in K]: unknown };

/**
 * Reads an options object in one step: `validateObject`, `validateOptionKeys`, then each
 * known option as an own data property. The caller checks each value with the validators
 * below. Nothing of `value` is read again afterwards.
 */
export function readOptions<K extends string>(
  value: unknown,
  name: string,
  known: readonly K[],
  elsewhere?: { readonly [key: string]: string },
): OptionValues<K> {
  validateObject(value, name);
  validateOptionKeys(value, name, known, elsewhere);
  const values = { __proto__: null } as unknown as { [key in K]: unknown };
  for (let index = 0; index < known.length; index += 1) {
    const key = known[index] as K;
    values[key] = readOwnOption(value, key, name);
  }
  return ObjectFreeze(values);
}

/** The most links `prototypeChain` follows: a chain longer than this is refused, never cut short. */
export const MAX_PROTOTYPE_LINKS = 32;

/**
 * The objects an options object's inherited methods are read through (a class instance's
 * hooks): `value`, then each prototype, up to and without Object.prototype. A Proxy anywhere
 * on the chain is refused (INVALID_ARGUMENT) before any of its traps can run: a walk that
 * stopped there would silently miss a method beyond it (an approval hook absent, its call let
 * through). So is a chain of more than MAX_PROTOTYPE_LINKS links, rather than cut. `value` is
 * an object that validateObject accepted.
 */
export function prototypeChain(value: object, name: string): readonly object[] {
  const chain: object[] = [];
  let current: object | null = value;
  while (current !== null && current !== ObjectPrototype) {
    if (isProxy(current)) {
      invalidArgument(`${name} must have no Proxy on its prototype chain (got one ${chain.length} links up)`);
    }
    if (chain.length === MAX_PROTOTYPE_LINKS) invalidArgument(`${name} has a prototype chain longer than ${MAX_PROTOTYPE_LINKS} links`);
    chain[chain.length] = current;
    current = ObjectGetPrototypeOf(current) as object | null;
  }
  return chain;
}

/** `value` must be a safe integer from `min` to `max`. */
export function validateInteger(value: unknown, name: string, min: number, max: number): asserts value is number {
  if (typeof value !== "number" || !NumberIsSafeInteger(value) || value < min || value > max) {
    invalidArgument(`${name} must be an integer from ${min} to ${max} (got ${describeValue(value)})`);
  }
}

/** The bounds of an integer option, and its value when it is not given. */
export interface IntegerOption {
  readonly min: number;
  readonly max: number;
  readonly fallback: number;
}

/** An optional integer option: `fallback` when undefined, else `validateInteger` from `min` to `max`. */
export function integerOr(value: unknown, name: string, { min, max, fallback }: IntegerOption): number {
  if (value === undefined) return fallback;
  validateInteger(value, name, min, max);
  return value;
}

/** `value` must be a function that is not a Proxy. */
export function validateFunction(value: unknown, name: string): asserts value is (...args: never[]) => unknown {
  if (typeof value !== "function" || isProxy(value)) invalidArgument(`${name} must be a function (got ${describeValue(value)})`);
}

/** `value` must be `true` or `false`. */
export function validateBoolean(value: unknown, name: string): asserts value is boolean {
  if (typeof value !== "boolean") invalidArgument(`${name} must be a boolean (got ${describeValue(value)})`);
}

/** `value` must be one of `choices` (compared with ===). */
export function validateOneOf<T extends string | number | boolean>(
  value: unknown,
  name: string,
  choices: readonly T[],
): asserts value is T {
  for (let index = 0; index < choices.length; index += 1) if (value === choices[index]) return;
  const listed: string[] = [];
  for (let index = 0; index < choices.length; index += 1) listed[index] = JSONStringify(choices[index]);
  invalidArgument(`${name} must be one of ${ArrayPrototypeJoin(listed, ", ")} (got ${describeValue(value)})`);
}

/**
 * The known key `key` was probably meant to be: the same letters in another case, or the
 * closest within an edit distance of 1 (keys of up to 4 characters) or 2 (longer ones),
 * adjacent swaps counting as one edit. Undefined when none is that close.
 */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  const lowered = StringPrototypeToLowerCase(key);
  let best: string | undefined;
  let bestDistance = key.length <= 4 ? 1 : 2;
  for (let index = 0; index < known.length; index += 1) {
    const candidate = known[index] as string;
    if (StringPrototypeToLowerCase(candidate) === lowered) return candidate;
    // More than bestDistance apart in length means more than bestDistance edits: not computed,
    // so a huge key costs nothing.
    const gap = candidate.length - key.length;
    if (gap > bestDistance || -gap > bestDistance) continue;
    const distance = editDistance(key, candidate);
    if (distance < bestDistance || (distance === bestDistance && best === undefined)) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions), on UTF-16 code units. */
function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const columns = b.length + 1;
  const table: number[] = [];
  for (let i = 0; i < rows; i += 1) table[i * columns] = i;
  for (let j = 0; j < columns; j += 1) table[j] = j;
  for (let i = 1; i < rows; i += 1) {
    for (let j = 1; j < columns; j += 1) {
      const same = StringPrototypeCharCodeAt(a, i - 1) === StringPrototypeCharCodeAt(b, j - 1);
      let cost = (table[(i - 1) * columns + j - 1] as number) + (same ? 0 : 1);
      const deletion = (table[(i - 1) * columns + j] as number) + 1;
      const insertion = (table[i * columns + j - 1] as number) + 1;
      if (deletion < cost) cost = deletion;
      if (insertion < cost) cost = insertion;
      if (
        i > 1 &&
        j > 1 &&
        StringPrototypeCharCodeAt(a, i - 1) === StringPrototypeCharCodeAt(b, j - 2) &&
        StringPrototypeCharCodeAt(a, i - 2) === StringPrototypeCharCodeAt(b, j - 1)
      ) {
        const swap = (table[(i - 2) * columns + j - 2] as number) + 1;
        if (swap < cost) cost = swap;
      }
      table[i * columns + j] = cost;
    }
  }
  return table[rows * columns - 1] as number;
}

/** A key as a message quotes it: JSON, cut to 64 characters. */
export function quoteKey(key: string): string {
  return key.length > MAX_QUOTED_KEY ? `${JSONStringify(StringPrototypeSlice(key, 0, MAX_QUOTED_KEY))}…` : JSONStringify(key);
}

function knownList(known: readonly string[]): string {
  if (known.length === 0) return "it takes none";
  return `the known ones: ${ArrayPrototypeJoin(known as string[], ", ")}`;
}
