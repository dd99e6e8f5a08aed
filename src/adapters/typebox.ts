// toolgate/typebox: TypeBox 1.x schemas for tools, so tool authors do not hand-write
// validators: `typeboxParameters(schema)` for the schema-first `defineTool({ parameters })`
// (a Standard Schema made from the TypeBox schema, so the core never loads TypeBox), and
// `validatorFromTypeBox(schema)` for the four-field form. The schema is compiled once
// (TypeBox's JIT checker); a refusal lists the failing paths, bounded.
// docs/adapters.md — Validators (`validatorFromTypeBox`); docs/contract.md: rule 6 — validation first.
import type { Static, TSchema } from "typebox";
import { Compile, type Validator } from "typebox/compile";
import { Settings } from "typebox/system";
import { ContractErrorCode } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { type ArgumentIssue, describeIssues, formatPath, readMaxIssues } from "../contract/issues.js";
import { recordValidatorJsonSchema } from "../contract/parameters.js";
import {
  ArrayIsArray,
  ObjectFreeze,
  StringPrototypeCharCodeAt,
  StringPrototypeSlice,
  WeakMapPrototypeGet,
  WeakMapPrototypeSet,
} from "../contract/primordials.js";
import type { StandardSchemaV1, StandardSchemaV1Issue, StandardSchemaV1Result } from "../contract/standard-schema.js";
import type { ValidationDecision } from "../contract/tools.js";
import { readDataProperty } from "../contract/untrusted.js";
import { readOptions, validateBoolean } from "../contract/validators.js";
import { recordTypeBoxSchema, typeBoxSchemaOf } from "./typebox-schemas.js";

export { typeBoxSchemaOf };

/** Options of `validatorFromTypeBox`. */
export interface TypeBoxValidatorOptions {
  /**
   * Convert the arguments toward the schema before checking, as Pi does: a deep copy of the
   * arguments goes through TypeBox's `Convert` (`"3"` → `3`, `"true"` → `true`, `1` → `"1"`
   * for a string, …) and the *converted copy* is checked and handed to `execute`. Off by
   * default: the model's arguments are then accepted only as they are, and what `execute`
   * receives is the call's own frozen snapshot.
   */
  readonly coerce?: boolean;
  /**
   * How many issues a refusal lists, 1 to 64 (default 8). TypeBox collects at most its own
   * global `maxErrors` setting (8 by default; see `Settings.Set` in `typebox/system`), so
   * more than that are listed only if that setting is raised too.
   */
  readonly maxIssues?: number;
}

/** A `validate` function made from a TypeBox schema (synchronous, without side effects). */
export type TypeBoxValidate<T> = (args: unknown) => ValidationDecision<T>;

// One compiled checker per schema object, shared by every validator made from it.
// Schemas are treated as immutable once compiled (TypeBox's own Compile assumes so too).
const compiled = new WeakMap<object, Validator>();
const cloneValue = structuredClone;

/**
 * Makes a tool's `validate` from a TypeBox schema. `{ ok: true, value }` when the arguments
 * match (the converted copy with `coerce: true`, else the arguments themselves);
 * `{ ok: false, error }` otherwise, where `error` is text such as
 * `Invalid arguments (1 issue):\n  - /left: must be number` (at most `maxIssues` lines, each
 * cut to a fixed length). Throws ToolContractError(INVALID_TOOL_DEFINITION) at once when
 * the schema cannot be compiled, and INVALID_ARGUMENT for bad options.
 */
export function validatorFromTypeBox<T extends TSchema>(schema: T, options: TypeBoxValidatorOptions = {}): TypeBoxValidate<Static<T>> {
  const checker = compileOnce(schema);
  const read = readOptions(options, "validatorFromTypeBox: options", VALIDATOR_OPTION_KEYS);
  const coerce = readCoerce(read.coerce, "validatorFromTypeBox: options.coerce");
  const maxIssues = readMaxIssues(read.maxIssues as number | undefined, "validatorFromTypeBox");
  const validate: TypeBoxValidate<Static<T>> = (args) => {
    // Convert mutates what it is given, so it only ever sees a private copy.
    const candidate = coerce ? checker.Convert(cloneValue(args)) : args;
    if (checker.Check(candidate)) return { ok: true, value: candidate as Static<T> };
    return { ok: false, error: describeTypeBoxErrors(checker, candidate, maxIssues) };
  };
  recordTypeBoxSchema(validate, schema);
  const jsonSchema = jsonSchemaCopy(schema);
  recordValidatorJsonSchema(validate, () => jsonSchema);
  return validate;
}

const VALIDATOR_OPTION_KEYS: readonly string[] = ["coerce", "maxIssues"];
const PARAMETERS_OPTION_KEYS: readonly string[] = ["coerce"];

/** `coerce`: a boolean, false when absent. */
function readCoerce(value: unknown, name: string): boolean {
  if (value === undefined) return false;
  validateBoolean(value, name);
  return value;
}

/** Options of `typeboxParameters`. */
export interface TypeBoxParametersOptions {
  /** As in `validatorFromTypeBox`: convert a copy of the arguments toward the schema before checking (default false). */
  readonly coerce?: boolean;
}

/**
 * A TypeBox schema as a Standard Schema v1 with a Standard JSON Schema, for the
 * schema-first form: `defineTool({ name, description, parameters: typeboxParameters(schema),
 * execute })`, where `execute`'s arguments are `Static<typeof schema>`. The schema is
 * compiled here, once, and its JSON Schema copied (without TypeBox's `~kind` markers), so
 * changing the schema object afterwards changes nothing.
 */
export interface TypeBoxParameters<T extends TSchema> extends StandardSchemaV1<unknown, Static<T>> {
  /** The TypeBox schema it was made from. */
  readonly schema: T;
}

/** Makes the `parameters` of a schema-first definition from a TypeBox schema (see `TypeBoxParameters`). */
export function typeboxParameters<T extends TSchema>(schema: T, options: TypeBoxParametersOptions = {}): TypeBoxParameters<T> {
  const checker = compileOnce(schema);
  const coerce = readCoerce(
    readOptions(options, "typeboxParameters: options", PARAMETERS_OPTION_KEYS).coerce,
    "typeboxParameters: options.coerce",
  );
  const jsonSchema = jsonSchemaCopy(schema);
  const validate = (args: unknown): StandardSchemaV1Result<Static<T>> => {
    const candidate = coerce ? checker.Convert(cloneValue(args)) : args;
    if (checker.Check(candidate)) return { value: candidate as Static<T> };
    const errors = checker.Errors(candidate);
    if (errors.length === 0) return { issues: [{ message: "does not match the schema" }] };
    const issues: StandardSchemaV1Issue[] = [];
    for (let index = 0; index < errors.length; index += 1) {
      const error = errors[index];
      if (error !== undefined) issues[issues.length] = { message: error.message, path: pointerSegments(error.instancePath, candidate) };
    }
    return { issues };
  };
  const describe = (): Record<string, unknown> => jsonSchema as Record<string, unknown>;
  return ObjectFreeze({
    "~standard": ObjectFreeze({
      version: 1 as const,
      vendor: "typebox",
      validate,
      jsonSchema: ObjectFreeze({ input: describe, output: describe }),
    }),
    schema,
  });
}

/** The schema as plain JSON (structured clone leaves out TypeBox's non-enumerable markers). */
function jsonSchemaCopy(schema: TSchema): unknown {
  try {
    return cloneValue(schema);
  } catch (error) {
    throw new ToolContractError(ContractErrorCode.INVALID_TOOL_DEFINITION, "the TypeBox schema is not plain JSON", { cause: error });
  }
}

function compileOnce(schema: TSchema): Validator {
  if (typeof schema !== "object" || schema === null) {
    throw new ToolContractError(
      ContractErrorCode.INVALID_TOOL_DEFINITION,
      "validatorFromTypeBox: the schema must be a TypeBox (JSON) schema object",
    );
  }
  const cached = WeakMapPrototypeGet(compiled, schema);
  if (cached !== undefined) return cached;
  let checker: Validator;
  try {
    checker = Compile(schema);
  } catch (error) {
    throw new ToolContractError(ContractErrorCode.INVALID_TOOL_DEFINITION, "validatorFromTypeBox: the schema could not be compiled", {
      cause: error,
    });
  }
  WeakMapPrototypeSet(compiled, schema, checker);
  return checker;
}

/**
 * The first `maxIssues` errors as "path: message" lines, and how many there were. TypeBox
 * itself buffers at most `Settings.Get().maxErrors` errors (8 by default, a global TypeBox
 * setting that also bounds its work on huge invalid values); when it hits that cap the
 * total is reported as a lower bound.
 */
function describeTypeBoxErrors(checker: Validator, value: unknown, maxIssues: number): string {
  const errors = checker.Errors(value);
  // A schema can refuse a value without TypeBox naming a reason; still say something useful.
  if (errors.length === 0) return describeIssues([{ path: "", message: "does not match the schema" }], 1);
  const listed: ArgumentIssue[] = [];
  for (let index = 0; index < errors.length && index < maxIssues; index += 1) {
    const error = errors[index];
    if (error !== undefined)
      listed[listed.length] = { path: formatPath(pointerSegments(error.instancePath, value)), message: error.message };
  }
  return describeIssues(listed, errors.length, errors.length < Settings.Get().maxErrors);
}

const SLASH = 0x2f;
const TILDE = 0x7e;
// Only as many segments as a bounded path line can show are read.
const MAX_POINTER_SEGMENTS = 64;

/**
 * A JSON pointer (`/items/2/qty`) as path segments, walking `value` alongside so that an
 * array index becomes a number (`[2]`) and an object key stays a string, even "2".
 */
function pointerSegments(pointer: string, value: unknown): (string | number)[] {
  const segments: (string | number)[] = [];
  let current = value;
  let start = 1;
  while (start <= pointer.length && segments.length < MAX_POINTER_SEGMENTS) {
    let end = start;
    while (end < pointer.length && StringPrototypeCharCodeAt(pointer, end) !== SLASH) end += 1;
    const key = unescapePointer(StringPrototypeSlice(pointer, start, end));
    const index = ArrayIsArray(current) ? arrayIndex(key) : -1;
    segments[segments.length] = index >= 0 ? index : key;
    current = typeof current === "object" && current !== null ? readDataProperty(current, key) : undefined;
    start = end + 1;
  }
  return segments;
}

/** The array index `key` spells in canonical form ("0", "17"), else -1. */
function arrayIndex(key: string): number {
  if (key.length === 0 || key.length > 15 || (key.length > 1 && StringPrototypeCharCodeAt(key, 0) === 0x30)) return -1;
  let index = 0;
  for (let position = 0; position < key.length; position += 1) {
    const digit = StringPrototypeCharCodeAt(key, position) - 0x30;
    if (digit < 0 || digit > 9) return -1;
    index = index * 10 + digit;
  }
  return index;
}

function unescapePointer(segment: string): string {
  let text = "";
  for (let index = 0; index < segment.length; index += 1) {
    const code = StringPrototypeCharCodeAt(segment, index);
    if (code === TILDE && index + 1 < segment.length) {
      const next = StringPrototypeCharCodeAt(segment, index + 1);
      text += next === 0x31 ? "/" : next === 0x30 ? "~" : "~" + StringPrototypeSlice(segment, index + 1, index + 2);
      index += 1;
    } else {
      text += StringPrototypeSlice(segment, index, index + 1);
    }
  }
  return text;
}
