// toolgate/typebox: a tool's `validate` from a TypeBox 1.x schema, so tool authors do not
// hand-write validators. The schema is compiled once (TypeBox's JIT checker); a refusal
// lists the failing paths, bounded, so the model can fix its arguments.
import type { Static, TSchema } from "typebox";
import { Compile, type Validator } from "typebox/compile";
import { Settings } from "typebox/system";
import { COURSE_TOOL_INVALID_TOOL_DEFINITION } from "../contract/constants.js";
import type { ValidationDecision } from "../contract/definition.js";
import { ToolContractError } from "../contract/errors.js";
import { WeakMapPrototypeGet, WeakMapPrototypeSet } from "../contract/primordials.js";
import { type ArgumentIssue, describeIssues, readMaxIssues } from "./issues.js";
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
  const coerce = options.coerce === true;
  const maxIssues = readMaxIssues(options.maxIssues, "validatorFromTypeBox");
  const validate: TypeBoxValidate<Static<T>> = (args) => {
    // Convert mutates what it is given, so it only ever sees a private copy.
    const candidate = coerce ? checker.Convert(cloneValue(args)) : args;
    if (checker.Check(candidate)) return { ok: true, value: candidate as Static<T> };
    return { ok: false, error: describeTypeBoxErrors(checker, candidate, maxIssues) };
  };
  recordTypeBoxSchema(validate, schema);
  return validate;
}

function compileOnce(schema: TSchema): Validator {
  if (typeof schema !== "object" || schema === null) {
    throw new ToolContractError(
      COURSE_TOOL_INVALID_TOOL_DEFINITION,
      "validatorFromTypeBox: the schema must be a TypeBox (JSON) schema object",
    );
  }
  const cached = WeakMapPrototypeGet(compiled, schema);
  if (cached !== undefined) return cached;
  let checker: Validator;
  try {
    checker = Compile(schema);
  } catch (error) {
    throw new ToolContractError(COURSE_TOOL_INVALID_TOOL_DEFINITION, "validatorFromTypeBox: the schema could not be compiled", {
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
    if (error !== undefined) listed[listed.length] = { path: error.instancePath, message: error.message };
  }
  return describeIssues(listed, errors.length, errors.length < Settings.Get().maxErrors);
}
