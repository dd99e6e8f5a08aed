// Tool definitions: the four-field contract, and defineTool(), which turns a caller's
// object into a frozen snapshot whose functions cannot be redirected afterwards.
// docs/contract.md: rule 1 — definition snapshot.
import type { ToolApp } from "./app.js";
import { type OutputBudgets, readOutputBudgets } from "./budgets.js";
import { COURSE_TOOL_INVALID_TOOL_DEFINITION } from "./constants.js";
import { isToolContractError, ToolContractError } from "./errors.js";
import {
  isProxy,
  ObjectFreeze,
  ObjectGetOwnPropertyDescriptor,
  ObjectHasOwn,
  ReflectApply,
  WeakMapPrototypeGet,
  WeakMapPrototypeSet,
  WeakSetPrototypeAdd,
  WeakSetPrototypeHas,
} from "./primordials.js";
import { checkTimeoutMs } from "./timeout.js";

/** A validator's verdict. `error` carries details the model reads when `ok` is false. */
export type ValidationDecision<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** What `execute` receives besides its arguments. Frozen. */
export interface ToolContext {
  /** The run's signal: stop work when it aborts. */
  readonly signal: AbortSignal;
  /** The id of the call being executed. */
  readonly toolCallId: string;
  /** The application context (`ToolApp`) of the executor or the call; in-process tools only. */
  readonly app?: ToolApp;
}

/** What a tool author writes. */
export interface CourseToolDefinition<A = unknown, O = unknown> {
  /** Non-empty; the name the model calls. */
  name: string;
  /** Non-empty; shown to the model. */
  description: string;
  /** Synchronous and free of side effects: it decides, it does not act. */
  validate(args: unknown): ValidationDecision<A>;
  /** Runs only with arguments `validate` accepted. */
  execute(args: A, context: ToolContext): Promise<O> | O;
  /** Optional: this tool's time limit in ms (1 to 2^31 - 1); overrides the executor's, a call's own overrides it. */
  timeoutMs?: number;
  /** Optional: this tool's serializer budgets (over the executor's), e.g. `{ maxNodes: 4096 }`. */
  budgets?: OutputBudgets;
}

/** A frozen tool snapshot made by `defineTool`; what a `ToolRegistry` holds. */
export type CourseTool<A = unknown, O = unknown> = Readonly<CourseToolDefinition<A, O>>;

const FIELDS = ["name", "description", "validate", "execute"] as const;
const definedTools = new WeakSet<object>();
// The validator each snapshot wraps, so adapters can recover metadata attached to it
// (for example the TypeBox schema behind a validator); never used to call it.
const validators = new WeakMap<CourseTool, (args: unknown) => unknown>();

/** True for tool snapshots made by `defineTool`. */
function isCourseTool(value: unknown): value is CourseTool {
  return typeof value === "object" && value !== null && WeakSetPrototypeHas(definedTools, value);
}

/**
 * Snapshots a definition: reads each of the four fields exactly once, as own properties
 * (an inherited field is rejected without touching it), checks them, and freezes the
 * result. `validate` and `execute` are called through captured references with
 * `this === undefined`, so later changes to the caller's object, to the functions'
 * properties or to Function.prototype cannot redirect them. A snapshot passes through.
 */
export function defineTool<A, O>(definition: CourseToolDefinition<A, O>): CourseTool<A, O>;
export function defineTool(definition: unknown): CourseTool;
export function defineTool(definition: unknown): CourseTool {
  if (isCourseTool(definition)) return definition;
  if (typeof definition !== "object" || definition === null || isProxy(definition)) {
    invalid("a tool definition must be an object (not a Proxy)");
  }
  const name = readField(definition, FIELDS[0]);
  const description = readField(definition, FIELDS[1]);
  const validate = readField(definition, FIELDS[2]);
  const execute = readField(definition, FIELDS[3]);
  if (typeof name !== "string" || name.length === 0) invalid("a tool's name must be a non-empty string");
  if (typeof description !== "string" || description.length === 0) {
    invalid(`tool "${name}": description must be a non-empty string`);
  }
  if (typeof validate !== "function" || isProxy(validate)) invalid(`tool "${name}": validate must be a function`);
  if (typeof execute !== "function" || isProxy(execute)) invalid(`tool "${name}": execute must be a function`);
  const budgets = readOptionalBudgets(definition, name);
  const tool: CourseTool = ObjectFreeze({
    name,
    description,
    validate: ObjectFreeze((args: unknown) => ReflectApply(validate, undefined, [args])),
    execute: ObjectFreeze((args: unknown, context: ToolContext) => ReflectApply(execute, undefined, [args, context])),
    ...optionalTimeout(definition, name),
    ...(budgets === undefined ? {} : { budgets }),
  });
  WeakSetPrototypeAdd(definedTools, tool);
  WeakMapPrototypeSet(validators, tool, validate as (args: unknown) => unknown);
  return tool;
}

/** The caller's original `validate` function behind a snapshot (for adapters' metadata lookups). */
export function originalValidator(tool: CourseTool): ((args: unknown) => unknown) | undefined {
  return WeakMapPrototypeGet(validators, tool);
}

/** One read of an own field: a data value, or its own getter called once. */
function readField(definition: object, field: string): unknown {
  const descriptor = ObjectGetOwnPropertyDescriptor(definition, field);
  if (descriptor === undefined) invalid(`a tool definition needs an own "${field}" property (inherited ones are not read)`);
  if (ObjectHasOwn(descriptor, "value")) return descriptor.value;
  const get = descriptor.get;
  if (get === undefined) invalid(`the tool definition's "${field}" has a setter but no getter`);
  try {
    return ReflectApply(get, definition, []);
  } catch (error) {
    if (isToolContractError(error)) throw error;
    throw new ToolContractError(COURSE_TOOL_INVALID_TOOL_DEFINITION, `reading the tool definition's "${field}" threw`, { cause: error });
  }
}

/** `{ timeoutMs }` when the definition has an own `timeoutMs` (read once, checked), else nothing. */
function optionalTimeout(definition: object, name: string): { timeoutMs?: number } {
  if (ObjectGetOwnPropertyDescriptor(definition, "timeoutMs") === undefined) return {};
  const value = readField(definition, "timeoutMs");
  return value === undefined ? {} : { timeoutMs: checkTimeoutMs(value, `tool "${name}": timeoutMs`, COURSE_TOOL_INVALID_TOOL_DEFINITION) };
}

/** The optional `budgets` field: read once if it is an own property (an inherited one is not read). */
function readOptionalBudgets(definition: object, name: string): OutputBudgets | undefined {
  if (ObjectGetOwnPropertyDescriptor(definition, "budgets") === undefined) return undefined;
  const budgets = readField(definition, "budgets");
  return budgets === undefined ? undefined : readOutputBudgets(budgets, `tool "${name}": budgets`, COURSE_TOOL_INVALID_TOOL_DEFINITION);
}

function invalid(message: string): never {
  throw new ToolContractError(COURSE_TOOL_INVALID_TOOL_DEFINITION, message);
}
