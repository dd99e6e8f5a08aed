// The call going in: its snapshot (rule 4), then its tool's validator (rule 6), the two steps
// that run before any tool code, in the order a call meets them.
//
// The call snapshot: an untrusted tool call becomes an isolated, deeply frozen copy made of
// own data properties read exactly once, or a ToolContractError(INVALID_TOOL_CALL).
// docs/contract.md: rule 4 — call snapshot.
import { argumentBudgetsFor, DEFAULT_ARGUMENT_BUDGETS, type ResolvedArgumentBudgets } from "./budgets.js";
import { ContractErrorCode, type RecoverableToolErrorCode, ToolErrorCode } from "./constants.js";
import { isNonRecoverableToolError, ToolContractError } from "./errors.js";
import { describeValue } from "./grammar.js";
import {
  ArrayIsArray,
  ArrayPrototype,
  isArrayBufferView,
  isBoxedPrimitive,
  isPromise,
  isProxy,
  MapPrototypeGet,
  NumberIsFinite,
  ObjectDefineProperty,
  ObjectFreeze,
  ObjectGetOwnPropertyDescriptor,
  ObjectGetOwnPropertyNames,
  ObjectGetOwnPropertySymbols,
  ObjectGetPrototypeOf,
  ObjectHasOwn,
  ObjectKeys,
  ObjectPrototype,
  ObjectPrototypeLookupGetter,
  ReflectApply,
  ReflectOwnKeys,
} from "./primordials.js";
import { ownLiteralValidator, type Tool, type ValidationDecision } from "./tools.js";
import { describeFailure, type FailureText, observeRejection, ownDataOr, readDataProperty } from "./untrusted.js";

/** A JSON value: what a model can put in a tool call's arguments. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A normalized tool call, as the model layer hands it over. */
export interface ToolCall {
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
 * wrong shape, accessors, Proxies, non-JSON arguments, an empty id or name, or arguments
 * over one of `budgets` (the message names the budget and the path). Budgets are checked
 * before a container's members are read: an array is refused by its length alone. With
 * `tools`, the named tool's own `argumentBudgets` tighten `budgets` (the name is read before
 * the arguments, so the tool's budgets bound the walk itself).
 */
export function snapshotToolCall(
  call: unknown,
  budgets: ResolvedArgumentBudgets = DEFAULT_ARGUMENT_BUDGETS,
  tools?: Map<string, Tool>,
): Readonly<ToolCall> {
  if (!isPlainRecord(call)) invalid("the call must be a plain object (not a Proxy, array or class instance)");
  const type = readOwnData(call, "type");
  if (type !== "toolCall") invalid('call.type must be "toolCall"');
  const id = readOwnData(call, "id");
  checkId(id);
  const name = readOwnData(call, "name");
  checkName(name);
  return snapshotCall(id, name, readOwnData(call, "arguments"), budgets, tools);
}

/**
 * `snapshotToolCall` of a call an adapter assembles itself from what its framework passed
 * (`{ type: "toolCall", id, name, arguments }` made by toolgate has no accessor to look for):
 * the same checks of `id`, `name` and the arguments, and the same snapshot of the arguments.
 */
export function snapshotCallParts(
  id: unknown,
  name: unknown,
  args: unknown,
  budgets: ResolvedArgumentBudgets,
  tools: Map<string, Tool>,
  accepted?: AcceptedArguments,
): Readonly<ToolCall> {
  checkId(id);
  checkName(name);
  if (accepted?.takeFor(args, budgets, MapPrototypeGet(tools, name))) {
    return ObjectFreeze({ type: "toolCall", id, name, arguments: accepted.args });
  }
  return snapshotCall(id, name, args, budgets, tools);
}

/**
 * Arguments a tool's validator accepted just before the call (Pi's `prepareArguments` runs the
 * snapshot and the validator on the raw arguments, then Pi hands `execute` its own copy): the
 * snapshot, the budgets it was taken within, and the verdict, `{ ok: true, value }`. When the
 * call's arguments would snapshot to exactly that snapshot, within the same budgets, for the
 * same tool, the call takes that snapshot and that verdict: validators are pure, so running it
 * again on equal arguments would decide the same. Taken by one call at most (the value is
 * that call's to keep).
 */
export class AcceptedArguments {
  readonly ok = true as const;
  #taken = false;

  constructor(
    readonly value: unknown,
    readonly tool: Tool,
    readonly args: Readonly<Record<string, JsonValue>>,
    readonly budgets: ResolvedArgumentBudgets,
  ) {}

  /** True, once, when a call of `tool` within `budgets` has arguments that would snapshot to `args`. */
  takeFor(args: unknown, budgets: ResolvedArgumentBudgets, tool: Tool | undefined): boolean {
    if (this.#taken || tool !== this.tool || argumentBudgetsFor(tool.argumentBudgets, budgets) !== this.budgets) return false;
    if (!matchesSnapshot(args, this.args)) return false;
    this.#taken = true;
    return true;
  }
}

/**
 * Whether untrusted `value` would snapshot to exactly `snapshot` (one this file made): the same
 * keys in the same order, data properties only, the same JSON values. It reads as the snapshot
 * reads (no getter or trap runs, nothing is copied); any doubt is a no, and the caller then
 * snapshots. The walk follows the snapshot, so its depth is the snapshot's.
 */
export function matchesSnapshot(value: unknown, snapshot: unknown): boolean {
  if (typeof snapshot !== "object" || snapshot === null) {
    // A string, a boolean, a finite number or null; -0 is not 0 (a validator may tell them apart).
    return value === snapshot && (value !== 0 || 1 / (value as number) === 1 / (snapshot as number));
  }
  if (typeof value !== "object" || value === null || isProxy(value)) return false;
  const prototype: unknown = ObjectGetPrototypeOf(value);
  if (ArrayIsArray(snapshot)) {
    if (!ArrayIsArray(value) || prototype !== ArrayPrototype) return false;
    const length = snapshot.length;
    if (value.length !== length || ReflectOwnKeys(value).length !== length + 1) return false;
    for (let index = 0; index < length; index += 1) {
      if (!ObjectHasOwn(value, index) || ObjectPrototypeLookupGetter(value, index) !== undefined) return false;
      if (!matchesSnapshot(value[index], snapshot[index])) return false;
    }
    return true;
  }
  if ((prototype !== ObjectPrototype && prototype !== null) || ArrayIsArray(value) || isArrayBufferView(value) || isBoxedPrimitive(value)) {
    return false;
  }
  const keys = ObjectKeys(snapshot);
  const own = ObjectKeys(value);
  const count = keys.length;
  if (own.length !== count || ObjectGetOwnPropertyNames(value).length !== count || ObjectGetOwnPropertySymbols(value).length !== 0) {
    return false;
  }
  for (let index = 0; index < count; index += 1) {
    const key = keys[index] as string;
    // An own key with no getter is data, or a setter-only accessor: that reads undefined, which no snapshot holds.
    if (own[index] !== key || ObjectPrototypeLookupGetter(value, key) !== undefined) return false;
    if (!matchesSnapshot((value as Record<string, unknown>)[key], (snapshot as Record<string, unknown>)[key])) return false;
  }
  return true;
}

function checkId(id: unknown): asserts id is string {
  if (typeof id !== "string" || id.length === 0) invalid("call.id must be a non-empty string");
}

function checkName(name: unknown): asserts name is string {
  if (typeof name !== "string" || name.length === 0) invalid("call.name must be a non-empty string");
}

/** The frozen call around the snapshot of its arguments (within the budgets, tightened by tool `name`'s own). */
function snapshotCall(
  id: string,
  name: string,
  args: unknown,
  budgets: ResolvedArgumentBudgets,
  tools: Map<string, Tool> | undefined,
): Readonly<ToolCall> {
  const tool = tools === undefined ? undefined : MapPrototypeGet(tools, name);
  const within = tool === undefined ? budgets : argumentBudgetsFor(tool.argumentBudgets, budgets);
  return ObjectFreeze({ type: "toolCall", id, name, arguments: snapshotArguments(args, within) });
}

/**
 * The isolated, deeply frozen snapshot of a call's arguments alone, within `budgets` (a tool's
 * own already applied), or ToolContractError(INVALID_TOOL_CALL) as `snapshotToolCall` gives.
 */
export function snapshotArguments(args: unknown, budgets: ResolvedArgumentBudgets): Readonly<Record<string, JsonValue>> {
  if (!isPlainRecord(args) || isArrayBufferView(args) || isBoxedPrimitive(args)) invalid("call.arguments must be a plain JSON object");
  // The root is checked above (a plain, non-Proxy record): it is counted and copied directly.
  const walk = startWalk(budgets);
  try {
    walk.ancestors[0] = args;
    spendNodes(walk, 1, 0);
    return snapshotObject(walk, args, 0) as Readonly<Record<string, JsonValue>>;
  } finally {
    endWalk(walk);
  }
}

function invalid(message: string): never {
  throw new ToolContractError(ContractErrorCode.INVALID_TOOL_CALL, message);
}

function isPlainRecord(value: unknown): value is object {
  if (typeof value !== "object" || value === null || isProxy(value) || ArrayIsArray(value)) return false;
  const prototype: unknown = ObjectGetPrototypeOf(value);
  return prototype === ObjectPrototype || prototype === null;
}

/**
 * Reads an own data property once; an accessor or a missing property is a malformed call.
 * One descriptor read (no getter runs; the descriptor's own `value` tells data from an
 * accessor): 1,678 instructions for a call's four keys, GC included, where an own-key check,
 * a getter lookup and a read took 2,214 (callgrind, Node 20; docs in untrusted.ts `ownDataOr`).
 */
function readOwnData(record: object, key: string): unknown {
  const descriptor = ObjectGetOwnPropertyDescriptor(record, key);
  if (descriptor === undefined) invalid(`call.${key} is missing (it must be an own property)`);
  if (!ObjectHasOwn(descriptor, "value")) accessor(key);
  return descriptor.value;
}

function accessor(key: string): never {
  invalid(`call.${key} is an accessor; only data properties are read`);
}

/**
 * One snapshot's state: the budgets, what was spent, and the ancestry. `trail` holds the keys
 * leading to the current value, so an error message can name the path without building a
 * path string for every member of every call.
 */
class Walk {
  nodes = 0;
  size = 0;
  /** Deepest container index written to `ancestors` (cleared after the walk). */
  deepest = 0;
  readonly ancestors: (object | undefined)[] = [];
  readonly trail: (string | number)[] = [];
  budgets: ResolvedArgumentBudgets = DEFAULT_ARGUMENT_BUDGETS;
}

// One walk, reused: a snapshot runs no code of the caller's, so it never re-enters, and its
// state costs a call nothing to allocate. The ancestors are cleared after each snapshot, so no
// caller's object is kept alive by it.
const sharedWalk = new Walk();

function startWalk(budgets: ResolvedArgumentBudgets): Walk {
  sharedWalk.nodes = 0;
  sharedWalk.size = 0;
  sharedWalk.deepest = 0;
  sharedWalk.budgets = budgets;
  return sharedWalk;
}

function endWalk(walk: Walk): void {
  for (let index = 0; index <= walk.deepest + 1; index += 1) {
    walk.ancestors[index] = undefined;
    walk.trail[index] = 0;
  }
}

/** Counts `count` more values (and their share of the size); refuses past the budgets. */
function spendNodes(walk: Walk, count: number, depth: number): void {
  walk.nodes += count;
  walk.size += count;
  const budgets = walk.budgets;
  if (walk.nodes > budgets.maxNodes) overBudget(walk, depth, `more than ${budgets.maxNodes} values`, "maxNodes");
  if (walk.size > budgets.maxTotalSize) overBudget(walk, depth, `more than ${budgets.maxTotalSize} in total size`, "maxTotalSize");
}

/** Counts a string's (or key's) length; refuses past the budgets. */
function spendText(walk: Walk, text: string, depth: number): void {
  const length = text.length;
  const budgets = walk.budgets;
  if (length > budgets.maxStringLength) {
    overBudget(walk, depth, `has a string of ${length} code units (more than ${budgets.maxStringLength})`, "maxStringLength");
  }
  walk.size += length;
  if (walk.size > budgets.maxTotalSize) overBudget(walk, depth, `more than ${budgets.maxTotalSize} in total size`, "maxTotalSize");
}

function overBudget(walk: Walk, depth: number, problem: string, budget: keyof ResolvedArgumentBudgets): never {
  invalidAt(walk, depth, `exceeds the argument budget: ${problem} (argument budget ${budget})`);
}

/** Deep copy of a JSON value into fresh frozen objects; anything else is refused. */
function snapshotJson(walk: Walk, value: unknown, depth: number): unknown {
  switch (typeof value) {
    case "string":
      spendNodes(walk, 1, depth);
      spendText(walk, value, depth);
      return value;
    case "boolean":
      spendNodes(walk, 1, depth);
      return value;
    case "number":
      if (!NumberIsFinite(value)) invalidAt(walk, depth, "is not a finite number");
      spendNodes(walk, 1, depth);
      return value;
    case "object":
      if (value === null) {
        spendNodes(walk, 1, depth);
        return value;
      }
      break;
    default:
      invalidAt(walk, depth, `is ${describeValue(value)}, which is not JSON`);
  }
  if (isProxy(value)) invalidAt(walk, depth, "is a Proxy");
  const maxDepth = walk.budgets.maxDepth;
  if (depth >= maxDepth) invalidAt(walk, depth, `nests deeper than ${maxDepth} levels (argument budget maxDepth)`);
  const ancestors = walk.ancestors;
  for (let index = 0; index < depth; index += 1) {
    if (ancestors[index] === value) invalidAt(walk, depth, "is circular");
  }
  ancestors[depth] = value;
  if (depth > walk.deepest) walk.deepest = depth;
  spendNodes(walk, 1, depth);
  const prototype: unknown = ObjectGetPrototypeOf(value);
  if (ArrayIsArray(value)) {
    if (prototype !== ArrayPrototype) invalidAt(walk, depth, "is an array with an unusual prototype");
    return snapshotArray(walk, value, depth);
  }
  // A typed array or boxed primitive with a swapped prototype is no JSON object (and a typed
  // array would be copied index by index).
  if ((prototype !== ObjectPrototype && prototype !== null) || isArrayBufferView(value) || isBoxedPrimitive(value)) {
    invalidAt(walk, depth, "is not a plain object");
  }
  return snapshotObject(walk, value, depth);
}

function snapshotArray(walk: Walk, array: unknown[], depth: number): readonly unknown[] {
  const length = array.length; // an own data property of a genuine, non-Proxy array: O(1)
  // Every element is at least one value: a huge array is refused before anything is listed.
  if (walk.nodes + length > walk.budgets.maxNodes) {
    overBudget(walk, depth, `${length} elements do not fit in ${walk.budgets.maxNodes} values (${walk.nodes} counted)`, "maxNodes");
  }
  if (ReflectOwnKeys(array).length !== length + 1) invalidAt(walk, depth, "is sparse or has non-index properties");
  const copy: unknown[] = [];
  const trail = walk.trail;
  for (let index = 0; index < length; index += 1) {
    trail[depth] = index;
    // An own element without a getter is data (a setter-only accessor reads undefined: refused
    // as not JSON); this costs half a descriptor read.
    if (!ObjectHasOwn(array, index) || ObjectPrototypeLookupGetter(array, index) !== undefined) {
      invalidAt(walk, depth + 1, "is a hole or an accessor");
    }
    setOwn(copy, ArrayPrototype, index, snapshotJson(walk, array[index], depth + 1));
  }
  return ObjectFreeze(copy);
}

function snapshotObject(walk: Walk, record: object, depth: number): Readonly<Record<string, unknown>> {
  // Listing keys is the one step that is O(keys) whatever the budget (JavaScript cannot count
  // an object's properties without listing them). Object.keys is the cheapest listing
  // (measured on Node 20: 0.6x the time of Reflect.ownKeys on 100k keys, and 15x less on a
  // one-key object, where Reflect.ownKeys leaves the engine's fast path), so it runs first
  // and a huge object is refused before anything else is read.
  const keys = ObjectKeys(record);
  const count = keys.length;
  if (walk.nodes + count > walk.budgets.maxNodes) {
    overBudget(walk, depth, `${count} keys do not fit in ${walk.budgets.maxNodes} values (${walk.nodes} counted)`, "maxNodes");
  }
  // Non-enumerable properties and symbol keys are not JSON: refused (two more cheap listings).
  if (ObjectGetOwnPropertyNames(record).length !== count) refuseHidden(walk, record, depth);
  if (ObjectGetOwnPropertySymbols(record).length !== 0) invalidAt(walk, depth, "has a symbol key");
  const copy: Record<string, unknown> = {};
  const trail = walk.trail;
  for (let index = 0; index < count; index += 1) {
    const key = keys[index] as string;
    trail[depth] = key;
    spendText(walk, key, depth + 1);
    if (ObjectPrototypeLookupGetter(record, key) !== undefined) invalidAt(walk, depth + 1, "is an accessor");
    setOwn(copy, ObjectPrototype, key, snapshotJson(walk, (record as Record<string, unknown>)[key], depth + 1));
  }
  return ObjectFreeze(copy);
}

/** Names the first own string key that Object.keys did not list: a non-enumerable property. */
function refuseHidden(walk: Walk, record: object, depth: number): never {
  const names = ObjectGetOwnPropertyNames(record);
  for (let index = 0; index < names.length; index += 1) {
    const descriptor = ObjectGetOwnPropertyDescriptor(record, names[index] as string);
    if (descriptor !== undefined && descriptor.enumerable !== true) {
      walk.trail[depth] = names[index] as string;
      invalidAt(walk, depth + 1, "is not enumerable");
    }
  }
  invalidAt(walk, depth, "changed while it was read");
}

/**
 * Adds an own data property to a fresh copy. Plain assignment is several times faster than
 * defineProperty, and safe unless the key exists up the prototype chain ("__proto__", a
 * setter someone put on Object.prototype or Array.prototype): those keys are defined instead,
 * so they stay ordinary keys and no inherited setter ever sees the copy. `prototype` is the
 * copy's (a fresh copy's is known: no call to look it up).
 */
function setOwn(copy: object, prototype: object, key: string | number, value: unknown): void {
  if (key in prototype) {
    ObjectDefineProperty(copy, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    (copy as Record<string | number, unknown>)[key] = value;
  }
}

function invalidAt(walk: Walk, depth: number, problem: string): never {
  let path = "arguments";
  const trail = walk.trail;
  for (let index = 0; index < depth; index += 1) {
    const key = trail[index] as string | number;
    path += typeof key === "number" ? `[${key}]` : `.${key}`;
  }
  invalid(`${path} ${problem}`);
}

// Running a tool's validator: synchronous, before any side effect, and with its decision
// read strictly (own data properties only). Promises and thenables are refused but observed.
// docs/contract.md: rule 6 — validation first.

/** The validator accepted the arguments (`value` is what execute gets) or refused them. */
export type Validation =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly code: RecoverableToolErrorCode; readonly failure: FailureText };

const MALFORMED = "validate must return { ok: true, value } or { ok: false, error } synchronously";

/**
 * Runs `tool.validate(args)`. A thrown NonRecoverableToolError propagates; every other
 * problem is a recoverable verdict: TOOL_ARGUMENTS_INVALID for `{ ok: false, error }`,
 * TOOL_VALIDATION_FAILED for a throw or a malformed decision.
 */
export function validateArguments(tool: Tool, args: unknown): Validation {
  const own = ownLiteralValidator(tool);
  let decision: unknown;
  try {
    decision = own === undefined ? tool.validate(args) : own(args);
  } catch (error) {
    if (isNonRecoverableToolError(error)) throw error;
    return failed(ToolErrorCode.VALIDATION_FAILED, describeFailure(error));
  }
  return own === undefined ? readDecision(decision) : takeOwnDecision(decision as ValidationDecision<unknown>);
}

/** A decision toolgate's own validator made: a fresh literal, nothing of it to read warily. */
function takeOwnDecision(decision: ValidationDecision<unknown>): Validation {
  return decision.ok ? decision : failed(ToolErrorCode.ARGUMENTS_INVALID, describeFailure(decision.error));
}

function readDecision(decision: unknown): Validation {
  if (typeof decision !== "object" || decision === null || isProxy(decision)) return malformed(`it returned ${describeValue(decision)}`);
  if (isPromise(decision)) {
    // Observed (untrusted.ts), so a rejection is never unhandled and a species that throws stays here.
    observeRejection(decision, ignore);
    return malformed("it returned a Promise");
  }
  // A plain decision with no `then` on it or on Object.prototype needs no walk up the chain.
  const plain = ObjectGetPrototypeOf(decision) === ObjectPrototype && !("then" in decision); // `in` on that chain runs nothing
  const then = plain ? undefined : readDataProperty(decision, "then");
  if (typeof then === "function") {
    try {
      ReflectApply(then, decision, [ignore, ignore]);
    } catch {
      // a thenable that throws from then() has been observed as well as it can be
    }
    return malformed("it returned a thenable");
  }
  const ok = ownDataOr(decision, "ok", ABSENT);
  if (typeof ok !== "boolean") return malformed("its `ok` is not an own boolean data property");
  if (ok) {
    const value = ownDataOr(decision, "value", ABSENT);
    return value === ABSENT ? malformed("`ok` is true but there is no own `value` data property") : { ok: true, value };
  }
  const error = ownDataOr(decision, "error", ABSENT);
  if (error === ABSENT) return malformed("`ok` is false but there is no own `error` data property");
  return failed(ToolErrorCode.ARGUMENTS_INVALID, describeFailure(error));
}

/** Marks an absent own data property, so that a present `undefined` differs from absence. */
const ABSENT: unique symbol = Symbol("absent");

function malformed(why: string): Validation {
  return failed(ToolErrorCode.VALIDATION_FAILED, { text: `${MALFORMED}; ${why}`, cut: false });
}

function failed(code: RecoverableToolErrorCode, failure: FailureText): Validation {
  return { ok: false, code, failure };
}

function ignore(): void {}
