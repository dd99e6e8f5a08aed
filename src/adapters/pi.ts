// toolgate/pi: the bridge to the Pi agent SDK (@earendil-works/pi-agent-core 0.85).
//
// toPiAgentTool(s): registered toolgate tools as Pi AgentTools, so the boundary drops into
// an existing Pi agent loop. fromPiAgentTool: an existing Pi AgentTool as a toolgate tool,
// so it gains snapshotting, validation, the bounded serializer and worker execution.
//
// Pi types are imported as types only: at run time this module needs TypeBox, not Pi.
import type { AgentTool, AgentToolResult } from "@earendil-works/pi-agent-core";
import Type, { type Static, type TSchema } from "typebox";
import { snapshotToolCall } from "../contract/call.js";
import { COURSE_TOOL_INVALID_ARGUMENT } from "../contract/constants.js";
import { type CourseTool, defineTool, originalValidator, type ToolContext } from "../contract/definition.js";
import { isNonRecoverableToolError, type NonRecoverableToolError, ToolContractError } from "../contract/errors.js";
import { readDataProperty } from "../contract/failure.js";
import { ArrayPrototypeJoin, ReflectApply } from "../contract/primordials.js";
import { registeredTools, type ToolRegistry } from "../contract/registry.js";
import { type CourseToolResultMessage, errorContent } from "../contract/results.js";
import { validateArguments } from "../contract/validation.js";
import { executeToolCall } from "../executor/in-process.js";
import { type TypeBoxValidatorOptions, validatorFromTypeBox } from "./typebox.js";
import { recordTypeBoxSchema, typeBoxSchemaOf } from "./typebox-schemas.js";

/**
 * Anything that runs calls through the boundary for a registry it owns: the
 * `WorkerToolExecutor`, or your own wrapper. `executeToolCall` keeps the contract of the
 * in-process `executeToolCall(registry, call, signal)`: it resolves to a frozen, linked
 * result (a success or a recoverable `isError` result) and rejects with the abort reason,
 * a ToolContractError or a NonRecoverableToolError.
 */
export interface ToolCallExecutor {
  /** The registry whose tools the executor runs; names, descriptions and validators come from it. */
  readonly registry: ToolRegistry;
  /** Runs one call through the boundary. */
  executeToolCall(call: unknown, signal: AbortSignal): Promise<CourseToolResultMessage>;
}

/** `details` of a successful Pi tool result made by `toPiAgentTool`: the link to our result. */
export interface ToolgatePiDetails {
  /** The call id Pi passed to `execute` (our result's `toolCallId`). */
  readonly toolCallId: string;
  readonly toolName: string;
  /** Our result message's id, `tool-result-${toolCallId}`. */
  readonly resultId: string;
}

/** Options of `toPiAgentTool` / `toPiAgentTools`. */
export interface ToPiAgentToolOptions {
  /**
   * Called when the boundary rejects with a NonRecoverableToolError. Pi has no channel for
   * "stop the run" from a tool: whatever `execute` throws becomes an `isError` result and
   * the loop goes on. Abort the run here (e.g. `controller.abort(error)` or
   * `agent.abort()`) to keep toolgate's rule that such errors end the agent run. The error
   * is rethrown to Pi afterwards either way. A throw from this hook is ignored.
   */
  readonly onNonRecoverableError?: (error: NonRecoverableToolError, toolCallId: string) => void;
}

/** The Pi tool `toPiAgentTool` makes. */
export type ToolgatePiAgentTool = AgentTool<TSchema, ToolgatePiDetails>;

interface ResolvedExecutor {
  readonly registry: ToolRegistry;
  readonly run: (call: unknown, signal: AbortSignal) => Promise<CourseToolResultMessage>;
}

/**
 * Exposes the tool registered as `name` as a Pi AgentTool.
 *
 * - `parameters` (what the model is shown, and what Pi validates against): the TypeBox
 *   schema when the tool's `validate` came from `validatorFromTypeBox` (or
 *   `fromPiAgentTool`), otherwise an empty object schema that admits any object.
 * - Validation: toolgate's validator is authoritative. Pi validates (with its own coercion)
 *   *before* `execute`, so the Pi tool's `prepareArguments` runs our validator on the raw
 *   arguments first and, when it refuses, throws our `TOOL_ARGUMENTS_INVALID` /
 *   `TOOL_VALIDATION_FAILED` content, which Pi turns into an `isError` result. Arguments our
 *   validator accepts as they are also pass Pi's check, so Pi's own error messages and
 *   coercions do not come into play; `execute` then runs the call through the executor,
 *   which validates again (validators are pure) and runs the tool.
 * - Results: success → `{ content: [{ type: "text", text: content }], details }`; a
 *   recoverable `isError` result → `execute` throws an Error whose message is our error
 *   content, which Pi records as an `isError` result; any rejection (the abort reason
 *   itself, ToolContractError, NonRecoverableToolError) is rethrown unchanged.
 * - Pi's tool call id becomes our `toolCallId`; without a signal from Pi, the call gets a
 *   signal that never aborts.
 *
 * Throws ToolContractError(INVALID_ARGUMENT) when `executor` is neither a ToolRegistry nor
 * a ToolCallExecutor, or when no tool named `name` is registered.
 */
export function toPiAgentTool(
  executor: ToolRegistry | ToolCallExecutor,
  name: string,
  options: ToPiAgentToolOptions = {},
): ToolgatePiAgentTool {
  return makeAgentTool(resolveExecutor(executor), name, options);
}

/** Every registered tool as a Pi AgentTool, in registration order (see `toPiAgentTool`). */
export function toPiAgentTools(executor: ToolRegistry | ToolCallExecutor, options: ToPiAgentToolOptions = {}): ToolgatePiAgentTool[] {
  const resolved = resolveExecutor(executor);
  const names = resolved.registry.names();
  const tools: ToolgatePiAgentTool[] = [];
  for (let index = 0; index < names.length; index += 1) tools[index] = makeAgentTool(resolved, names[index] as string, options);
  return tools;
}

function makeAgentTool(executor: ResolvedExecutor, name: string, options: ToPiAgentToolOptions): ToolgatePiAgentTool {
  const tool = typeof name === "string" ? executor.registry.get(name) : undefined;
  if (tool === undefined) {
    throw new ToolContractError(COURSE_TOOL_INVALID_ARGUMENT, `toPiAgentTool: no tool named ${JSON.stringify(String(name))} is registered`);
  }
  const onNonRecoverableError = options.onNonRecoverableError;
  const validate = originalValidator(tool);
  const parameters = typeBoxSchemaOf(validate) ?? Type.Object({}, { additionalProperties: true });
  return {
    name: tool.name,
    label: tool.name,
    description: tool.description,
    parameters,
    prepareArguments(args: unknown): Static<TSchema> {
      precheck(tool, args);
      return args as Static<TSchema>;
    },
    async execute(toolCallId: string, params: Static<TSchema>, signal?: AbortSignal): Promise<AgentToolResult<ToolgatePiDetails>> {
      const call = { type: "toolCall", id: toolCallId, name: tool.name, arguments: params };
      let result: CourseToolResultMessage;
      try {
        result = await executor.run(call, signal ?? new AbortController().signal);
      } catch (error) {
        if (onNonRecoverableError !== undefined && isNonRecoverableToolError(error)) {
          try {
            onNonRecoverableError(error, toolCallId);
          } catch {
            // the hook's own failure must not replace the error Pi should record
          }
        }
        throw error;
      }
      // Pi's documented contract for failures is "throw, do not encode errors in content".
      if (result.isError) throw new Error(result.content);
      return {
        content: [{ type: "text", text: result.content }],
        details: { toolCallId: result.toolCallId, toolName: result.toolName, resultId: result.id },
      };
    },
  };
}

/**
 * Runs our validator on Pi's raw arguments before Pi's own check, so the model reads our
 * argument errors. Anything else (a malformed call, a NonRecoverableToolError) is left for
 * the executor, which reports it with the call's id.
 */
function precheck(tool: CourseTool, args: unknown): void {
  let verdict: ReturnType<typeof validateArguments>;
  try {
    const snapshot = snapshotToolCall({ type: "toolCall", id: "toolgate-precheck", name: tool.name, arguments: args });
    verdict = validateArguments(tool, snapshot.arguments);
  } catch {
    return;
  }
  if (!verdict.ok) throw new Error(errorContent(verdict.code, verdict.failure));
}

function resolveExecutor(executor: unknown): ResolvedExecutor {
  if (isToolRegistry(executor)) {
    return { registry: executor, run: (call, signal) => executeToolCall(executor, call, signal) };
  }
  if (typeof executor === "object" && executor !== null) {
    const registry: unknown = (executor as { readonly registry?: unknown }).registry;
    const run: unknown = (executor as { readonly executeToolCall?: unknown }).executeToolCall;
    if (isToolRegistry(registry) && typeof run === "function") {
      return {
        registry,
        run: (call, signal) => ReflectApply(run, executor, [call, signal]) as Promise<CourseToolResultMessage>,
      };
    }
  }
  throw new ToolContractError(
    COURSE_TOOL_INVALID_ARGUMENT,
    "executor must be a ToolRegistry or an object with a `registry` (ToolRegistry) and an `executeToolCall(call, signal)` method",
  );
}

function isToolRegistry(value: unknown): value is ToolRegistry {
  try {
    registeredTools(value);
    return true;
  } catch {
    return false;
  }
}

/** Options of `fromPiAgentTool`. */
export interface FromPiAgentToolOptions extends TypeBoxValidatorOptions {
  /**
   * As in `validatorFromTypeBox`, but **on by default** here: an existing Pi tool was
   * written for Pi's validation, which converts arguments (`"3"` → `3`) before checking.
   * Set `false` to accept the model's arguments only exactly as the schema says.
   */
  readonly coerce?: boolean;
}

/**
 * Wraps an existing Pi AgentTool as a toolgate tool (a frozen `defineTool` snapshot):
 *
 * - `validate`: `validatorFromTypeBox(agentTool.parameters, { coerce: true, ...options })`,
 *   after the tool's own `prepareArguments` shim (given a private copy) when it has one.
 * - `execute(args, { signal, toolCallId })` calls `agentTool.execute(toolCallId, args, signal)`
 *   (no `onUpdate`: partial updates are not relayed) and returns the result's text: its
 *   text blocks joined with "\n", each image block as `[image: <mimeType>]`, any other block
 *   as `[<type> content]`. The boundary then bounds it like any output. `details`,
 *   `terminate` and `addedToolNames` are dropped: a toolgate result is only its content.
 * - A Pi tool reports failure by throwing: that becomes TOOL_EXECUTION_FAILED with the message.
 */
export function fromPiAgentTool<T extends TSchema>(
  agentTool: AgentTool<T>,
  options: FromPiAgentToolOptions = {},
): CourseTool<Static<T>, string> {
  // Each field is read once, so later changes to the Pi tool object redirect nothing.
  const { name, description, parameters, prepareArguments, execute } = agentTool;
  const schemaValidate = validatorFromTypeBox(parameters, { ...options, coerce: options.coerce ?? true });
  let validate = schemaValidate;
  if (typeof prepareArguments === "function") {
    validate = (args) => schemaValidate(ReflectApply(prepareArguments, agentTool, [structuredClone(args)]));
    recordTypeBoxSchema(validate, parameters);
  }
  return defineTool<Static<T>, string>({
    name,
    description,
    validate,
    async execute(args: Static<T>, context: ToolContext): Promise<string> {
      const result: unknown = await ReflectApply(execute, agentTool, [context.toolCallId, args, context.signal, undefined]);
      return piResultText(result);
    },
  });
}

/** The model-facing text of a Pi tool result. Missing content (which Pi tolerates) is "". */
function piResultText(result: unknown): string {
  if (typeof result !== "object" || result === null) throw new TypeError("the Pi tool returned no result object");
  const content = readDataProperty(result, "content");
  if (content === undefined || content === null) return "";
  if (!Array.isArray(content)) throw new TypeError("the Pi tool's result content is not an array");
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
