// Structured output: a tool may declare `outputSchema` (a Standard Schema v1: zod 4, valibot,
// ArkType, or TypeBox through `typeboxParameters`), read once at definition time like
// `parameters`. What the tool returns is checked against it where the tool runs (inside the
// worker thread on a pool, on the host across a queue), before it is serialized; a mismatch
// is the call's TOOL_EXECUTION_FAILED naming each path. Its JSON Schema is what the MCP
// adapter publishes as `outputSchema` (and the AI SDK adapter as its `outputSchema`).
// docs/contract.md — Structured output.
import { ContractErrorCode } from "./constants.js";
import { ToolContractError } from "./errors.js";
import { DEFAULT_MAX_LISTED_ISSUES } from "./issues.js";
import { copyJsonSchema, JSON_SCHEMA_TARGET, type JsonSchema, looksLikeTypeBox } from "./parameters.js";
import { WeakMapPrototypeGet, WeakMapPrototypeSet } from "./primordials.js";
import { readStandardSchema, type StandardSchemaValidate, standardSchemaValidator } from "./standard-schema.js";

/** What a snapshot keeps of its `outputSchema`: the synchronous check, and how to describe it. */
export interface OutputSchema {
  readonly validate: StandardSchemaValidate<unknown>;
  readonly generate: (() => unknown) | undefined;
}

const outputSchemas = new WeakMap<object, OutputSchema>();
const generated = new WeakMap<object, JsonSchema>();

/**
 * Reads the `outputSchema` of the definition of tool `name` (read once, as an own property):
 * a Standard Schema v1, whose validate is synchronous. Throws ToolContractError(INVALID_TOOL_DEFINITION)
 * naming the tool otherwise (a bare TypeBox schema: wrap it with `typeboxParameters`).
 */
export function readOutputSchema(name: string, schema: unknown): OutputSchema {
  if (looksLikeTypeBox(schema)) {
    throw new ToolContractError(
      ContractErrorCode.INVALID_TOOL_DEFINITION,
      `tool "${name}": outputSchema is a TypeBox schema; wrap it with typeboxParameters(schema) from "toolgate/typebox"`,
    );
  }
  const parts = readStandardSchema(schema, `tool "${name}": outputSchema`, true);
  const describe = parts.jsonSchemaOutput ?? parts.jsonSchemaInput;
  return {
    validate: standardSchemaValidator(parts, DEFAULT_MAX_LISTED_ISSUES),
    generate: describe === undefined ? undefined : () => describe({ target: JSON_SCHEMA_TARGET }),
  };
}

/** Remembers the output schema of a `defineTool` snapshot. */
export function recordOutputSchema(tool: object, schema: OutputSchema): void {
  WeakMapPrototypeSet(outputSchemas, tool, schema);
}

/** The check of a snapshot's output, or undefined when it declares no `outputSchema`. */
export function outputValidator(tool: object): StandardSchemaValidate<unknown> | undefined {
  return WeakMapPrototypeGet(outputSchemas, tool)?.validate;
}

/**
 * The JSON Schema of a snapshot's output (frozen; the same object on every call), or
 * undefined when it declares no `outputSchema` or its library cannot describe it.
 */
export function outputJsonSchema(tool: { readonly name: string }): JsonSchema | undefined {
  const schema = WeakMapPrototypeGet(outputSchemas, tool);
  if (schema === undefined || schema.generate === undefined) return undefined;
  const cached = WeakMapPrototypeGet(generated, tool);
  if (cached !== undefined) return cached;
  let made: unknown;
  try {
    made = schema.generate();
  } catch (error) {
    throw new ToolContractError(
      ContractErrorCode.INVALID_TOOL_DEFINITION,
      `tool "${tool.name}": its schema library could not make a JSON Schema of the output`,
      { cause: error },
    );
  }
  const copy = copyJsonSchema(made, `tool "${tool.name}": the generated output JSON Schema`);
  WeakMapPrototypeSet(generated, tool, copy);
  return copy;
}

/** The message of a mismatch: each path and what is wrong there (`error`, from the schema's issues). */
export function outputMismatch(error: unknown): string {
  return "the tool's output does not match its outputSchema:\n" + (typeof error === "string" ? error : "  - $: invalid");
}
