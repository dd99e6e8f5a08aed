// Structured output as the frameworks that have it take it (MCP's `outputSchema` and
// `structuredContent`, the AI SDK's `outputSchema`): an object schema, and a success's output
// as that object, parsed back from its content (the output the tool's schema accepted,
// serialized where the tool ran). One reading for every adapter.
// docs/contract.md — Structured output; docs/adapters.md — MCP, Use it with the Vercel AI SDK.
import { outputJsonSchema } from "../contract/output-schema.js";
import type { JsonSchema } from "../contract/parameters.js";
import { ArrayIsArray, JSONParse, ObjectGetOwnPropertyDescriptor, StructuredClone } from "../contract/primordials.js";
import type { ToolRegistry } from "../contract/tools.js";

/**
 * A copy (the caller's own) of the JSON Schema of tool `name`'s declared output, when it is an
 * object schema (`type: "object"`), as MCP requires of an `outputSchema`; else undefined (no
 * `outputSchema`, or one whose output is not an object: the tool is shown without one).
 */
export function structuredOutputSchema(registry: ToolRegistry, name: string): Record<string, unknown> | undefined {
  const tool = registry.get(name);
  const schema: JsonSchema | undefined = tool === undefined ? undefined : outputJsonSchema(tool);
  if (schema === undefined || ObjectGetOwnPropertyDescriptor(schema, "type")?.value !== "object") return undefined;
  // Our own plain JSON (copied through own data properties): the clone runs no code of anyone's.
  return StructuredClone(schema) as Record<string, unknown>;
}

/** A success's content parsed back to its object; undefined when it is not one (its content was cut to the content budget). */
export function structuredContentOf(content: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSONParse(content);
    return typeof value === "object" && value !== null && !ArrayIsArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Why a success of a tool with an output schema has no structured output. */
export const STRUCTURED_OUTPUT_CUT = "the output is over the content budget, so it cannot be sent whole as structured output";
