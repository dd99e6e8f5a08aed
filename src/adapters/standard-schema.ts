// toolgate/standard-schema: a tool's `validate` from any Standard Schema v1 library (zod,
// valibot, ArkType, …). The boundary's validation is synchronous by contract, so schemas
// that validate asynchronously are refused: up front when the library says so, else at the
// call that turns out to be asynchronous (its promise observed, never left unhandled).
import { COURSE_TOOL_INVALID_TOOL_DEFINITION } from "../contract/constants.js";
import type { ValidationDecision } from "../contract/definition.js";
import { ToolContractError } from "../contract/errors.js";
import { readDataProperty } from "../contract/failure.js";
import { isPromise, PromisePrototypeThen, ReflectApply } from "../contract/primordials.js";
import { type ArgumentIssue, describeIssues, readMaxIssues } from "./issues.js";

// The few Standard Schema v1 types used here, copied as the specification invites
// (https://standardschema.dev), so users need no extra package for the declarations.

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

/**
 * Makes a tool's `validate` from a Standard Schema v1. `{ ok: true, value }` carries the
 * schema's output (defaults and transforms applied); `{ ok: false, error }` lists the issues
 * as `  - /path/to/key: message` lines (at most `maxIssues`, each cut to a fixed length).
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
  const props = readProps(schema);
  const maxIssues = readMaxIssues(options.maxIssues, "validatorFromStandardSchema");
  const standardValidate = props.validate;
  return (args) => {
    // Called with its own props object as `this`, as the libraries expect, without
    // consulting Function.prototype.call.
    const result: unknown = ReflectApply(standardValidate, props, [args]);
    if (isPromise(result)) {
      void PromisePrototypeThen(result as Promise<unknown>, undefined, ignore);
      throw new Error(ASYNC_SCHEMA_MESSAGE);
    }
    if (typeof result !== "object" || result === null) throw new Error("the schema's validate returned neither a value nor issues");
    const then = readDataProperty(result, "then");
    if (typeof then === "function") {
      // A promise-like of another realm or library: observed the same way.
      ReflectApply(then, result, [ignore, ignore]);
      throw new Error(ASYNC_SCHEMA_MESSAGE);
    }
    const issues = readDataProperty(result, "issues");
    if (issues === undefined || issues === null) {
      return { ok: true, value: readDataProperty(result, "value") as StandardSchemaV1Output<S> };
    }
    if (!Array.isArray(issues)) throw new Error("the schema's validate returned issues that are not an array");
    return { ok: false, error: describeStandardIssues(issues, maxIssues) };
  };
}

function readProps(schema: unknown): StandardSchemaV1Props {
  // Schemas are objects (zod, valibot) or functions (ArkType).
  if ((typeof schema !== "object" && typeof schema !== "function") || schema === null) notStandard();
  const props: unknown = (schema as { readonly "~standard"?: unknown })["~standard"];
  if (typeof props !== "object" || props === null) notStandard();
  const { version, vendor, validate } = props as Partial<StandardSchemaV1Props>;
  if (version !== 1 || typeof validate !== "function") notStandard();
  // valibot says up front whether a schema is asynchronous; refuse it before any call.
  if (vendor === "valibot" && (schema as { readonly async?: unknown }).async === true) {
    throw new ToolContractError(
      COURSE_TOOL_INVALID_TOOL_DEFINITION,
      "validatorFromStandardSchema: async schemas are not supported (this valibot schema is async); tool validation is synchronous",
    );
  }
  return props as StandardSchemaV1Props;
}

function notStandard(): never {
  throw new ToolContractError(
    COURSE_TOOL_INVALID_TOOL_DEFINITION,
    "validatorFromStandardSchema: expected a Standard Schema v1 (an object with a `~standard` property of version 1 and a validate function)",
  );
}

function describeStandardIssues(issues: readonly unknown[], maxIssues: number): string {
  const listed: ArgumentIssue[] = [];
  for (let index = 0; index < issues.length && index < maxIssues; index += 1) {
    listed[listed.length] = readIssue(issues[index]);
  }
  if (issues.length === 0) return describeIssues([{ path: "", message: "does not match the schema" }], 1);
  return describeIssues(listed, issues.length);
}

function readIssue(issue: unknown): ArgumentIssue {
  if (typeof issue !== "object" || issue === null) return { path: "", message: "invalid" };
  const message = readDataProperty(issue, "message");
  const path = readDataProperty(issue, "path");
  return { path: Array.isArray(path) ? pointer(path) : "", message: typeof message === "string" ? message : "invalid" };
}

/** `["tags", 1]` or `[{ key: "tags" }, { key: 1 }]` → "/tags/1". */
function pointer(path: readonly unknown[]): string {
  let text = "";
  // Only as many segments as can show in the bounded path line.
  for (let index = 0; index < path.length && text.length < 256; index += 1) {
    const segment = path[index];
    const key = typeof segment === "object" && segment !== null ? readDataProperty(segment, "key") : segment;
    text += "/" + (typeof key === "string" || typeof key === "number" ? String(key) : typeof key === "symbol" ? String(key) : "?");
  }
  return text;
}

function ignore(): void {}
