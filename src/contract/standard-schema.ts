// Standard Schema v1 (https://standardschema.dev), read by the core without loading any
// schema library: the declarations (copied as the specification invites, so users need no
// extra package) and the synchronous `validate` a tool gets from such a schema. Tool
// validation is synchronous by contract: a schema the library marks as asynchronous is
// refused up front; any other that answers with a Promise is refused at that call (its
// promise observed, never left unhandled).
// docs/contract.md: rule 6 — validation first.
import { ContractErrorCode } from "./constants.js";
import { ToolContractError } from "./errors.js";
import { type ArgumentIssue, describeIssues, formatPath, readMaxIssues } from "./issues.js";
import { ArrayIsArray, isPromise, isProxy, ReflectApply, WeakSetPrototypeAdd, WeakSetPrototypeHas } from "./primordials.js";
import type { ValidationDecision } from "./tools.js";
import { isPlainObject, observeRejection, readDataProperty, readPlainDataProperty } from "./untrusted.js";
import { readOptions } from "./validators.js";

const MAX_ISSUES_OPTION_KEYS: readonly string[] = ["maxIssues"];

/** A Standard Schema v1: what zod 4, valibot 1, ArkType 2 and others expose. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": StandardSchemaV1Props<Input, Output>;
}

/** The `~standard` property of a Standard Schema v1. */
export interface StandardSchemaV1Props<Input = unknown, Output = Input> {
  readonly version: 1;
  readonly vendor: string;
  readonly validate: (value: unknown) => StandardSchemaV1Result<Output> | Promise<StandardSchemaV1Result<Output>>;
  readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  /** Standard JSON Schema v1: present when the library can describe the schema (zod 4 can). */
  readonly jsonSchema?: StandardJsonSchemaConverter | undefined;
}

/** The `~standard.jsonSchema` converter of the Standard JSON Schema v1 specification. */
export interface StandardJsonSchemaConverter {
  readonly input: (options: { readonly target: string }) => Record<string, unknown>;
  readonly output?: ((options: { readonly target: string }) => Record<string, unknown>) | undefined;
}

/** What a Standard Schema's `validate` returns: a value, or issues. */
export type StandardSchemaV1Result<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<StandardSchemaV1Issue> };

/** One issue reported by a Standard Schema. */
export interface StandardSchemaV1Issue {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
}

/** The output type of a Standard Schema: what `execute` receives. */
export type StandardSchemaV1Output<S extends StandardSchemaV1> = NonNullable<S["~standard"]["types"]>["output"];

/** Options of `validatorFromStandardSchema`. */
export interface StandardSchemaValidatorOptions {
  /** How many issues a refusal lists, 1 to 64 (default 8); the total is always stated. */
  readonly maxIssues?: number;
}

/** A `validate` function made from a Standard Schema (synchronous, without side effects). */
export type StandardSchemaValidate<T> = (args: unknown) => ValidationDecision<T>;

/** The message of the TOOL_VALIDATION_FAILED result for a schema that answered with a Promise. */
export const ASYNC_SCHEMA_MESSAGE =
  "async schemas are not supported: the schema's validate returned a Promise, but tool validation is synchronous " +
  "(remove async refinements, checks or transforms from the schema)";

/** What the core keeps of a Standard Schema, each field read once at definition time. */
export interface StandardSchemaParts {
  readonly validate: StandardSchemaV1Props["validate"];
  /** The props object, `this` of the library's own functions. */
  readonly props: object;
  readonly jsonSchemaInput: StandardJsonSchemaConverter["input"] | undefined;
  /** The converter's `output`, when the library has one (the JSON Schema of what `validate` gives back). */
  readonly jsonSchemaOutput?: StandardJsonSchemaConverter["input"] | undefined;
}

/**
 * Makes a tool's `validate` from a Standard Schema v1. `{ ok: true, value }` carries the
 * schema's output (defaults and transforms applied); `{ ok: false, error }` lists the issues
 * as `  - $.path.to[1].key: message` lines (at most `maxIssues`, each cut to a fixed length).
 *
 * Asynchronous schemas: a schema the library marks as asynchronous up front (valibot's
 * `async: true`) is refused here, with ToolContractError(INVALID_TOOL_DEFINITION). Others
 * (zod's async refinements, for one) are only found out when `validate` returns a Promise,
 * which can depend on the arguments; that call throws, which the boundary reports as
 * TOOL_VALIDATION_FAILED with `ASYNC_SCHEMA_MESSAGE`, after attaching a handler to the
 * Promise so its rejection is never unhandled. (The async work it started still runs.)
 */
export function validatorFromStandardSchema<S extends StandardSchemaV1>(
  schema: S,
  options: StandardSchemaValidatorOptions = {},
): StandardSchemaValidate<StandardSchemaV1Output<S>> {
  const parts = readStandardSchema(schema, "validatorFromStandardSchema");
  const { maxIssues } = readOptions(options, "validatorFromStandardSchema: options", MAX_ISSUES_OPTION_KEYS);
  return standardSchemaValidator(parts, readMaxIssues(maxIssues as number | undefined, "validatorFromStandardSchema"));
}

/** The synchronous validator over parts already read. */
export function standardSchemaValidator<T>(parts: StandardSchemaParts, maxIssues: number): StandardSchemaValidate<T> {
  const { validate, props } = parts;
  const validator: StandardSchemaValidate<T> = (args) => {
    // Called with its own props object as `this`, as the libraries expect, without
    // consulting Function.prototype.call.
    const result: unknown = ReflectApply(validate, props, [args]);
    if (isPromise(result)) {
      observeRejection(result, ignore);
      throw new Error(ASYNC_SCHEMA_MESSAGE);
    }
    if (typeof result !== "object" || result === null) throw new Error("the schema's validate returned neither a value nor issues");
    // Its three fields are read as readDataProperty reads them, the plain-object check made once.
    const plain = isPlainObject(result);
    // The common result, `{ value }` on a plain object: an absent `then` or `issues` (not even on
    // Object.prototype, and nothing on that chain runs code) is told by `in` at a site of its own.
    if (plain && !("then" in result) && !("issues" in result)) return { ok: true, value: readPlainDataProperty(result, "value") as T };
    const read = plain ? readPlainDataProperty : readDataProperty;
    const then = read(result, "then");
    if (typeof then === "function") {
      // A promise-like of another realm or library: observed the same way.
      ReflectApply(then, result, [ignore, ignore]);
      throw new Error(ASYNC_SCHEMA_MESSAGE);
    }
    const issues = read(result, "issues");
    if (issues === undefined || issues === null) return { ok: true, value: read(result, "value") as T };
    if (!ArrayIsArray(issues) || isProxy(issues)) throw new Error("the schema's validate returned issues that are not an array");
    return { ok: false, error: describeStandardIssues(issues, maxIssues) };
  };
  WeakSetPrototypeAdd(ownDecisions, validator);
  return validator;
}

// Validators made here: each decision is a fresh literal, `{ ok: true, value }` or
// `{ ok: false, error: <string> }`, so a tool's snapshot may take it without reading it as untrusted.
const ownDecisions = new WeakSet<object>();

/** True for a validator `standardSchemaValidator` made (its decisions are its own literals). */
export function decidesOwnLiterals(validate: unknown): boolean {
  return typeof validate === "function" && WeakSetPrototypeHas(ownDecisions, validate);
}

/**
 * Reads a Standard Schema v1 once: `~standard`, then its `version`, `vendor`, `validate`
 * and `jsonSchema.input` (and `jsonSchema.output`, `withOutputConverter`). Anything else, or a schema the library marks as asynchronous, is
 * a ToolContractError(INVALID_TOOL_DEFINITION) whose message starts with `what`.
 */
export function readStandardSchema(schema: unknown, what: string, withOutputConverter = false): StandardSchemaParts {
  // Schemas are objects (zod, valibot) or functions (ArkType).
  if ((typeof schema !== "object" && typeof schema !== "function") || schema === null || isProxy(schema)) notStandard(what);
  const props = readLibraryField(schema, "~standard", what);
  if (typeof props !== "object" || props === null || isProxy(props)) notStandard(what);
  const version = readLibraryField(props, "version", what);
  const vendor = readLibraryField(props, "vendor", what);
  const validate = readLibraryField(props, "validate", what);
  if (version !== 1 || typeof validate !== "function" || isProxy(validate)) notStandard(what);
  // valibot says up front whether a schema is asynchronous; refuse it before any call.
  if (vendor === "valibot" && readLibraryField(schema, "async", what) === true) {
    throw new ToolContractError(
      ContractErrorCode.INVALID_TOOL_DEFINITION,
      `${what}: async schemas are not supported (this valibot schema is async); tool validation is synchronous`,
    );
  }
  const converter = readLibraryField(props, "jsonSchema", what);
  let jsonSchemaInput: StandardJsonSchemaConverter["input"] | undefined;
  let jsonSchemaOutput: StandardJsonSchemaConverter["input"] | undefined;
  if (typeof converter === "object" && converter !== null && !isProxy(converter)) {
    const input = readLibraryField(converter, "input", what);
    if (typeof input === "function" && !isProxy(input)) {
      jsonSchemaInput = (options) => ReflectApply(input, converter, [options]) as Record<string, unknown>;
    }
    const output = withOutputConverter ? readLibraryField(converter, "output", what) : undefined;
    if (typeof output === "function" && !isProxy(output)) {
      jsonSchemaOutput = (options) => ReflectApply(output, converter, [options]) as Record<string, unknown>;
    }
  }
  return { validate: validate as StandardSchemaV1Props["validate"], props, jsonSchemaInput, jsonSchemaOutput };
}

/**
 * A schema library's own field, read with an ordinary get: libraries define them as lazy
 * getters or on prototypes (zod does both), so own-data-only reading would refuse them.
 */
function readLibraryField(object: object, key: string, what: string): unknown {
  try {
    return (object as Record<string, unknown>)[key];
  } catch (error) {
    throw new ToolContractError(ContractErrorCode.INVALID_TOOL_DEFINITION, `${what}: reading the schema's "${key}" threw`, {
      cause: error,
    });
  }
}

function notStandard(what: string): never {
  throw new ToolContractError(
    ContractErrorCode.INVALID_TOOL_DEFINITION,
    `${what}: expected a Standard Schema v1 (an object with a \`~standard\` property of version 1 and a validate function)`,
  );
}

function describeStandardIssues(issues: readonly unknown[], maxIssues: number): string {
  if (issues.length === 0) return describeIssues([{ path: "$", message: "does not match the schema" }], 1);
  const listed: ArgumentIssue[] = [];
  for (let index = 0; index < issues.length && index < maxIssues; index += 1) listed[listed.length] = readIssue(issues[index]);
  return describeIssues(listed, issues.length);
}

function readIssue(issue: unknown): ArgumentIssue {
  if (typeof issue !== "object" || issue === null) return { path: "$", message: "invalid" };
  const message = readDataProperty(issue, "message");
  const path = readDataProperty(issue, "path");
  return {
    path: ArrayIsArray(path) && !isProxy(path) ? formatPath(pathSegments(path)) : "$",
    message: typeof message === "string" ? message : "invalid",
  };
}

// Only as many segments as a bounded path line can show are read.
const MAX_PATH_SEGMENTS = 64;

/** `["tags", 1]` or valibot's `[{ key: "tags" }, { key: 1 }]` → `["tags", 1]`. */
function pathSegments(path: readonly unknown[]): (string | number)[] {
  const segments: (string | number)[] = [];
  for (let index = 0; index < path.length && index < MAX_PATH_SEGMENTS; index += 1) {
    const segment = path[index];
    const key = typeof segment === "object" && segment !== null ? readDataProperty(segment, "key") : segment;
    segments[index] = typeof key === "number" || typeof key === "string" ? key : typeof key === "symbol" ? "<symbol>" : "?";
  }
  return segments;
}

function ignore(): void {}
