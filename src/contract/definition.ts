// Tool definitions: the four-field contract (or its schema-first form, `parameters` in
// place of `validate`), and defineTool(), which turns a caller's object into a frozen
// snapshot whose functions cannot be redirected afterwards.
import { COURSE_TOOL_INVALID_TOOL_DEFINITION } from "./constants.js";
import { isToolContractError, ToolContractError } from "./errors.js";
import { type JsonSchema, readToolArguments, recordToolSchema } from "./parameters.js";
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
import type { StandardSchemaV1, StandardSchemaV1Output } from "./standard-schema.js";

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
  /**
   * Tells the caller how far the tool has got (its `onProgress` call option). Cheap to call
   * often: bursts are coalesced, and nothing is delivered once the call settled or aborted.
   * A report that is not `{ progress: number, total?: number, message?: string }` throws a
   * TypeError.
   */
  readonly reportProgress: (report: ToolProgressReport) => void;
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
  /** The JSON Schema of the arguments `validate` accepts, for `describeTools` (copied at definition time). */
  jsonSchema?: JsonSchema;
}

/**
 * The schema-first form: `parameters` is a Standard Schema v1 (zod 4, valibot 1, ArkType,
 * or TypeBox through `typeboxParameters` of `toolgate/typebox`) and `execute`'s arguments
 * are its output type.
 */
export interface SchemaToolDefinition<S extends StandardSchemaV1 = StandardSchemaV1, O = unknown> {
  /** Non-empty; the name the model calls. */
  name: string;
  /** Non-empty; shown to the model. */
  description: string;
  /** Validates the arguments (synchronously); its output is what `execute` receives. */
  parameters: S;
  /** Runs only with arguments the schema accepted. */
  execute(args: StandardSchemaV1Output<S>, context: ToolContext): Promise<O> | O;
  /** The JSON Schema shown to the model, when the schema library cannot make one (valibot). */
  jsonSchema?: JsonSchema;
}

/** A frozen tool snapshot made by `defineTool`; what a `ToolRegistry` holds. */
export type CourseTool<A = unknown, O = unknown> = Readonly<Omit<CourseToolDefinition<A, O>, "jsonSchema">>;
const definedTools = new WeakSet<object>();
// The validator each snapshot wraps, so adapters can recover metadata attached to it
// (for example the TypeBox schema behind a validator); never used to call it.
const validators = new WeakMap<CourseTool, (args: unknown) => unknown>();

/** True for tool snapshots made by `defineTool`. */
function isCourseTool(value: unknown): value is CourseTool {
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
export function defineTool<A, O>(definition: CourseToolDefinition<A, O>): CourseTool<A, O>;
export function defineTool<S extends StandardSchemaV1, O>(definition: SchemaToolDefinition<S, O>): CourseTool<StandardSchemaV1Output<S>, O>;
export function defineTool(definition: unknown): CourseTool;
export function defineTool(definition: unknown): CourseTool {
  if (isCourseTool(definition)) return definition;
  if (typeof definition !== "object" || definition === null || isProxy(definition)) {
    invalid("a tool definition must be an object (not a Proxy)");
  }
  const name = readField(definition, "name");
  const description = readField(definition, "description");
  const validateField = readOptionalField(definition, "validate");
  const parameters = readOptionalField(definition, "parameters");
  const execute = readField(definition, "execute");
  const jsonSchema = readOptionalField(definition, "jsonSchema");
  if (typeof name !== "string" || name.length === 0) invalid("a tool's name must be a non-empty string");
  if (typeof description !== "string" || description.length === 0) {
    invalid(`tool "${name}": description must be a non-empty string`);
  }
  const { validate, source } = readToolArguments(name, validateField, parameters, jsonSchema);
  if (typeof execute !== "function" || isProxy(execute)) invalid(`tool "${name}": execute must be a function`);
  const tool: CourseTool = ObjectFreeze({
    name,
    description,
    validate: ObjectFreeze((args: unknown) => ReflectApply(validate, undefined, [args])),
    execute: ObjectFreeze((args: unknown, context: ToolContext) => ReflectApply(execute, undefined, [args, context])),
  });
  WeakSetPrototypeAdd(definedTools, tool);
  WeakMapPrototypeSet(validators, tool, validate);
  recordToolSchema(tool, source);
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
    throw new ToolContractError(COURSE_TOOL_INVALID_TOOL_DEFINITION, `reading the tool definition's "${field}" threw`, { cause: error });
  }
}

function invalid(message: string): never {
  throw new ToolContractError(COURSE_TOOL_INVALID_TOOL_DEFINITION, message);
}
