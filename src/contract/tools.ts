// Tools: what one is (defineTool's frozen snapshot) and where they are kept (ToolRegistry).
// Read together: a registry holds nothing but snapshots made here.
//
// Tool definitions: the four-field contract (or its schema-first form, `parameters` in
// place of `validate`), and defineTool(), which turns a caller's object into a frozen
// snapshot whose functions cannot be redirected afterwards.
// docs/contract.md: rule 1 — definition snapshot.
import type { ToolApp } from "./app.js";
import {
  type ArgumentBudgets,
  type AttachmentBudgets,
  type OutputBudgets,
  readArgumentBudgets,
  readAttachmentBudgets,
  readOutputBudgets,
} from "./budgets.js";
import { ContractErrorCode } from "./constants.js";
import { isToolContractError, ToolContractError } from "./errors.js";
import { readOutputSchema, recordOutputSchema } from "./output-schema.js";
import { type JsonSchema, readToolArguments, recordToolSchema } from "./parameters.js";
import {
  ArrayIsArray,
  isProxy,
  MapPrototypeGet,
  MapPrototypeGetSize,
  MapPrototypeHas,
  MapPrototypeSet,
  mapEntryStepper,
  mapKeyStepper,
  NumberIsInteger,
  ObjectFreeze,
  ObjectGetOwnPropertyDescriptor,
  ObjectHasOwn,
  ReflectApply,
  ReflectOwnKeys,
  WeakMapPrototypeGet,
  WeakMapPrototypeSet,
  WeakSetPrototypeAdd,
  WeakSetPrototypeHas,
} from "./primordials.js";
import { decidesOwnLiterals, type StandardSchemaV1, type StandardSchemaV1Output } from "./standard-schema.js";
import { checkTimeoutMs } from "./timeout.js";

/** A validator's verdict. `error` carries details the model reads when `ok` is false. */
export type ValidationDecision<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** What a tool reports through `context.reportProgress`. */
export interface ToolProgressReport {
  /** How far the tool has got: a finite number (a count, or a fraction of `total`). */
  readonly progress: number;
  /** What `progress` counts up to, when known: a finite number. */
  readonly total?: number;
  /** A short human-readable note (cut to 256 code points). */
  readonly message?: string;
}

/** What `execute` receives besides its arguments. Frozen. */
export interface ToolContext {
  /** The run's signal: stop work when it aborts. */
  readonly signal: AbortSignal;
  /** The id of the call being executed. */
  readonly toolCallId: string;
  /** The application context (`ToolApp`) of the executor or the call; in-process tools only. */
  readonly app?: ToolApp;
  /**
   * Tells the caller how far the tool has got (its `onProgress` call option). Cheap to call
   * often: bursts are coalesced, and nothing is delivered once the call settled or aborted.
   * A report that is not `{ progress: number, total?: number, message?: string }` throws a
   * TypeError.
   */
  readonly reportProgress: (report: ToolProgressReport) => void;
  /**
   * A durable call's idempotency key (`options.durable`, docs/durable.md): the same for every
   * attempt of one (run id, call id), in every process. Pass it to the systems the tool calls
   * (a payment API's idempotency key): it is the only way to close the gap between a side
   * effect and its record. Absent for a call that is not durable.
   */
  readonly idempotencyKey?: string;
  /** A durable call's attempt, from 1 (an at-least-once tool's next attempt after a lost one counts up). Absent for a call that is not durable. */
  readonly attempt?: number;
}

/**
 * How a durable call of this tool may be run again when an earlier execution was lost (its
 * process died, or it was stopped mid-run): "at-most-once" (the default) never runs it again
 * under that key; `{ atLeastOnce: { maxAttempts } }` runs it again, up to `maxAttempts` (1 to
 * 100) attempts in all, with the same `context.idempotencyKey`.
 */
export type ToolDurability = "at-most-once" | { readonly atLeastOnce: { readonly maxAttempts: number } };

/** The most attempts an at-least-once tool may allow. */
export const MAX_DURABLE_ATTEMPTS = 100;

/** What a tool author writes. `N`: its name's literal type, kept so adapters can key their tools by it. */
export interface ToolDefinition<A = unknown, O = unknown, N extends string = string> {
  /** Non-empty; the name the model calls. */
  name: N;
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
  /** Optional: this tool's argument budgets; they only tighten the executor's (or the call's), e.g. `{ maxNodes: 100 }`. */
  argumentBudgets?: ArgumentBudgets;
  /** Optional: this tool's attachment budgets (over the executor's), e.g. `{ maxAttachments: 1 }`. */
  attachmentBudgets?: AttachmentBudgets;
  /** The JSON Schema of the arguments `validate` accepts, for `describeTools` (copied at definition time). */
  jsonSchema?: JsonSchema;
  /** Optional: how a durable call of this tool may run again after a lost execution (default "at-most-once"). */
  durability?: ToolDurability;
  /**
   * Optional: the schema of what `execute` returns (a Standard Schema v1: zod 4, valibot, ArkType,
   * or TypeBox through `typeboxParameters`), checked where the tool runs; a mismatch is the
   * call's TOOL_EXECUTION_FAILED naming each path (docs/contract.md — Structured output).
   */
  outputSchema?: StandardSchemaV1;
}

/**
 * The schema-first form: `parameters` is a Standard Schema v1 (zod 4, valibot 1, ArkType,
 * or TypeBox through `typeboxParameters` of `toolgate/typebox`) and `execute`'s arguments
 * are its output type.
 */
export interface SchemaToolDefinition<S extends StandardSchemaV1 = StandardSchemaV1, O = unknown, N extends string = string> {
  /** Non-empty; the name the model calls. */
  name: N;
  /** Non-empty; shown to the model. */
  description: string;
  /** Validates the arguments (synchronously); its output is what `execute` receives. */
  parameters: S;
  /** Runs only with arguments the schema accepted. */
  execute(args: StandardSchemaV1Output<S>, context: ToolContext): Promise<O> | O;
  /** The JSON Schema shown to the model, when the schema library cannot make one (valibot). */
  jsonSchema?: JsonSchema;
  /** Optional: how a durable call of this tool may run again after a lost execution (default "at-most-once"). */
  durability?: ToolDurability;
  /** Optional: the schema of what `execute` returns, as in ToolDefinition. */
  outputSchema?: StandardSchemaV1;
}

/** A frozen tool snapshot made by `defineTool`; what a `ToolRegistry` holds. */
export type Tool<A = unknown, O = unknown, N extends string = string> = Readonly<
  Omit<ToolDefinition<A, O, N>, "jsonSchema" | "outputSchema">
>;
const definedTools = new WeakSet<object>();
// The validator each snapshot wraps, so adapters can recover metadata attached to it
// (for example the TypeBox schema behind a validator); never used to call it.
const validators = new WeakMap<Tool, (args: unknown) => unknown>();

/** True for tool snapshots made by `defineTool`. */
function isDefinedTool(value: unknown): value is Tool {
  return typeof value === "object" && value !== null && WeakSetPrototypeHas(definedTools, value);
}

/**
 * Snapshots a definition: reads each field exactly once, as own properties (an inherited
 * field is rejected, or treated as absent when optional, without touching it), checks
 * them, and freezes the result. A definition has exactly one of `validate` and
 * `parameters`; with `parameters`, the snapshot's `validate` is made from the schema, read
 * once here. `validate` and `execute` are called through captured references with
 * `this === undefined`, so later changes to the caller's object, to the functions'
 * properties or to Function.prototype cannot redirect them. A snapshot passes through.
 */
export function defineTool<A, O, const N extends string = string>(definition: ToolDefinition<A, O, N>): Tool<A, O, N>;
export function defineTool<S extends StandardSchemaV1, O, const N extends string = string>(
  definition: SchemaToolDefinition<S, O, N>,
): Tool<StandardSchemaV1Output<S>, O, N>;
export function defineTool(definition: unknown): Tool;
export function defineTool(definition: unknown): Tool {
  if (isDefinedTool(definition)) return definition;
  if (typeof definition !== "object" || definition === null || isProxy(definition)) {
    invalid("a tool definition must be an object (not a Proxy)");
  }
  const name = readField(definition, "name");
  const description = readField(definition, "description");
  const validateField = readOptionalField(definition, "validate");
  const parameters = readOptionalField(definition, "parameters");
  const execute = readField(definition, "execute");
  const jsonSchema = readOptionalField(definition, "jsonSchema");
  const outputSchemaField = readOptionalField(definition, "outputSchema");
  if (typeof name !== "string" || name.length === 0) invalid("a tool's name must be a non-empty string");
  if (typeof description !== "string" || description.length === 0) {
    invalid(`tool "${name}": description must be a non-empty string`);
  }
  const { validate, source } = readToolArguments(name, validateField, parameters, jsonSchema);
  if (typeof execute !== "function" || isProxy(execute)) invalid(`tool "${name}": execute must be a function`);
  const outputSchema = outputSchemaField === undefined ? undefined : readOutputSchema(name, outputSchemaField);
  const budgets = readOptionalBudgets(definition, name, "budgets", readOutputBudgets);
  const argumentBudgets = readOptionalBudgets(definition, name, "argumentBudgets", readArgumentBudgets);
  const attachmentBudgets = readOptionalBudgets(definition, name, "attachmentBudgets", readAttachmentBudgets);
  const tool: Tool = ObjectFreeze({
    name,
    description,
    validate: ObjectFreeze((args: unknown) => ReflectApply(validate, undefined, [args])),
    execute: ObjectFreeze((args: unknown, context: ToolContext) => ReflectApply(execute, undefined, [args, context])),
    ...optionalTimeout(definition, name),
    ...(budgets === undefined ? {} : { budgets }),
    ...(argumentBudgets === undefined ? {} : { argumentBudgets }),
    ...(attachmentBudgets === undefined ? {} : { attachmentBudgets }),
    ...optionalDurability(definition, name),
  });
  WeakSetPrototypeAdd(definedTools, tool);
  WeakMapPrototypeSet(validators, tool, validate);
  if (decidesOwnLiterals(validate)) WeakMapPrototypeSet(literalDeciders, tool, validate);
  recordToolSchema(tool, source);
  if (outputSchema !== undefined) recordOutputSchema(tool, outputSchema);
  return tool;
}

// The snapshots whose validator is one of toolgate's own Standard Schema validators, and that
// validator: the boundary calls it directly and takes its decision as it is (see validateArguments).
const literalDeciders = new WeakMap<Tool, (args: unknown) => ValidationDecision<unknown>>();

/** The validator behind `tool` when toolgate made it (its decisions are its own literals); else undefined. */
export function ownLiteralValidator(tool: Tool): ((args: unknown) => ValidationDecision<unknown>) | undefined {
  return WeakMapPrototypeGet(literalDeciders, tool);
}

/** The caller's original `validate` function behind a snapshot (for adapters' metadata lookups). */
export function originalValidator(tool: Tool): ((args: unknown) => unknown) | undefined {
  return WeakMapPrototypeGet(validators, tool);
}

/** One read of an own field: a data value, or its own getter called once. */
function readField(definition: object, field: string): unknown {
  const descriptor = ObjectGetOwnPropertyDescriptor(definition, field);
  if (descriptor === undefined) invalid(`a tool definition needs an own "${field}" property (inherited ones are not read)`);
  return readDescriptor(definition, field, descriptor);
}

/** An optional field: `undefined` when it is not an own property (inherited ones are not read). */
function readOptionalField(definition: object, field: string): unknown {
  const descriptor = ObjectGetOwnPropertyDescriptor(definition, field);
  return descriptor === undefined ? undefined : readDescriptor(definition, field, descriptor);
}

function readDescriptor(definition: object, field: string, descriptor: PropertyDescriptor): unknown {
  if (ObjectHasOwn(descriptor, "value")) return descriptor.value;
  const get = descriptor.get;
  if (get === undefined) invalid(`the tool definition's "${field}" has a setter but no getter`);
  try {
    return ReflectApply(get, definition, []);
  } catch (error) {
    if (isToolContractError(error)) throw error;
    throw new ToolContractError(ContractErrorCode.INVALID_TOOL_DEFINITION, `reading the tool definition's "${field}" threw`, {
      cause: error,
    });
  }
}

/** `{ timeoutMs }` when the definition has an own `timeoutMs` (read once, checked), else nothing. */
function optionalTimeout(definition: object, name: string): { timeoutMs?: number } {
  if (ObjectGetOwnPropertyDescriptor(definition, "timeoutMs") === undefined) return {};
  const value = readField(definition, "timeoutMs");
  return value === undefined
    ? {}
    : { timeoutMs: checkTimeoutMs(value, `tool "${name}": timeoutMs`, ContractErrorCode.INVALID_TOOL_DEFINITION) };
}

/**
 * `{ durability }` when the definition has an own `durability` (read once, checked, copied
 * frozen), else nothing: "at-most-once", or `{ atLeastOnce: { maxAttempts } }` whose objects
 * have exactly those own data properties (a getter or a Proxy is refused, never run).
 */
function optionalDurability(definition: object, name: string): { durability?: ToolDurability } {
  if (ObjectGetOwnPropertyDescriptor(definition, "durability") === undefined) return {};
  const value = readField(definition, "durability");
  if (value === undefined) return {};
  if (value === "at-most-once") return { durability: "at-most-once" };
  const what = `tool "${name}": durability`;
  const shape = `must be "at-most-once" or { atLeastOnce: { maxAttempts } }`;
  const outer = plainRecordOf(value, ["atLeastOnce"]);
  const inner = outer === undefined ? undefined : plainRecordOf(outer.atLeastOnce, ["maxAttempts"]);
  if (inner === undefined) invalid(`${what} ${shape}`);
  const maxAttempts = inner.maxAttempts;
  if (typeof maxAttempts !== "number" || !NumberIsInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > MAX_DURABLE_ATTEMPTS) {
    invalid(`${what}.atLeastOnce.maxAttempts must be an integer from 1 to ${MAX_DURABLE_ATTEMPTS}`);
  }
  return { durability: ObjectFreeze({ atLeastOnce: ObjectFreeze({ maxAttempts }) }) };
}

/** The own data values of an object that has exactly `keys` (no Proxy, no accessor, nothing else), or undefined. */
function plainRecordOf(value: unknown, keys: readonly string[]): Record<string, unknown> | undefined {
  if (typeof value !== "object" || value === null || isProxy(value) || ArrayIsArray(value)) return undefined;
  if (ReflectOwnKeys(value).length !== keys.length) return undefined;
  const record: Record<string, unknown> = {};
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index] as string;
    const descriptor = ObjectGetOwnPropertyDescriptor(value, key);
    if (descriptor === undefined || !ObjectHasOwn(descriptor, "value")) return undefined;
    record[key] = descriptor.value;
  }
  return record;
}

/** An optional budgets field: read once if it is an own property (an inherited one is not read), then validated. */
function readOptionalBudgets<T>(
  definition: object,
  name: string,
  field: "budgets" | "argumentBudgets" | "attachmentBudgets",
  read: (value: unknown, option: string, code: typeof ContractErrorCode.INVALID_TOOL_DEFINITION) => T,
): T | undefined {
  if (ObjectGetOwnPropertyDescriptor(definition, field) === undefined) return undefined;
  const budgets = readField(definition, field);
  return budgets === undefined ? undefined : read(budgets, `tool "${name}": ${field}`, ContractErrorCode.INVALID_TOOL_DEFINITION);
}

function invalid(message: string): never {
  throw new ToolContractError(ContractErrorCode.INVALID_TOOL_DEFINITION, message);
}

// ToolRegistry: owns frozen tool snapshots by name. Batches register atomically.
// docs/contract.md: rule 2 — atomic registration, rule 3 — registry snapshot.

/** Anything `ToolRegistry` accepts as one tool: a definition (either form) or a `defineTool` snapshot. */
// (Methods are bivariant in their parameters, so any ToolDefinition<A, O> fits.) `N`: the names, when typed.
export type ToolLike<N extends string = string> = (ToolDefinition | SchemaToolDefinition | Tool) & { readonly name: N };

let toolsOf: (registry: object) => Map<string, Tool> | undefined;

/**
 * Name → frozen tool. Registration snapshots every definition first; a batch changes the
 * registry only if every member is valid and no name repeats (inside the batch or against
 * what is registered). Reads never expose the internal Map. `N`: the names of the tools it was
 * made with, when their types say them (`defineTool({ name: "add", … })`); adapters key their
 * tools by it. Types only: `register` adds names the type does not follow.
 */
export class ToolRegistry<const N extends string = string> {
  readonly #tools = new Map<string, Tool>();

  static {
    // The private field is the brand: a Proxy or a fake with the right prototype has none.
    toolsOf = (registry) => (#tools in registry ? (registry as ToolRegistry).#tools : undefined);
  }

  constructor(tools?: Iterable<ToolLike<N>>) {
    if (tools !== undefined) this.registerMany(tools);
  }

  /** Registers one tool; throws ToolContractError and changes nothing if it is invalid or its name is taken. */
  register(tool: ToolLike): void {
    this.registerMany([tool]);
  }

  /** Registers a batch atomically: all of it, or (with a ToolContractError) none of it. */
  registerMany(tools: Iterable<ToolLike>): void {
    // Phase 1: snapshot and check everything; the registry is not touched.
    const batch = snapshotBatch(tools);
    const names = new Map<string, Tool>();
    for (let index = 0; index < batch.length; index += 1) {
      const tool = batch[index] as Tool;
      if (MapPrototypeHas(names, tool.name)) duplicate(`tool name "${tool.name}" appears twice in the batch`);
      if (MapPrototypeHas(this.#tools, tool.name)) duplicate(`tool name "${tool.name}" is already registered`);
      MapPrototypeSet(names, tool.name, tool);
    }
    // Phase 2: nothing can fail any more.
    for (let index = 0; index < batch.length; index += 1) {
      const tool = batch[index] as Tool;
      MapPrototypeSet(this.#tools, tool.name, tool);
    }
  }

  /** The frozen tool registered under `name`, if any. */
  get(name: string): Tool | undefined {
    return MapPrototypeGet(this.#tools, name);
  }

  has(name: string): boolean {
    return MapPrototypeHas(this.#tools, name);
  }

  /** Registered names, in registration order. */
  names(): string[] {
    const names: string[] = [];
    const next = mapKeyStepper(this.#tools);
    for (let step = next(); step.done !== true; step = next()) names[names.length] = step.value;
    return names;
  }

  get size(): number {
    return MapPrototypeGetSize(this.#tools);
  }

  /** A registry with the same membership and the very same frozen tool objects, independent from now on. */
  snapshot(): ToolRegistry<N> {
    const copy = new ToolRegistry<N>();
    const target = copy.#tools;
    const next = mapEntryStepper(this.#tools);
    for (let step = next(); step.done !== true; step = next()) MapPrototypeSet(target, step.value[0], step.value[1]);
    return copy;
  }
}

/** The registry's internal map, for the executors; a ToolContractError if `registry` is not a ToolRegistry. */
export function registeredTools(registry: unknown): Map<string, Tool> {
  const tools = typeof registry === "object" && registry !== null ? toolsOf(registry) : undefined;
  if (tools === undefined) throw new ToolContractError(ContractErrorCode.INVALID_ARGUMENT, "registry must be a ToolRegistry");
  return tools;
}

/** Phase 1 of registration: every member snapshotted, or a ToolContractError. */
function snapshotBatch(tools: Iterable<ToolLike>): Tool[] {
  if (typeof tools !== "object" || tools === null || isProxy(tools)) {
    throw new ToolContractError(
      ContractErrorCode.INVALID_TOOL_DEFINITION,
      "tools must be an array or another iterable object (not a Proxy)",
    );
  }
  const batch: Tool[] = [];
  if (ArrayIsArray(tools)) {
    // By index, not by the (patchable) array iterator; holes and accessors are refused.
    const length = tools.length;
    for (let index = 0; index < length; index += 1) {
      const descriptor = ObjectGetOwnPropertyDescriptor(tools, index);
      if (descriptor === undefined || !ObjectHasOwn(descriptor, "value")) {
        throw new ToolContractError(ContractErrorCode.INVALID_TOOL_DEFINITION, `tools[${index}] is a hole or an accessor`);
      }
      batch[index] = defineTool(descriptor.value);
    }
    return batch;
  }
  try {
    for (const tool of tools) batch[batch.length] = defineTool(tool);
  } catch (error) {
    if (isToolContractError(error)) throw error;
    throw new ToolContractError(ContractErrorCode.INVALID_TOOL_DEFINITION, "iterating the tools threw", { cause: error });
  }
  return batch;
}

function duplicate(message: string): never {
  throw new ToolContractError(ContractErrorCode.DUPLICATE_TOOL_NAME, message);
}
