// toolgate/ai-sdk: registered toolgate tools as a Vercel AI SDK (`ai` 7) tool set for
// generateText / streamText. The SDK shows the model each tool's JSON Schema (from
// describeTools) and calls `execute`, which runs the call through toolgate with the SDK's
// toolCallId and abortSignal. `ai` is imported for types and `jsonSchema` only.
// docs/adapters.md — Use it with the Vercel AI SDK.
import { jsonSchema, type StopCondition, type Tool, type ToolExecutionOptions } from "ai";
import { ToolErrorCode } from "../contract/constants.js";
import type { DescribeToolsOptions } from "../contract/describe.js";
import { isNonRecoverableToolError, type NonRecoverableToolError } from "../contract/errors.js";
import { ArrayIsArray, ObjectCreate, ObjectFreeze } from "../contract/primordials.js";
import { errorContent, type ToolResultMessage, toolResultMessage } from "../contract/results.js";
import type { ToolRegistry } from "../contract/tools.js";
import { readOptions } from "../contract/validators.js";
import type { ToolProgress } from "../executor/progress.js";
import { askNeedsApproval, checkNeedsApproval, type ToolgateNeedsApproval } from "./approval.js";
import {
  contentOutput,
  resourceLinkText,
  type ToolgateImageBlock,
  type ToolgateMediaBlock,
  type ToolgateResourceLinkBlock,
} from "./attachment-blocks.js";
import { type DurableRunOf, type DurableRunReader, readDurableOption } from "./durable-option.js";
import { checkPeerVersions } from "./peer-version.js";
import { progressStream } from "./progress-stream.js";
import { describeForFramework, type ResolvedSource, resolveSource, type ToolCallSource } from "./source.js";
import { STRUCTURED_OUTPUT_CUT, structuredContentOf, structuredOutputSchema } from "./structured-output.js";

/**
 * What a toolgate tool's AI SDK `execute` yields: progress reports as preliminary results
 * (streamText shows them as `tool-result` parts with `preliminary: true`), then the final
 * output: the result's content, which the model reads as text, or, for a result with
 * attachments, a ToolgateAiSdkContent, which the model reads as text and images.
 */
export type ToolgateAiSdkOutput = string | ToolgateAiSdkContent | ToolgateAiSdkProgress;

/**
 * The final output of a result with attachments: its content and its images (base64, so the
 * output stays JSON, as the SDK's stored UI messages need it for `convertToModelMessages`).
 */
export interface ToolgateAiSdkContent {
  readonly type: "content";
  readonly text: string;
  readonly images: readonly ToolgateImageBlock[];
  /** Its audio and files (base64; a file's name when it has one), present only when it has some. */
  readonly files?: readonly ToolgateMediaBlock[];
  /** Its resource links, present only when it has some: the model reads each as a text line. */
  readonly links?: readonly ToolgateResourceLinkBlock[];
}

/** A preliminary result: one of the tool's progress reports. */
export interface ToolgateAiSdkProgress {
  readonly type: "progress";
  readonly progress: ToolProgress;
}

/** A toolgate tool as an AI SDK tool. */
export type ToolgateAiSdkTool = Tool<unknown, ToolgateAiSdkOutput>;

export {
  type ToolgateApprovalRequest,
  type ToolgateNeedsApproval,
  toolCallDenied,
} from "./approval.js";

/** Options of `toAiSdkTools`: how tools without a JSON Schema are shown (see `describeTools`), and which calls need approval. */
export interface ToAiSdkToolsOptions extends DescribeToolsOptions {
  /**
   * Which calls wait for a person's approval in the SDK's own flow: for a call it answers
   * `true` (or fails on, or answers anything but a boolean), the tool's `needsApproval` makes
   * generateText/streamText emit a `tool-approval-request` part and stop, as for any SDK
   * tool; the app answers with a `tool-approval-response` (useChat's
   * `addToolApprovalResponse`). An approved call then runs through toolgate (the executor's
   * `beforeExecute` included); a denied one never runs, and the model reads the SDK's
   * `execution-denied` output with the response's `reason` (give `toolCallDenied(text)` as
   * the reason for toolgate's TOOL_CALL_DENIED content).
   */
  readonly needsApproval?: ToolgateNeedsApproval;
  /**
   * Makes every call durable (docs/durable.md, "Durable calls with your framework"): asked at
   * each call with a frozen AiSdkDurableContext, it answers the call's run, and the call runs
   * with `durable: { runId }` on the source executor (which needs `durable: { store }`). The SDK
   * names no run: take it from the tool context, or close over your own run id. A throw or a bad
   * answer rejects the call with ToolContractError(INVALID_ARGUMENT); the tool does not run.
   */
  readonly durable?: DurableRunOf<AiSdkDurableContext>;
}

/** What an AI SDK call's `durable` function is given. Frozen. */
export interface AiSdkDurableContext {
  readonly toolCallId: string;
  readonly toolName: string;
  /** The tool context `execute` received (the SDK's `toolsContext` for this tool), as it is. */
  readonly context: unknown;
}

/**
 * The error a toolgate tool's AI SDK `execute` throws for a recoverable `isError` result.
 * Its message is the result's content (`{"error":{"code":…,"message":…}}`), which the SDK
 * sends to the model as the tool's `error-text` output; `result` is toolgate's frozen result.
 */
export class ToolgateToolError extends Error {
  override readonly name = "ToolgateToolError";
  constructor(readonly result: ToolResultMessage) {
    super(result.content);
  }

  /** The content alone: the SDK shows the model `error.toString()`, which would otherwise prefix the name. */
  override toString(): string {
    return this.message;
  }
}

/**
 * Every registered tool of `source` (a ToolRegistry, or any ToolExecutor) as an AI SDK tool,
 * keyed by name (an object without a prototype, so any name, `__proto__` included, is an own key):
 *
 * - `inputSchema`: `jsonSchema(parameters)` from describeTools (a copy of its own, which the SDK
 *   may write into), with no SDK-side validation: toolgate's validator decides, so the model
 *   reads toolgate's argument errors (arguments that are not an object, or over the argument
 *   budgets, included: TOOL_ARGUMENTS_INVALID).
 * - `execute(input, { toolCallId, abortSignal })` runs the call through `source`, with a signal
 *   of its own that follows `abortSignal` (one that never aborts without it); a success
 *   ends with the result's content (the model reads it as text) or, when it has attachments,
 *   a ToolgateAiSdkContent (the model reads a `content` output: the text, then each image,
 *   audio and file as a `file` part with its mediaType and base64 data, a file's name as its `filename`); a recoverable error result
 *   throws `ToolgateToolError` (the SDK records a `tool-error` and shows the model the error
 *   content); a rejection (the abort reason, a ToolContractError, a NonRecoverableToolError)
 *   is thrown as it is.
 * - Progress reports are yielded as preliminary results before the final output.
 *
 * Typed names: from a registry made with typed tools (`new ToolRegistry([add, sub])`, each from
 * `defineTool({ name: "add", … })`), the record's keys are those names, so `activeTools` and
 * `toolChoice` beside the SDK's own tools check them; from an executor, give them:
 * `toAiSdkTools<"add" | "sub">(executor)`. Types only: every registered tool is in the record.
 */
const AI_SDK_OPTION_KEYS: readonly string[] = ["withoutSchema", "needsApproval", "durable"];

export function toAiSdkTools<N extends string = string>(
  source: ToolRegistry<N> | ToolCallSource,
  options: ToAiSdkToolsOptions = {},
): Record<N, ToolgateAiSdkTool> {
  checkPeerVersions("toAiSdkTools", ["ai"]);
  const resolved = resolveSource(source, "toAiSdkTools");
  const read = readOptions(options, "toAiSdkTools: options", AI_SDK_OPTION_KEYS);
  const descriptions = describeForFramework(resolved.registry, read.withoutSchema);
  const needsApproval = checkNeedsApproval(read.needsApproval, "toAiSdkTools");
  const durable = readDurableOption<AiSdkDurableContext>(read.durable, "toAiSdkTools", resolved);
  // No prototype: a tool named `__proto__` (or `constructor`, `toString`) is an own key like any other,
  // and a model's call to a name we do not have finds nothing inherited. The SDK looks tools up as own keys.
  const tools = ObjectCreate(null) as Record<N, ToolgateAiSdkTool>;
  for (const { name, description, parameters } of descriptions) {
    const outputSchema = structuredOutputSchema(resolved.registry, name);
    const target: CallTarget = ObjectFreeze({ source: resolved, name, structured: outputSchema !== undefined, durable });
    tools[name as N] = ObjectFreeze({
      description,
      ...(needsApproval === undefined
        ? {}
        : {
            needsApproval: (input: unknown, { toolCallId }: { readonly toolCallId: string }) =>
              askNeedsApproval(needsApproval, { toolCallId, toolName: name, arguments: input }),
          }),
      inputSchema: jsonSchema<unknown>(parameters as Parameters<typeof jsonSchema>[0]),
      ...(outputSchema === undefined ? {} : { outputSchema: jsonSchema<unknown>(outputSchema as Parameters<typeof jsonSchema>[0]) }),
      execute: (input: unknown, { toolCallId, abortSignal, context }: ToolExecutionOptions<unknown>) =>
        runCall(target, toolCallId, input, abortSignal, context),
      toModelOutput: ({ output }: { output: ToolgateAiSdkOutput }) =>
        target.structured ? structuredModelOutput(output) : modelOutput(output),
    }) as ToolgateAiSdkTool;
  }
  return tools;
}

/** Where one SDK tool's calls go: made once per tool. */
interface CallTarget {
  readonly source: ResolvedSource;
  readonly name: string;
  /** The tool publishes an `outputSchema`: its final output is its structured output. */
  readonly structured: boolean;
  readonly durable: DurableRunReader<AiSdkDurableContext> | undefined;
}

async function* runCall(
  { source, name, structured, durable: runOf }: CallTarget,
  toolCallId: string,
  input: unknown,
  signal: AbortSignal | undefined,
  context: unknown,
): AsyncGenerator<ToolgateAiSdkOutput, void, undefined> {
  const durable = runOf === undefined ? undefined : await runOf(ObjectFreeze({ toolCallId, toolName: name, context }));
  const stream = progressStream((onProgress) => source.run({ id: toolCallId, name, args: input, signal, onProgress, durable }));
  for (;;) {
    const step = await stream.next();
    if (step.kind === "progress") {
      yield ObjectFreeze({ type: "progress" as const, progress: step.progress });
      continue;
    }
    if (step.kind === "rejected") throw step.reason;
    if (step.result.isError) throw new ToolgateToolError(step.result);
    yield structured ? structuredOutput(step.result) : contentOutput(step.result, "toAiSdkTools");
    return;
  }
}

/**
 * A success of a tool with an `outputSchema`: its output object (the SDK checks stored UI
 * messages' outputs against the tool's `outputSchema`, so nothing else may stand there; its
 * attachments are not carried). Content cut to the content budget cannot be parsed back: a
 * TOOL_OUTPUT_SERIALIZATION_FAILED error, thrown as an error result is.
 */
function structuredOutput(result: ToolResultMessage): ToolgateAiSdkOutput {
  const value = structuredContentOf(result.content);
  if (value !== undefined) return value as unknown as ToolgateAiSdkOutput;
  const content = errorContent(ToolErrorCode.OUTPUT_SERIALIZATION_FAILED, { text: STRUCTURED_OUTPUT_CUT, cut: false });
  throw new ToolgateToolError(toolResultMessage({ id: result.toolCallId, name: result.toolName }, content, true));
}

/** A structured output as the model reads it: `json`. */
function structuredModelOutput(output: unknown): ModelOutput {
  return typeof output === "string" ? { type: "text", value: output } : { type: "json", value: output as never };
}

type ModelOutput = Exclude<Awaited<ReturnType<NonNullable<ToolgateAiSdkTool["toModelOutput"]>>>, undefined>;
type ModelOutputPart = Extract<ModelOutput, { type: "content" }>["value"][number];

/**
 * Text as `text`; text with attachments as `content`: the text part, then one `file` part
 * (base64 `data`) per image, then one per audio or file (with its `filename` when it has a name).
 */
function modelOutput(output: ToolgateAiSdkOutput): ModelOutput {
  if (typeof output === "string") return { type: "text", value: output };
  if (output.type !== "content") return { type: "text", value: "" };
  const parts: ModelOutputPart[] = [{ type: "text", text: output.text }];
  const { images } = output;
  for (let index = 0; index < images.length; index += 1) {
    const { data, mimeType } = images[index] as ToolgateImageBlock;
    parts[index + 1] = { type: "file", mediaType: mimeType, data: { type: "data", data } };
  }
  const files = output.files ?? [];
  for (let index = 0; index < files.length; index += 1) {
    const file = files[index] as ToolgateMediaBlock;
    const name = file.type === "file" ? file.name : undefined;
    const part: ModelOutputPart = { type: "file", mediaType: file.mimeType, data: { type: "data", data: file.data } };
    parts[parts.length] = name === undefined ? part : { ...part, filename: name };
  }
  // The SDK's tool output has no link part: each link is a line of text naming it.
  const links = output.links ?? [];
  for (let index = 0; index < links.length; index += 1)
    parts[parts.length] = { type: "text", text: resourceLinkText(links[index] as ToolgateResourceLinkBlock) };
  return { type: "content", value: parts };
}

/**
 * A `stopWhen` condition: true once a step holds a `tool-error` whose error is a
 * NonRecoverableToolError, so the SDK stops the loop at the fatal call instead of showing
 * the model the error and asking it for the next step (the SDK makes every throw from
 * `execute` a `tool-error`). Combine it with your own: `stopWhen: [isStepCount(10), hasNonRecoverableToolError]`.
 * Calls of the same step that were already running finish (the SDK runs them together).
 */
// biome-ignore lint/suspicious/noExplicitAny: as the SDK's own isStepCount, so it fits any tool set and context.
export const hasNonRecoverableToolError: StopCondition<any, any> = ({ steps }) => findNonRecoverable(steps) !== undefined;

/**
 * Rethrows the NonRecoverableToolError a run ended on (the genuine error the tool or the
 * boundary threw, the same object), or returns the result as it is. With
 * `hasNonRecoverableToolError` in `stopWhen`, this makes a fatal error end the run as
 * toolgate's rule says, in one expression:
 * `throwIfNonRecoverable(await generateText({ …, stopWhen: [isStepCount(10), hasNonRecoverableToolError] }))`
 * (for streamText: `throwIfNonRecoverable({ steps: await result.steps })`).
 */
export function throwIfNonRecoverable<Result extends { readonly steps: readonly StepLike[] }>(result: Result): Result {
  const fatal = findNonRecoverable(result.steps);
  if (fatal !== undefined) throw fatal;
  return result;
}

/** The part of an SDK step these helpers read. */
interface StepLike {
  readonly content: readonly unknown[];
}

/** The first NonRecoverableToolError among the steps' `tool-error` parts, last step first. */
function findNonRecoverable(steps: readonly StepLike[]): NonRecoverableToolError | undefined {
  for (let step = steps.length - 1; step >= 0; step -= 1) {
    const content = (steps[step] as StepLike).content;
    if (!ArrayIsArray(content)) continue;
    for (let index = 0; index < content.length; index += 1) {
      const part = content[index] as { readonly type?: unknown; readonly error?: unknown } | null;
      if (typeof part === "object" && part !== null && part.type === "tool-error" && isNonRecoverableToolError(part.error))
        return part.error;
    }
  }
  return undefined;
}
