// toolgate/openai-agents: registered toolgate tools as OpenAI Agents SDK (`@openai/agents`
// 0.20) function tools for an `Agent`. The SDK shows the model each tool's JSON Schema
// (from describeTools, `strict: false`: the SDK passes a non-strict JSON Schema through
// unchanged and only JSON-parses the arguments) and calls `execute`, which runs the call
// through toolgate with the SDK's call id and abort signal.
// docs/adapters.md — Use it with the OpenAI Agents SDK.
import { randomUUID } from "node:crypto";
import { type FunctionTool, type ToolErrorFormatter, tool, type UnknownContext } from "@openai/agents";
import { ContractErrorCode } from "../contract/constants.js";
import type { DescribeToolsOptions } from "../contract/describe.js";
import { ToolContractError } from "../contract/errors.js";
import {
  isPromise,
  JSONStringify,
  MapPrototypeGet,
  MapPrototypeSet,
  ObjectFreeze,
  PromisePrototypeThen,
  PromiseReject,
} from "../contract/primordials.js";
import type { ToolResultMessage } from "../contract/results.js";
import { readOptions } from "../contract/validators.js";
import type { ProgressListener } from "../executor/progress.js";
import { askNeedsApproval, checkNeedsApproval, type ToolgateNeedsApproval, toolCallDenied } from "./approval.js";
import {
  carriedBlocks,
  notCarriedText,
  resourceLinkText,
  type ToolgateAttachmentBlock,
  type ToolgateResourceLinkBlock,
} from "./attachment-blocks.js";
import { type DurableRun, type DurableRunOf, type DurableRunReader, readDurableOption } from "./durable-option.js";
import { checkPeerVersions } from "./peer-version.js";
import { describeForFramework, type ResolvedSource, readProgressOption, resolveSource, type ToolCallSource } from "./source.js";

export {
  type ToolgateApprovalRequest,
  type ToolgateNeedsApproval,
  toolCallDenied,
} from "./approval.js";

// Captured at load, like the primordials: a call without an SDK call id gets a fresh one.
const newCallId = randomUUID;

/**
 * The JSON Schema a toolgate tool shows the SDK, typed as the SDK's non-strict object
 * schema (`tool()` takes a plain JSON Schema only with `strict: false`). At run time it is
 * describeTools' schema, whatever its shape; the SDK forwards it to the model unchanged.
 */
export interface ToolgateOpenAiAgentsParameters {
  readonly type: "object";
  readonly properties: Record<string, Record<string, unknown>>;
  readonly required: string[];
  readonly additionalProperties: true;
}

/**
 * What a toolgate tool's `execute` resolves with: the result's content (text), or, for a
 * result with attachments, the SDK's structured output: the text, then one image per
 * attachment (base64 data with its media type), which the SDK sends the model as
 * `input_text` and `input_image` parts.
 */
export type ToolgateOpenAiAgentsOutput = string | ToolgateOpenAiAgentsContent[];

/**
 * One part of a result with attachments, in the SDK's tool output shapes (`ToolOutputText`,
 * `ToolOutputImage`, `ToolOutputFileContent`). The SDK has no audio output: an audio
 * attachment is a text part saying it was not carried.
 */
export type ToolgateOpenAiAgentsContent =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image"; readonly image: { readonly data: string; readonly mediaType: string } }
  | { readonly type: "file"; readonly file: { readonly data: string; readonly mediaType: string; readonly filename: string } };

/**
 * A toolgate tool as an OpenAI Agents SDK function tool; `execute` resolves with a
 * ToolgateOpenAiAgentsOutput. `Context` is the agent's run context type, which toolgate tools ignore.
 */
export type ToolgateOpenAiAgentsTool<Context = UnknownContext> = FunctionTool<
  Context,
  ToolgateOpenAiAgentsParameters,
  ToolgateOpenAiAgentsOutput
>;

const OPENAI_AGENTS_OPTION_KEYS: readonly string[] = ["withoutSchema", "onProgress", "needsApproval", "durable"];

/** Options of `toOpenAiAgentsTools`. */
export interface ToOpenAiAgentsToolsOptions extends DescribeToolsOptions {
  /**
   * Receives the calls' progress reports (see `CallOptions.onProgress`). The SDK has no
   * channel for a function tool's partial results, so they go to the app, not the model.
   */
  readonly onProgress?: ProgressListener;
  /**
   * Which calls wait for a person's approval in the SDK's own flow: for a call it answers
   * `true` (or fails on, or answers anything but a boolean), the tool's `needsApproval`
   * makes the run stop with an interruption (`result.interruptions`), as for any SDK tool;
   * the app answers with `result.state.approve(item)` / `reject(item)` and resumes with
   * `run(agent, result.state)`. An approved call then runs through toolgate (the executor's
   * `beforeExecute` included); a rejected one never runs: the model reads the rejection
   * message (`reject(item, { message: toolCallDenied(reason) })`, or
   * `toolgateToolErrorFormatter` in the Runner's config for the default, for toolgate's TOOL_CALL_DENIED).
   */
  readonly needsApproval?: ToolgateNeedsApproval;
  /**
   * Makes every call durable (docs/durable.md, "Durable calls with your framework"): asked at
   * each call with a frozen OpenAiAgentsDurableContext, it answers the call's run,
   * `({ context }) => ({ runId: context.runId })` for a run id kept in your run context (a
   * `RunState` carries it when serialized), and the call runs with `durable: { runId }` on the
   * source executor (which needs `durable: { store }`). So a `RunState` resumed twice runs an
   * approved call once. A throw or a bad answer rejects the call with
   * ToolContractError(INVALID_ARGUMENT), which ends the run (`errorFunction: null`); the tool does not run.
   */
  readonly durable?: DurableRunOf<OpenAiAgentsDurableContext>;
}

/** What an OpenAI Agents call's `durable` function is given. Frozen. */
export interface OpenAiAgentsDurableContext {
  readonly toolCallId: string;
  readonly toolName: string;
  /** The run's context (`runContext.context`: what `run(agent, input, { context })` was given), as it is. */
  readonly context: unknown;
}

/** What the SDK hands `execute` as its third argument (its `ToolCallDetails`). */
type ToolCallDetails = Parameters<ToolgateOpenAiAgentsTool["invoke"]>[2];

/**
 * Every registered tool of `source` (a ToolRegistry, or any ToolExecutor) as an OpenAI
 * Agents SDK function tool, in registration order, for `new Agent({ tools })`:
 *
 * - `parameters`: the JSON Schema from describeTools, `strict: false`; the SDK does not
 *   validate arguments against it, toolgate's validator decides.
 * - `execute(input, runContext, details)` runs the call through `source` with
 *   `details.toolCall.callId` as toolgate's toolCallId (a fresh UUID when the SDK gives
 *   none) and a signal of its own that follows `details.signal`. It resolves with the result's content for a
 *   success and for a recoverable `isError` result alike: the SDK's convention is that what
 *   `execute` returns is the model-visible output, so the model reads toolgate's
 *   `{"error":{"code":…,"message":…}}` and can correct its call. A success with
 *   attachments resolves with the SDK's structured output instead: the text, then one
 *   image or file (base64 data and media type; a file's name) per attachment, which the
 *   model reads as `input_text`, `input_image` and `input_file` parts (audio, which the SDK
 *   cannot carry, as a text part saying so). Arguments the boundary refuses as a malformed
 *   call (valid JSON but not an object, or over the argument budgets) are model data too:
 *   the model reads TOOL_ARGUMENTS_INVALID with the reason.
 * - With `options.needsApproval`, a call it picks interrupts the run for a person's
 *   approval (the SDK's `needsApproval`); see ToOpenAiAgentsToolsOptions.
 * - A rejection (the abort reason, a ToolContractError, a NonRecoverableToolError) is
 *   thrown, and `errorFunction: null` makes the SDK propagate it: `run()` rejects (with the
 *   abort reason itself, or a `ToolCallError` whose `error` is toolgate's rejection)
 *   instead of showing the model the SDK's generic "An error occurred" text.
 *
 * The SDK renames tools to `[A-Za-z0-9_]` (`get-weather` becomes `get_weather`); two tools
 * that would share a name are a ToolContractError(DUPLICATE_TOOL_NAME) naming both.
 *
 * `Context` (inferred from the `Agent` they are given to) is the agent's run context type:
 * the SDK's `RunContext` is not passed to toolgate tools, so any context fits.
 */
export function toOpenAiAgentsTools<Context = UnknownContext>(
  source: ToolCallSource,
  options: ToOpenAiAgentsToolsOptions = {},
): ToolgateOpenAiAgentsTool<Context>[] {
  checkPeerVersions("toOpenAiAgentsTools", ["@openai/agents"]);
  const resolved = resolveSource(source, "toOpenAiAgentsTools");
  const read = readOptions(options, "toOpenAiAgentsTools: options", OPENAI_AGENTS_OPTION_KEYS);
  const descriptions = describeForFramework(resolved.registry, read.withoutSchema);
  const onProgress = readProgressOption(read.onProgress);
  const needsApproval = checkNeedsApproval(read.needsApproval, "toOpenAiAgentsTools");
  const durable = readDurableOption<OpenAiAgentsDurableContext>(read.durable, "toOpenAiAgentsTools", resolved);
  const bySdkName = new Map<string, string>();
  const tools: ToolgateOpenAiAgentsTool<Context>[] = [];
  for (const { name, description, parameters } of descriptions) {
    const target: CallTarget = ObjectFreeze({ source: resolved, name, onProgress, durable });
    const created = tool<ToolgateOpenAiAgentsParameters, Context, ToolgateOpenAiAgentsOutput>({
      name,
      description,
      parameters: parameters as unknown as ToolgateOpenAiAgentsParameters,
      strict: false,
      errorFunction: null,
      ...(needsApproval === undefined
        ? {}
        : {
            needsApproval: (_runContext: unknown, input: unknown, callId?: string) =>
              askNeedsApproval(needsApproval, { toolCallId: callId ?? "", toolName: name, arguments: input }),
          }),
      execute: (input: unknown, runContext: unknown, details: ToolCallDetails) => runCall(target, input, runContext, details),
    });
    const clash = MapPrototypeGet(bySdkName, created.name);
    if (clash !== undefined) {
      throw new ToolContractError(
        ContractErrorCode.DUPLICATE_TOOL_NAME,
        `toOpenAiAgentsTools: tools ${JSONStringify(clash)} and ${JSONStringify(name)} are both named ` +
          `${JSONStringify(created.name)} in the OpenAI Agents SDK, which replaces every character outside [A-Za-z0-9_] with "_"`,
      );
    }
    MapPrototypeSet(bySdkName, created.name, name);
    tools[tools.length] = ObjectFreeze(created);
  }
  return tools;
}

/** Where one SDK tool's calls go, and the app's progress listener: made once per tool. */
interface CallTarget {
  readonly source: ResolvedSource;
  readonly name: string;
  readonly onProgress: ProgressListener | undefined;
  readonly durable: DurableRunReader<OpenAiAgentsDurableContext> | undefined;
}

/**
 * One call of an SDK tool. Without a `durable` option it is not an async function: a call
 * that completed synchronously gives the SDK its output itself (the SDK awaits what `execute`
 * returns), one promise and one turn fewer per call; a failure is a rejection either way.
 */
function runCall(
  target: CallTarget,
  input: unknown,
  runContext: unknown,
  details: ToolCallDetails,
): ToolgateOpenAiAgentsOutput | Promise<ToolgateOpenAiAgentsOutput> {
  const sdkCallId = details?.toolCall?.callId;
  const id = typeof sdkCallId === "string" && sdkCallId.length > 0 ? sdkCallId : newCallId();
  if (target.durable !== undefined) return runDurableCall(target, target.durable, id, input, runContext, details);
  // Arguments the boundary refuses (valid JSON but not an object, or over the argument budgets)
  // come back as a TOOL_ARGUMENTS_INVALID result (source.ts), never as a rejection that
  // `errorFunction: null` would turn into the end of the run.
  let completed: ToolResultMessage | Promise<ToolResultMessage>;
  try {
    completed = runOnSource(target, id, input, details, undefined);
  } catch (error) {
    return PromiseReject(error); // a custom executor's `executeToolCall` threw
  }
  if (isPromise(completed)) return PromisePrototypeThen(completed, agentsOutput) as Promise<ToolgateOpenAiAgentsOutput>;
  try {
    return agentsOutput(completed as ToolResultMessage);
  } catch (error) {
    return PromiseReject(error);
  }
}

/** A call under the `durable` option: its run id read first (the reader may be async). */
async function runDurableCall(
  target: CallTarget,
  runOf: DurableRunReader<OpenAiAgentsDurableContext>,
  id: string,
  input: unknown,
  runContext: unknown,
  details: ToolCallDetails,
): Promise<ToolgateOpenAiAgentsOutput> {
  const durable = await runOf(
    ObjectFreeze({ toolCallId: id, toolName: target.name, context: (runContext as { readonly context?: unknown } | undefined)?.context }),
  );
  return agentsOutput(await runOnSource(target, id, input, details, durable));
}

/** The call handed to the tool's source: the SDK's signal, the app's progress listener, and the call's run (undefined without the `durable` option). */
function runOnSource(
  { source, name, onProgress }: CallTarget,
  id: string,
  input: unknown,
  details: ToolCallDetails,
  durable: DurableRun | undefined,
): ToolResultMessage | Promise<ToolResultMessage> {
  return source.run({ id, name, args: input, signal: details?.signal, onProgress, durable });
}

/** Our result as the SDK's tool output: its content alone, or, with attachments or links, its parts. */
function agentsOutput(result: ToolResultMessage): ToolgateOpenAiAgentsOutput {
  const { attachments, links } = carriedBlocks(result, "toOpenAiAgentsTools");
  if (attachments.length === 0 && links.length === 0) return result.content;
  const parts: ToolgateOpenAiAgentsContent[] = [ObjectFreeze({ type: "text" as const, text: result.content })];
  for (let index = 0; index < attachments.length; index += 1)
    parts[index + 1] = ObjectFreeze(agentsPart(attachments[index] as ToolgateAttachmentBlock, index));
  // The SDK's tool output has no link part: a text part names each link.
  for (let index = 0; index < links.length; index += 1)
    parts[parts.length] = ObjectFreeze({ type: "text" as const, text: resourceLinkText(links[index] as ToolgateResourceLinkBlock) });
  return parts;
}

/** An attachment as the SDK's tool output part: an image, a file (named `attachment-<n>` without a name of its own), or, for audio, a text part saying it was not carried. */
function agentsPart(block: ToolgateAttachmentBlock, index: number): ToolgateOpenAiAgentsContent {
  switch (block.type) {
    case "image":
      return { type: "image", image: ObjectFreeze({ data: block.data, mediaType: block.mimeType }) };
    case "file":
      return {
        type: "file",
        file: ObjectFreeze({ data: block.data, mediaType: block.mimeType, filename: block.name ?? "attachment-" + (index + 1) }),
      };
    case "audio":
      return { type: "text", text: notCarriedText(block, "OpenAI Agents") };
  }
}

/**
 * A `toolErrorFormatter` for the Runner's config (`new Runner({ toolErrorFormatter: toolgateToolErrorFormatter })`):
 * a call a person rejected without a message of their own reaches the model as toolgate's
 * TOOL_CALL_DENIED content (with the SDK's default text as the reason); every other kind
 * keeps the SDK's default.
 */
export const toolgateToolErrorFormatter: ToolErrorFormatter = ({ kind, defaultMessage }) =>
  kind === "approval_rejected" ? toolCallDenied(defaultMessage) : undefined;
