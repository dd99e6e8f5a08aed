// describeTools: what a model is shown of the registered tools, `{ name, description,
// parameters }` with `parameters` a JSON Schema (draft 2020-12), and `outputSchema` beside
// it for a tool that declares one. The one place every adapter (AI SDK, MCP, Pi, OpenAI
// Agents) gets its tool schemas from.
// docs/adapters.md (the schemas every adapter shows); docs/contract.md: rule 1 — definition snapshot (schemas read once).
import { ContractErrorCode } from "./constants.js";
import { ToolContractError } from "./errors.js";
import { outputJsonSchema } from "./output-schema.js";
import { type JsonSchema, toolJsonSchema } from "./parameters.js";
import { isProxy, MapPrototypeGet, ObjectFreeze } from "./primordials.js";
import { registeredTools, type ToolRegistry } from "./tools.js";
import { readOptions, validateOneOf } from "./validators.js";

/** One tool as a model sees it. Frozen, `parameters` deeply. */
export interface ToolDescription {
  readonly name: string;
  readonly description: string;
  /** A JSON Schema (draft 2020-12) of the arguments. */
  readonly parameters: JsonSchema;
  /**
   * A JSON Schema (draft 2020-12) of the output, present only when the tool declares an
   * `outputSchema` whose library can describe it (the output is checked all the same).
   */
  readonly outputSchema?: JsonSchema;
}

/** What `describeTools` reads the tools of: a registry, or anything holding one (every ToolExecutor). */
export type ToolSource = ToolRegistry | { readonly registry: ToolRegistry };

/** Options of `describeTools`. */
export interface DescribeToolsOptions {
  /**
   * A tool with no JSON Schema (a `validate` function and no `jsonSchema`): `"throw"` (the
   * default) refuses with INVALID_TOOL_DEFINITION naming the tool; `"any-object"` shows it
   * as `{ type: "object", additionalProperties: true }`, leaving validation to toolgate.
   */
  readonly withoutSchema?: "throw" | "any-object" | undefined;
}

const ANY_OBJECT: JsonSchema = ObjectFreeze({ type: "object", additionalProperties: true });

/**
 * The registered tools of `source`, in registration order, as frozen `{ name, description,
 * parameters }` entries (with `outputSchema`, the JSON Schema of the declared output, when
 * the tool has one its library can describe; made the same way as `parameters`). `parameters` is, in this order: the definition's own `jsonSchema`;
 * the Standard JSON Schema of its `parameters` (`~standard.jsonSchema.input`, zod 4 has it;
 * `typeboxParameters` gives the TypeBox schema without its `~kind` markers); the schema of
 * a `validatorFromTypeBox` validator. A tool with none of these is a
 * ToolContractError(INVALID_TOOL_DEFINITION) naming it (see `withoutSchema`), as is a
 * library that cannot make a JSON Schema for its schema.
 */
export function describeTools(source: ToolSource, options: DescribeToolsOptions = {}): readonly ToolDescription[] {
  const registry = registryOf(source);
  const withoutSchema = readWithoutSchema(options);
  const tools = registeredTools(registry);
  const names = registry.names();
  const descriptions: ToolDescription[] = [];
  for (let index = 0; index < names.length; index += 1) {
    const tool = MapPrototypeGet(tools, names[index] as string);
    if (tool === undefined) continue;
    let parameters = toolJsonSchema(tool);
    if (parameters === undefined) {
      if (withoutSchema === "throw") {
        throw new ToolContractError(
          ContractErrorCode.INVALID_TOOL_DEFINITION,
          `tool "${tool.name}" has no JSON Schema: define it with "parameters" (a schema with a Standard JSON Schema, such as zod 4 ` +
            `or typeboxParameters), or give it a "jsonSchema"`,
        );
      }
      parameters = ANY_OBJECT;
    }
    const outputSchema = outputJsonSchema(tool);
    descriptions[index] = ObjectFreeze(
      outputSchema === undefined
        ? { name: tool.name, description: tool.description, parameters }
        : { name: tool.name, description: tool.description, parameters, outputSchema },
    );
  }
  return ObjectFreeze(descriptions);
}

function registryOf(source: unknown): ToolRegistry {
  if (typeof source === "object" && source !== null && !isProxy(source)) {
    try {
      registeredTools(source);
      return source as ToolRegistry;
    } catch {
      // not a registry itself: an executor holding one
    }
    const registry: unknown = (source as { readonly registry?: unknown }).registry;
    registeredTools(registry); // a ToolContractError(INVALID_ARGUMENT) for anything else
    return registry as ToolRegistry;
  }
  throw new ToolContractError(
    ContractErrorCode.INVALID_ARGUMENT,
    "describeTools: source must be a ToolRegistry or an executor with a `registry`",
  );
}

const DESCRIBE_OPTION_KEYS: readonly string[] = ObjectFreeze(["withoutSchema"]);
const WITHOUT_SCHEMA_CHOICES: readonly ("throw" | "any-object")[] = ObjectFreeze(["throw", "any-object"] as const);

function readWithoutSchema(options: unknown): "throw" | "any-object" {
  const { withoutSchema } = readOptions(options, "describeTools: options", DESCRIBE_OPTION_KEYS);
  if (withoutSchema === undefined) return "throw";
  validateOneOf(withoutSchema, "describeTools: options.withoutSchema", WITHOUT_SCHEMA_CHOICES);
  return withoutSchema;
}
