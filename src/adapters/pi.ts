// toolgate/pi: the bridge to the Pi agent SDK (@earendil-works/pi-agent-core 0.85 and 1.x).
//
// toPiAgentTool(s): registered toolgate tools as Pi AgentTools, so the boundary drops into
// an existing Pi agent loop. fromPiAgentTool (pi-from.ts): an existing Pi AgentTool as a
// toolgate tool, so it gains snapshotting, validation, the bounded serializer and workers.
//
// Nothing here imports Pi, not even its types: the tools are plain objects of the shape both
// majors' `AgentTool` accept, so one build serves either major, whichever the user installed.
import { argumentBudgetsFor, type ResolvedArgumentBudgets } from "../contract/budgets.js";
import { AcceptedArguments, type JsonValue, snapshotArguments, validateArguments } from "../contract/call.js";
import { ContractErrorCode, ToolErrorCode } from "../contract/constants.js";
import type { DescribeToolsOptions } from "../contract/describe.js";
import { isNonRecoverableToolError, isToolContractError, type NonRecoverableToolError, ToolContractError } from "../contract/errors.js";
import type { JsonSchema } from "../contract/parameters.js";
import { isPromise, JSONStringify, ObjectFreeze, PromisePrototypeThen, PromiseReject, PromiseResolve } from "../contract/primordials.js";
import { errorContent, type ToolResultMessage } from "../contract/results.js";
import type { Tool } from "../contract/tools.js";
import { ToolRegistry } from "../contract/tools.js";
import { readOptions, validateFunction } from "../contract/validators.js";
import type { ProgressListener, ToolProgress } from "../executor/progress.js";
import type { ToolExecutor } from "../executor/tool-executor.js";
import {
  carriedBlocks,
  notCarriedText,
  resourceLinkText,
  type ToolgateAttachmentBlock,
  type ToolgateImageBlock,
  type ToolgateResourceLinkBlock,
  type ToolgateTextBlock,
  textBlock,
} from "./attachment-blocks.js";
import { refuseDurableOption } from "./durable-option.js";
import { checkPeerVersions } from "./peer-version.js";
import { describeForFramework, type FrameworkToolDescription, type ResolvedSource, resolveSource, type ToolCallSource } from "./source.js";

export { type FromPiAgentToolOptions, fromPiAgentTool, type PiAgentToolLike } from "./pi-from.js";

/**
 * Anything that runs calls through the boundary for a registry it owns: any ToolExecutor
 * (in-process, `WorkerToolExecutor`), or your own wrapper keeping the contract of
 * `executeToolCall(registry, call, signal, options)`.
 */
export type ToolCallExecutor = Pick<ToolExecutor, "registry" | "executeToolCall">;

/** `details` of a successful Pi tool result made by `toPiAgentTool`: the link to our result. */
export interface ToolgatePiDetails {
  /** The call id Pi passed to `execute` (our result's `toolCallId`). */
  readonly toolCallId: string;
  readonly toolName: string;
  /** Our result message's id, `tool-result-${toolCallId}`. */
  readonly resultId: string;
}

/** A text block of a Pi tool result (Pi's `TextContent`). */
export type ToolgatePiText = ToolgateTextBlock;

/** An image block of a Pi tool result (Pi's `ImageContent`): an attachment, its bytes in base64. */
export type ToolgatePiImage = ToolgateImageBlock;

/**
 * What a toolgate tool's Pi `execute` resolves to (`details`: ToolgatePiDetails), and what
 * it passes to Pi's `onUpdate` for a progress report (`details`: the ToolProgress).
 */
export interface ToolgatePiResult<D> {
  /** The text block first, then one image block per attachment (a progress report: text only). */
  readonly content: (ToolgatePiText | ToolgatePiImage)[];
  readonly details: D;
}

/**
 * The Pi tool `toPiAgentTool` makes: assignable to `AgentTool` of Pi 0.85 and of Pi 1.x
 * (a frozen plain object; `parameters` is a copy of the tool's JSON Schema of its own, which
 * Pi may write into: nothing written there reaches the registry or another adapter).
 */
export interface ToolgatePiAgentTool {
  readonly name: string;
  readonly label: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  /** Runs toolgate's validator on the raw arguments, before Pi's own check (see `toPiAgentTool`). */
  readonly prepareArguments: (args: unknown) => unknown;
  readonly execute: (
    toolCallId: string,
    params: unknown,
    signal?: AbortSignal,
    onUpdate?: (partialResult: ToolgatePiResult<ToolProgress>) => void,
  ) => Promise<ToolgatePiResult<ToolgatePiDetails>>;
}

/** Options of `toPiAgentTool` / `toPiAgentTools`; `withoutSchema` as in `describeTools`. */
export interface ToPiAgentToolOptions extends DescribeToolsOptions {
  /**
   * Called when the boundary rejects with a NonRecoverableToolError. Pi has no channel for
   * "stop the run" from a tool: whatever `execute` throws becomes an `isError` result and
   * the loop goes on. Abort the run here (e.g. `controller.abort(error)` or
   * `agent.abort()`) to keep toolgate's rule that such errors end the agent run. The error
   * is rethrown to Pi afterwards either way. A throw from this hook is ignored.
   */
  readonly onNonRecoverableError?: (error: NonRecoverableToolError, toolCallId: string) => void;
}

type NonRecoverableHook = NonNullable<ToPiAgentToolOptions["onNonRecoverableError"]>;

/**
 * Exposes the tool registered as `name` as a Pi AgentTool (Pi 0.85 or 1.x).
 *
 * - `parameters` (what the model is shown, and what Pi validates against): the tool's JSON
 *   Schema from `describeTools` (zod's own, TypeBox's, a given `jsonSchema`, …). A tool
 *   without one is an INVALID_TOOL_DEFINITION, unless `withoutSchema: "any-object"`.
 * - Validation: toolgate's validator is authoritative. Pi validates (with its own coercion)
 *   *before* `execute`, so the Pi tool's `prepareArguments` runs our validator on the raw
 *   arguments first and, when it refuses, throws our `TOOL_ARGUMENTS_INVALID` /
 *   `TOOL_VALIDATION_FAILED` content, which Pi turns into an `isError` result. `execute`
 *   then runs the call through the executor, which validates again (validators are pure).
 * - Results: success → `{ content: [{ type: "text", text: content }, ...attachments], details }`,
 *   an image a Pi image block `{ type: "image", data: <base64>, mimeType }`, a text file a
 *   text block of its text, audio and a PDF a text block saying it was not carried (Pi's
 *   results hold only text and images); a
 *   recoverable `isError` result → `execute` throws an Error whose message is our error
 *   content (both majors make a thrown error an `isError` result the model reads; Pi 0.85
 *   knows no other way); any rejection (the abort reason itself, ToolContractError,
 *   NonRecoverableToolError) is rethrown unchanged.
 * - Progress: each report reaching `onProgress` goes to Pi's `onUpdate` as a partial result
 *   (Pi emits `tool_execution_update`): its message (or `progress/total`) as text, the
 *   ToolProgress as `details`.
 * - Pi's tool call id becomes our `toolCallId`; the call's signal is its own, following Pi's
 *   (a fresh one that never aborts when Pi passes none).
 *
 * Throws ToolContractError(INVALID_ARGUMENT) when `executor` is neither a ToolRegistry nor
 * an executor, when no tool named `name` is registered, or for bad options.
 */
export function toPiAgentTool(executor: ToolCallSource, name: string, options: ToPiAgentToolOptions = {}): ToolgatePiAgentTool {
  checkPeerVersions("toPiAgentTool", ["@earendil-works/pi-agent-core", "@earendil-works/pi-ai"]);
  const source = resolveSource(executor, "toPiAgentTool");
  const { hook, describe } = readPiOptions(options, "toPiAgentTool");
  const tool = typeof name === "string" ? source.registry.get(name) : undefined;
  if (tool === undefined) {
    throw new ToolContractError(
      ContractErrorCode.INVALID_ARGUMENT,
      `toPiAgentTool: no tool named ${JSON.stringify(String(name))} is registered`,
    );
  }
  // Described on its own, so another tool's missing schema does not stand in this one's way.
  const described = describeForFramework(new ToolRegistry([tool]), describe.withoutSchema)[0] as FrameworkToolDescription;
  return makeAgentTool(source, tool, described.parameters, hook);
}

/** Every registered tool as a Pi AgentTool, in registration order (see `toPiAgentTool`). */
export function toPiAgentTools(executor: ToolCallSource, options: ToPiAgentToolOptions = {}): ToolgatePiAgentTool[] {
  checkPeerVersions("toPiAgentTools", ["@earendil-works/pi-agent-core", "@earendil-works/pi-ai"]);
  const source = resolveSource(executor, "toPiAgentTools");
  const { hook, describe } = readPiOptions(options, "toPiAgentTools");
  const descriptions = describeForFramework(source.registry, describe.withoutSchema);
  const tools: ToolgatePiAgentTool[] = [];
  for (let index = 0; index < descriptions.length; index += 1) {
    const described = descriptions[index];
    const tool = described === undefined ? undefined : source.registry.get(described.name);
    if (described !== undefined && tool !== undefined) tools[tools.length] = makeAgentTool(source, tool, described.parameters, hook);
  }
  return tools;
}

function makeAgentTool(
  source: ResolvedSource,
  tool: Tool,
  parameters: JsonSchema,
  hook: NonRecoverableHook | undefined,
): ToolgatePiAgentTool {
  const name = tool.name;
  // The budgets the executor applies to this tool's calls: its own, tightened by the tool's.
  const check = new Precheck(tool, argumentBudgetsFor(tool.argumentBudgets, source.argumentBudgets));
  return ObjectFreeze({
    name,
    label: name,
    description: tool.description,
    parameters,
    prepareArguments: ObjectFreeze((args: unknown): unknown => {
      check.run(args);
      return args;
    }),
    execute: ObjectFreeze(
      (
        toolCallId: string,
        params: unknown,
        signal?: AbortSignal,
        onUpdate?: (partialResult: ToolgatePiResult<ToolProgress>) => void,
      ): Promise<ToolgatePiResult<ToolgatePiDetails>> => {
        const onProgress = typeof onUpdate === "function" ? relayProgress(onUpdate) : undefined;
        // Without a hook, a rejection passes through unchanged.
        const failed =
          hook === undefined
            ? undefined
            : (error: unknown): never => {
                if (isNonRecoverableToolError(error)) {
                  try {
                    hook(error, toolCallId);
                  } catch {
                    // the hook's own failure must not replace the error Pi should record
                  }
                }
                throw error;
              };
        // A `then` rather than an async function: one promise and one turn fewer per call.
        let completed: ToolResultMessage | Promise<ToolResultMessage>;
        try {
          completed = source.run({
            id: toolCallId,
            name,
            args: params,
            signal,
            onProgress,
            accepted: check.accepted,
          });
        } catch (error) {
          completed = PromiseReject(error); // a custom executor's `executeToolCall` threw
        }
        if (isPromise(completed)) return PromisePrototypeThen(completed, piResult, failed) as Promise<ToolgatePiResult<ToolgatePiDetails>>;
        // Completed synchronously: no turn to wait for (what piResult throws is a recoverable error's, not the hook's).
        try {
          return PromiseResolve(piResult(completed as ToolResultMessage));
        } catch (error) {
          return PromiseReject(error);
        }
      },
    ),
  });
}

/** Our result as Pi's: a recoverable error thrown as an Error whose message is its content. */
function piResult(result: ToolResultMessage): ToolgatePiResult<ToolgatePiDetails> {
  if (result.isError) throw new Error(result.content);
  return ObjectFreeze({
    content: piContent(result),
    details: ObjectFreeze({ toolCallId: result.toolCallId, toolName: result.toolName, resultId: result.id }),
  });
}

/** A progress report as Pi's partial result. The executor already ignores a listener that throws. */
function relayProgress(onUpdate: (partialResult: ToolgatePiResult<ToolProgress>) => void): ProgressListener {
  return (progress) => {
    const text = progress.message ?? (progress.total === undefined ? `${progress.progress}` : `${progress.progress}/${progress.total}`);
    onUpdate(ObjectFreeze({ content: [ObjectFreeze({ type: "text" as const, text })], details: progress }));
  };
}

/**
 * A Pi tool's precheck: the executor's first steps on Pi's raw arguments, before Pi's own
 * check, so the model reads our argument errors. The snapshot within the executor's and the
 * tool's argument budgets (arguments over them, or not an object, never reach a validator,
 * ours or Pi's: TOOL_ARGUMENTS_INVALID naming the budget), then our validator. Anything else (a
 * NonRecoverableToolError from a validator) is left for the executor, which reports it with
 * the call's id. What it accepted waits for a call that follows: when Pi hands `execute` equal
 * arguments, the executor takes that snapshot and verdict (once) instead of deciding again
 * (AcceptedArguments); other arguments (Pi converted them) are snapshotted and validated as ever.
 */
class Precheck {
  /** What the last precheck accepted (until a call takes it, or the next precheck replaces it). */
  accepted: AcceptedArguments | undefined;

  constructor(
    readonly tool: Tool,
    /** The budgets the executor applies to this tool's calls: its own, tightened by the tool's. */
    readonly budgets: ResolvedArgumentBudgets,
  ) {}

  run(args: unknown): void {
    this.accepted = undefined;
    const tool = this.tool;
    let snapshot: Readonly<Record<string, JsonValue>>;
    let verdict: ReturnType<typeof validateArguments>;
    try {
      // docs/contract.md: rule 4 — call snapshot, rule 6 — validation first (the same steps as the pipeline's).
      snapshot = snapshotArguments(args, this.budgets);
      verdict = validateArguments(tool, snapshot);
    } catch (error) {
      if (isToolContractError(error) && error.code === ContractErrorCode.INVALID_TOOL_CALL) {
        throw new Error(errorContent(ToolErrorCode.ARGUMENTS_INVALID, { text: error.message, cut: false }));
      }
      return;
    }
    if (!verdict.ok) throw new Error(errorContent(verdict.code, verdict.failure));
    this.accepted = new AcceptedArguments(verdict.value, tool, snapshot, this.budgets);
  }
}

const PI_OPTION_KEYS: readonly string[] = ["withoutSchema", "onNonRecoverableError"];

/** The options, read once as own data properties: `onNonRecoverableError` (a function or absent) and describeTools' own. */
function readPiOptions(options: unknown, api: string): { hook: NonRecoverableHook | undefined; describe: DescribeToolsOptions } {
  refuseDurableOption(
    options,
    api,
    "Pi's execute(toolCallId, params, signal, onUpdate) is given no run identity; pass durable: { runId } through your own executor calls",
  );
  const read = readOptions(options, `${api}: options`, PI_OPTION_KEYS);
  const hook = read.onNonRecoverableError;
  if (hook !== undefined) validateFunction(hook, `${api}: options.onNonRecoverableError`);
  return {
    hook: hook as NonRecoverableHook | undefined,
    describe: { withoutSchema: read.withoutSchema as DescribeToolsOptions["withoutSchema"] },
  };
}

/** A result as Pi's content: text and images as they are; a text file as its text; audio and a PDF as a text block saying they were left out. */
function piContent(result: ToolResultMessage): (ToolgatePiText | ToolgatePiImage)[] {
  const { attachments, links } = carriedBlocks(result, "toPiAgentTool");
  const content: (ToolgatePiText | ToolgatePiImage)[] = [textBlock(result.content)];
  for (let index = 0; index < attachments.length; index += 1) content[index + 1] = piBlock(attachments[index] as ToolgateAttachmentBlock);
  // Pi's content has no link block: a text block names each link.
  for (let index = 0; index < links.length; index += 1)
    content[content.length] = ObjectFreeze({ type: "text" as const, text: resourceLinkText(links[index] as ToolgateResourceLinkBlock) });
  return content;
}

function piBlock(block: ToolgateAttachmentBlock): ToolgatePiText | ToolgatePiImage {
  if (block.type === "image") return block;
  if (block.type === "file" && block.text !== undefined) {
    const name = block.name === undefined ? "" : " " + JSONStringify(block.name);
    return ObjectFreeze({ type: "text" as const, text: `[file${name} (${block.mimeType})]\n` + block.text });
  }
  return ObjectFreeze({ type: "text" as const, text: notCarriedText(block, "Pi") });
}
