// fromPiAgentTool (exported by toolgate/pi): an existing Pi AgentTool, of Pi 0.85 or 1.x, as
// a toolgate tool. Pi is not imported: the tool is read structurally, once.
// docs/adapters.md — Use it with Pi (`fromPiAgentTool`).
import type { TSchema } from "typebox";
import type { JsonSchema } from "../contract/parameters.js";
import { ArrayIsArray, ArrayPrototypeJoin, ReflectApply } from "../contract/primordials.js";
import { defineTool, type Tool, type ToolContext } from "../contract/tools.js";
import { readDataProperty } from "../contract/untrusted.js";
import { readOptions } from "../contract/validators.js";
import { type TypeBoxValidatorOptions, validatorFromTypeBox } from "./typebox.js";

const cloneValue = structuredClone;

/**
 * The parts of a Pi `AgentTool` (Pi 0.85 or 1.x) that `fromPiAgentTool` reads; every Pi
 * AgentTool has them. `A` is what `execute` takes, inferred from the tool.
 */
export interface PiAgentToolLike<A> {
  readonly name: string;
  readonly description: string;
  /** A TypeBox schema (Pi 0.85), or any JSON Schema object (Pi 1.x: pi-schema's builders, TypeBox, plain objects). */
  readonly parameters: object;
  readonly prepareArguments?: ((args: unknown) => unknown) | undefined;
  execute(toolCallId: string, params: A, signal?: AbortSignal): Promise<unknown>;
}

const FROM_PI_OPTION_KEYS: readonly string[] = ["coerce", "maxIssues"];

/** Options of `fromPiAgentTool`. */
export interface FromPiAgentToolOptions extends TypeBoxValidatorOptions {
  /**
   * As in `validatorFromTypeBox`, but **on by default** here: an existing Pi tool was
   * written for Pi's validation, which converts arguments (`"3"` → `3`) before checking.
   * Set `false` to accept the model's arguments only exactly as the schema says. TypeBox
   * converts along TypeBox schemas only: a plain JSON Schema is checked without conversion.
   */
  readonly coerce?: boolean;
}

/**
 * Wraps an existing Pi AgentTool as a toolgate tool (a frozen `defineTool` snapshot):
 *
 * - `validate`: `validatorFromTypeBox(agentTool.parameters, { coerce: true, ...options })`
 *   (TypeBox checks any JSON Schema), after the tool's own `prepareArguments` shim (given a
 *   private copy) when it has one. `jsonSchema` (what `describeTools` shows): `parameters`.
 * - `execute(args, context)` calls `agentTool.execute(toolCallId, args, signal, onUpdate)`.
 *   Each partial result the Pi tool sends to `onUpdate` becomes a progress report: `progress`
 *   counts the updates, `message` is the partial result's text.
 * - The result becomes text: text blocks joined with "\n", each image block as
 *   `[image: <mimeType>]`, any other block as `[<type> content]`; missing content is "".
 *   The boundary then bounds it like any output. `details`, `structuredContent`, `usage`,
 *   `terminate` and `addedToolNames` are dropped: a toolgate result is only its content.
 * - A Pi tool fails by throwing, or (Pi 1.x) by returning `isError: true`: either becomes
 *   TOOL_EXECUTION_FAILED, with the error's message or the result's text.
 */
export function fromPiAgentTool<A>(agentTool: PiAgentToolLike<A>, options: FromPiAgentToolOptions = {}): Tool<A, string> {
  // Each field is read once, so later changes to the Pi tool object redirect nothing.
  const { name, description, parameters, prepareArguments, execute } = agentTool;
  const { coerce, maxIssues } = readOptions(options, "fromPiAgentTool: options", FROM_PI_OPTION_KEYS);
  const schemaValidate = validatorFromTypeBox(parameters as TSchema, {
    coerce: (coerce ?? true) as boolean,
    ...(maxIssues === undefined ? {} : { maxIssues: maxIssues as number }),
  });
  const validate =
    typeof prepareArguments === "function"
      ? (args: unknown) => schemaValidate(ReflectApply(prepareArguments, agentTool, [cloneValue(args)]))
      : schemaValidate;
  return defineTool<A, string>({
    name,
    description,
    validate: validate as Tool<A, string>["validate"],
    jsonSchema: parameters as JsonSchema,
    async execute(args: A, context: ToolContext): Promise<string> {
      let updates = 0;
      const onUpdate = (partialResult: unknown): void => {
        updates += 1;
        let message: string | undefined;
        try {
          message = resultText(partialResult);
        } catch {
          message = undefined; // a malformed partial result still counts as progress
        }
        context.reportProgress(message === undefined ? { progress: updates } : { progress: updates, message });
      };
      const result: unknown = await ReflectApply(execute, agentTool, [context.toolCallId, args, context.signal, onUpdate]);
      const text = resultText(result);
      if (readDataProperty(result as object, "isError") === true) throw new Error(text);
      return text;
    },
  });
}

/** The model-facing text of a Pi tool result. Missing content (which Pi tolerates) is "". */
function resultText(result: unknown): string {
  if (typeof result !== "object" || result === null) throw new TypeError("the Pi tool returned no result object");
  const content = readDataProperty(result, "content");
  if (content === undefined || content === null) return "";
  if (!ArrayIsArray(content)) throw new TypeError("the Pi tool's result content is not an array");
  const parts: string[] = [];
  for (let index = 0; index < content.length; index += 1) parts[index] = blockText(content[index]);
  return ArrayPrototypeJoin(parts, "\n");
}

function blockText(block: unknown): string {
  if (typeof block !== "object" || block === null) return "[invalid content block]";
  const type = readDataProperty(block, "type");
  if (type === "text") {
    const text = readDataProperty(block, "text");
    return typeof text === "string" ? text : "";
  }
  if (type === "image") {
    const mimeType = readDataProperty(block, "mimeType");
    return `[image: ${typeof mimeType === "string" ? mimeType : "unknown type"}]`;
  }
  return `[${typeof type === "string" ? type : "unknown"} content]`;
}
