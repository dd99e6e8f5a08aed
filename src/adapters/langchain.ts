// toolgate/langchain: registered toolgate tools as LangChain.js tools (`@langchain/core` 1.x
// StructuredTools) for LangGraph's ToolNode / createReactAgent and langchain's createAgent.
// The model is shown each tool's JSON Schema (from describeTools); a call runs through
// toolgate with LangChain's tool_call_id and the run's signal, and its result is a
// ToolMessage. A call that needs approval asks through LangGraph's `interrupt`.
// docs/adapters.md — Use it with LangChain.js and LangGraph.
import { randomUUID } from "node:crypto";
import { CallbackManager, type CallbackManagerForToolRun, parseCallbackConfigArg } from "@langchain/core/callbacks/manager";
import { type ContentBlock, ToolMessage } from "@langchain/core/messages";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { StructuredTool, type ToolReturnType, type ToolRunnableConfig } from "@langchain/core/tools";
import type { JSONSchema } from "@langchain/core/utils/json_schema";
import { interrupt } from "@langchain/langgraph";
import { ContractErrorCode, Limits, ToolErrorCode } from "../contract/constants.js";
import type { DescribeToolsOptions } from "../contract/describe.js";
import { isNonRecoverableToolError, type NonRecoverableToolError, ToolContractError } from "../contract/errors.js";
import { isProxy, JSONStringify, ObjectFreeze, PromisePrototypeThen, ReflectApply } from "../contract/primordials.js";
import { errorContent, type ToolResultMessage } from "../contract/results.js";
import { cutToCodePoints } from "../contract/serialize.js";
import { readOwnDataProperty } from "../contract/untrusted.js";
import { readOptions } from "../contract/validators.js";
import type { ProgressListener, ToolProgress } from "../executor/progress.js";
import { carriedBlocks, resourceLinkText, type ToolgateAttachmentBlock, type ToolgateResourceLinkBlock } from "./attachment-blocks.js";
import { type DurableRunOf, type DurableRunReader, readDurableOption } from "./durable-option.js";
import { checkPeerVersions } from "./peer-version.js";
import { describeForFramework, type ResolvedSource, readProgressOption, resolveSource, type ToolCallSource } from "./source.js";

// Captured at load, like the primordials: a call without a LangChain tool call id gets a fresh one.
const newCallId = randomUUID;

/** The name of the custom event (streamEvents' `on_custom_event`) that carries a call's progress. */
export const LANGCHAIN_PROGRESS_EVENT = "toolgate_progress";

/** What a call's progress is written as to LangGraph's `config.writer` (`streamMode: "custom"`). Frozen. */
export interface ToolgateLangChainProgress {
  readonly type: typeof LANGCHAIN_PROGRESS_EVENT;
  readonly progress: ToolProgress;
}

/** The value a call that needs approval passes to LangGraph's `interrupt` (a person reads it). Frozen. */
export interface ToolgateApprovalRequest {
  readonly type: "toolgate_approval";
  readonly toolCallId: string;
  readonly toolName: string;
  /** The model's arguments, as the model sent them (toolgate validates them after approval). */
  readonly arguments: unknown;
}

/**
 * The resume value that answers a ToolgateApprovalRequest (`new Command({ resume })`): the
 * request's `toolCallId`, named back, and the shape of toolgate's `beforeExecute` decision.
 * `{ toolCallId, allow: true }` runs that call, `{ toolCallId, allow: false, reason }` answers it
 * with TOOL_CALL_DENIED carrying `reason`. A call runs only on a decision that names it:
 * LangGraph hands resume values to a node's `interrupt` calls by their order, which calls
 * running side by side do not keep, so a decision naming another call is never taken as this
 * one's (the call asks again), and anything that is not a decision denies.
 */
export type ToolgateApprovalDecision =
  | { readonly toolCallId: string; readonly allow: true }
  | { readonly toolCallId: string; readonly allow: false; readonly reason?: string };

/** Which calls ask a person first: every call (`true`), or those for which the function answers `true`. */
export type LangChainNeedsApproval = boolean | ((request: ToolgateApprovalRequest) => boolean | Promise<boolean>);

/** Options of `toLangChainTools`. */
export interface ToLangChainToolsOptions extends DescribeToolsOptions {
  /** Also receives the calls' progress reports (besides the custom event and `config.writer`). */
  readonly onProgress?: ProgressListener;
  /**
   * Calls that wait for a person's approval through LangGraph's `interrupt` (needs a graph with
   * a checkpointer). A function that throws or answers anything but `false` asks (fails closed).
   */
  readonly needsApproval?: LangChainNeedsApproval;
  /**
   * Called with a NonRecoverableToolError before it is thrown. Under ToolNode's default error
   * handling, abort the run here (`controller.abort(error)` of the `signal` given to `invoke` /
   * `stream`): the run then rejects with the error itself. A throw from it is ignored.
   */
  readonly onNonRecoverableError?: (error: NonRecoverableToolError, toolCallId: string) => void;
  /**
   * Makes every call durable (docs/durable.md, "Durable calls with your framework"): asked at
   * each call with a frozen LangChainDurableContext, it answers the call's run,
   * `({ threadId }) => ({ runId: threadId })`, and the call runs with `durable: { runId }` on
   * the source executor, which needs `durable: { store }`. So a tool node LangGraph runs again
   * after an `interrupt()` replays the calls that already ran. A throw or a bad answer rejects
   * the call with ToolContractError(INVALID_ARGUMENT) before it asks for approval or runs.
   */
  readonly durable?: DurableRunOf<LangChainDurableContext>;
}

/** What a LangChain call's `durable` function is given. Frozen. */
export interface LangChainDurableContext {
  /** The RunnableConfig's `configurable.thread_id` (LangGraph's thread) when it is a non-empty string. */
  readonly threadId: string | undefined;
  readonly toolCallId: string;
  readonly toolName: string;
}

/** A toolgate tool as a LangChain StructuredTool: `invoke` resolves with a ToolMessage. */
export class ToolgateLangChainTool extends StructuredTool<JSONSchema, unknown, unknown, ToolMessage> {
  static override lc_name(): string {
    return "ToolgateLangChainTool";
  }

  readonly name: string;
  readonly description: string;
  readonly schema: JSONSchema;
  readonly #plan: CallPlan;

  /** Made by `toLangChainTools`; not for direct use. */
  constructor(plan: CallPlan, name: string, description: string, schema: JSONSchema) {
    super();
    this.name = name;
    this.description = description;
    this.schema = schema;
    this.#plan = plan;
  }

  /**
   * StructuredTool's `call` without its schema check (toolgate's validator decides, so the
   * model reads toolgate's argument errors), with its callbacks: tool start/end/error events.
   */
  override async call<TArg, TConfig extends ToolRunnableConfig | undefined>(
    arg: TArg,
    configArg?: TConfig,
  ): Promise<ToolReturnType<TArg, TConfig, ToolMessage>> {
    const config = parseCallbackConfigArg(configArg) as ToolRunnableConfig;
    const isCall = isToolCall(arg);
    const input: unknown = isCall ? (arg as { readonly args?: unknown }).args : arg;
    const toolCallId = (isCall ? nonEmptyString((arg as { readonly id?: unknown }).id) : undefined) ?? nonEmptyString(config.toolCall?.id);
    const callbacks = CallbackManager.configure(config.callbacks, this.callbacks, config.tags, this.tags, config.metadata, this.metadata, {
      verbose: this.verbose,
    });
    const callbackInput = typeof input === "object" && input !== null && !Array.isArray(input) ? input : describeForCallbacks(input);
    const runManager = await callbacks?.handleToolStart(
      this.toJSON(),
      callbackInput as string,
      config.runId,
      undefined,
      undefined,
      undefined,
      config.runName ?? this.name,
      toolCallId,
    );
    let message: ToolMessage;
    try {
      // As LangChain's own `tool()` does: the call runs with its config in async-local storage,
      // which `interrupt` (and anything the tool's callbacks dispatch) reads.
      const childConfig = { ...config, runId: undefined, callbacks: runManager?.getChild() };
      message = await AsyncLocalStorageProviderSingleton.runWithConfig(childConfig, () =>
        runCall(this.#plan, { name: this.name, toolCallId: toolCallId ?? newCallId(), input, config, runManager }),
      );
    } catch (error) {
      await runManager?.handleToolError(error);
      throw error;
    }
    await runManager?.handleToolEnd(message);
    return message as ToolReturnType<TArg, TConfig, ToolMessage>;
  }

  /** Unused: `call` runs the tool. Present because StructuredTool declares it abstract. */
  protected override _call(): Promise<ToolMessage> {
    throw new Error("toolgate: ToolgateLangChainTool runs through call()");
  }
}

/** What every tool of one `toLangChainTools` shares. */
interface CallPlan {
  readonly source: ResolvedSource;
  readonly onProgress: ProgressListener | undefined;
  readonly needsApproval: LangChainNeedsApproval;
  readonly onFatal: FatalHook | undefined;
  readonly durable: DurableRunReader<LangChainDurableContext> | undefined;
}

type FatalHook = NonNullable<ToLangChainToolsOptions["onNonRecoverableError"]>;

/**
 * Every registered tool of `source` (a ToolRegistry, or any ToolExecutor) as a LangChain
 * StructuredTool, in registration order, for LangGraph's `ToolNode` / `createReactAgent` and
 * langchain's `createAgent`:
 *
 * - `schema`: the JSON Schema from describeTools, a copy of this tool's own (LangChain's
 *   validator writes into the schemas it compiles); LangChain does not check arguments
 *   against it, toolgate's validator decides.
 * - `invoke(toolCall, config)` runs the call through `source` with the tool call's `id` as
 *   toolgate's toolCallId (a fresh UUID when there is none) and a signal of its own that follows `config.signal`,
 *   and resolves with a ToolMessage: `status: "success"` with the result's content (and, with
 *   attachments, a text block then one `{ type: "image" | "audio" | "file", data, mimeType }` block per attachment), or
 *   `status: "error"` with toolgate's `{"error":{"code":…,"message":…}}` for a recoverable
 *   error result, which the model reads and can correct.
 * - A rejection (the abort reason, a ToolContractError, a NonRecoverableToolError) is thrown.
 *   ToolNode's default error handling turns any throw into an error ToolMessage and goes on:
 *   give ToolNode `handleToolErrors: false` to end the run with it (toolgate tools throw
 *   nothing recoverable, so nothing is lost), or abort the run's signal in
 *   `onNonRecoverableError`. docs/adapters.md says how for each agent.
 * - Progress reports go to `config.writer` (LangGraph `streamMode: "custom"`), as the custom
 *   event LANGCHAIN_PROGRESS_EVENT (streamEvents) and to `options.onProgress`.
 * - `needsApproval`: such a call first asks `interrupt(ToolgateApprovalRequest)`; the resume
 *   value is a ToolgateApprovalDecision naming the call; a denial (or any resume value that is
 *   not a decision) is answered with TOOL_CALL_DENIED, and the tool does not run; a decision
 *   naming another call is not this call's: it asks again.
 */
const LANGCHAIN_OPTION_KEYS: readonly string[] = ["withoutSchema", "onProgress", "needsApproval", "onNonRecoverableError", "durable"];

export function toLangChainTools(source: ToolCallSource, options: ToLangChainToolsOptions = {}): ToolgateLangChainTool[] {
  checkPeerVersions("toLangChainTools", ["@langchain/core", "@langchain/langgraph"]);
  const resolved = resolveSource(source, "toLangChainTools");
  const read = readOptions(options, "toLangChainTools: options", LANGCHAIN_OPTION_KEYS);
  const descriptions = describeForFramework(resolved.registry, read.withoutSchema);
  const onProgress = readProgressOption(read.onProgress);
  const onFatal = readFatalHook(read.onNonRecoverableError);
  const durable = readDurableOption<LangChainDurableContext>(read.durable, "toLangChainTools", resolved);
  const plan: CallPlan = ObjectFreeze({
    source: resolved,
    onProgress,
    needsApproval: readNeedsApproval(read.needsApproval),
    onFatal,
    durable,
  });
  const tools: ToolgateLangChainTool[] = [];
  for (const { name, description, parameters } of descriptions) {
    tools[tools.length] = new ToolgateLangChainTool(plan, name, description, parameters as JSONSchema);
  }
  return tools;
}

function readFatalHook(value: unknown): FatalHook | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "function" && !isProxy(value)) return value as FatalHook;
  throw new ToolContractError(
    ContractErrorCode.INVALID_ARGUMENT,
    "toLangChainTools: options.onNonRecoverableError must be a function, not a Proxy",
  );
}

function readNeedsApproval(value: unknown): LangChainNeedsApproval {
  if (value === undefined) return false;
  if (typeof value === "boolean" || (typeof value === "function" && !isProxy(value))) return value as LangChainNeedsApproval;
  throw new ToolContractError(
    ContractErrorCode.INVALID_ARGUMENT,
    `toLangChainTools: options.needsApproval must be a boolean or a function (got ${value === null ? "null" : typeof value})`,
  );
}

interface CallFacts {
  readonly name: string;
  readonly toolCallId: string;
  readonly input: unknown;
  readonly config: ToolRunnableConfig;
  readonly runManager: CallbackManagerForToolRun | undefined;
}

async function runCall(plan: CallPlan, facts: CallFacts): Promise<ToolMessage> {
  const { name, toolCallId, input, config } = facts;
  // Asked first: a call whose run cannot be told neither asks a person nor runs.
  const durable =
    plan.durable === undefined ? undefined : await plan.durable(ObjectFreeze({ threadId: threadIdOf(config), toolCallId, toolName: name }));
  if (await asksApproval(plan.needsApproval, toolCallId, name, input)) {
    const request: ToolgateApprovalRequest = ObjectFreeze({ type: "toolgate_approval", toolCallId, toolName: name, arguments: input });
    // Throws LangGraph's GraphInterrupt the first time; gives this call's decision on resume.
    const denial = readDecision(decisionFor(request));
    if (denial !== undefined) {
      return new ToolMessage({ status: "error", content: errorContent(ToolErrorCode.CALL_DENIED, denial), tool_call_id: toolCallId, name });
    }
  }
  let result: ToolResultMessage;
  try {
    result = await plan.source.run({
      id: toolCallId,
      name,
      args: input,
      signal: config.signal,
      onProgress: progressSink(plan, facts),
      durable,
    });
  } catch (error) {
    if (plan.onFatal !== undefined && isNonRecoverableToolError(error)) {
      try {
        plan.onFatal(error, toolCallId);
      } catch {
        // Ignored, as documented: the error is thrown either way.
      }
    }
    throw error;
  }
  if (result.isError) return new ToolMessage({ status: "error", content: result.content, tool_call_id: toolCallId, name });
  const { attachments, links } = carriedBlocks(result, "toLangChainTools");
  if (attachments.length === 0 && links.length === 0)
    return new ToolMessage({ status: "success", content: result.content, tool_call_id: toolCallId, name });
  // Fresh, unfrozen blocks: LangChain's message converters may rewrite a message's blocks.
  const content: ContentBlock[] = [{ type: "text", text: result.content }];
  for (let index = 0; index < attachments.length; index += 1)
    content[index + 1] = langChainBlock(attachments[index] as ToolgateAttachmentBlock);
  // LangChain's standard blocks have no link without its bytes that every provider converter takes: a text block names it.
  for (let index = 0; index < links.length; index += 1)
    content[content.length] = { type: "text", text: resourceLinkText(links[index] as ToolgateResourceLinkBlock) };
  return new ToolMessage({ status: "success", content, tool_call_id: toolCallId, name });
}

/**
 * An attachment as LangChain's standard content block of its kind (`image`, `audio`, `file`:
 * base64 `data` with its `mimeType`); a file's name and URI, when it has them, in `metadata`.
 */
function langChainBlock(block: ToolgateAttachmentBlock): ContentBlock {
  if (block.type !== "file") return { type: block.type, data: block.data, mimeType: block.mimeType };
  const metadata: { name?: string; uri?: string } = {};
  if (block.name !== undefined) metadata.name = block.name;
  if (block.uri !== undefined) metadata.uri = block.uri;
  return block.name === undefined && block.uri === undefined
    ? { type: "file", data: block.data, mimeType: block.mimeType }
    : { type: "file", data: block.data, mimeType: block.mimeType, metadata };
}

/** `needsApproval` asked for this call; a throw or any answer but `false` asks (fails closed). */
async function asksApproval(needsApproval: LangChainNeedsApproval, toolCallId: string, toolName: string, input: unknown): Promise<boolean> {
  if (typeof needsApproval === "boolean") return needsApproval;
  try {
    const request = ObjectFreeze({ type: "toolgate_approval" as const, toolCallId, toolName, arguments: input });
    return (await needsApproval(request)) !== false;
  } catch {
    return true;
  }
}

/**
 * The resume value meant for the call `request` asks about. LangGraph gives a node's
 * `interrupt` calls the resume values by their order, counted across the node (and a plain
 * value to every task waiting); the calls of one tool step run side by side and reach
 * `interrupt` in whatever order their approval predicates settle, which need not be the order
 * of the run before. So a value is taken only by the call it names: one naming another call is
 * passed over and this call asks again, which pauses the graph with its own request once the
 * values run out. A value that names no call is returned, for readDecision to deny.
 */
function decisionFor(request: ToolgateApprovalRequest): unknown {
  for (;;) {
    const value: unknown = interrupt(request); // throws GraphInterrupt once no value is left for this call
    const named = namedCall(value);
    if (named === undefined || named === request.toolCallId) return value;
  }
}

/** The `toolCallId` a resume value names: an own non-empty string of a decision object (not a Proxy); else undefined. */
function namedCall(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null || isProxy(value)) return undefined;
  const toolCallId = readOwnDataProperty(value, "toolCallId");
  return typeof toolCallId === "string" && toolCallId.length > 0 ? toolCallId : undefined;
}

const DENIED_WITHOUT_REASON = ObjectFreeze({ text: "the call was denied", cut: false });
const NOT_A_DECISION = ObjectFreeze({
  text: "the call was not approved: the resume value was not { toolCallId, allow: true } or { toolCallId, allow: false, reason } naming this call",
  cut: false,
});

/**
 * `{ toolCallId, allow: true }` allows (undefined); `{ toolCallId, allow: false, reason }` denies
 * with the reason; anything else denies. (decisionFor hands it only values naming this call, or none.)
 */
function readDecision(decision: unknown): { readonly text: string; readonly cut: boolean } | undefined {
  if (namedCall(decision) === undefined) return NOT_A_DECISION;
  const allow = readOwnDataProperty(decision as object, "allow");
  if (allow === true) return undefined;
  if (allow !== false) return NOT_A_DECISION;
  const reason = readOwnDataProperty(decision as object, "reason");
  return typeof reason === "string" && reason.length > 0 ? cutToCodePoints(reason, Limits.MAX_STRING_CODE_POINTS) : DENIED_WITHOUT_REASON;
}

/** Where a call's progress goes: `config.writer`, the tool run's custom event, `options.onProgress`. */
function progressSink(plan: CallPlan, { config, runManager }: CallFacts): ProgressListener {
  const writer: unknown = (config as { readonly writer?: unknown }).writer;
  const { onProgress } = plan;
  return (progress) => {
    const chunk: ToolgateLangChainProgress = ObjectFreeze({ type: LANGCHAIN_PROGRESS_EVENT, progress });
    if (typeof writer === "function") {
      try {
        ReflectApply(writer, undefined, [chunk]);
      } catch {
        // A failing writer drops this report for the stream; the other sinks still get it.
      }
    }
    if (runManager !== undefined) {
      // Observers are not awaited; a failing callback handler never reaches the call.
      void PromisePrototypeThen(runManager.handleCustomEvent(LANGCHAIN_PROGRESS_EVENT, chunk), undefined, () => undefined);
    }
    onProgress?.(progress);
  };
}

/** The input as tool-start callbacks get a non-object one: JSON text, never a throw (a BigInt, a cycle). */
function describeForCallbacks(input: unknown): string {
  try {
    return JSONStringify(input) ?? "undefined";
  } catch {
    return "(arguments that are not JSON)";
  }
}

/** `config.configurable.thread_id` when it is a non-empty string (LangGraph's thread); else undefined. */
function threadIdOf(config: ToolRunnableConfig): string | undefined {
  const configurable: unknown = config.configurable;
  if (typeof configurable !== "object" || configurable === null) return undefined;
  return nonEmptyString((configurable as { readonly thread_id?: unknown }).thread_id);
}

function isToolCall(value: unknown): boolean {
  return typeof value === "object" && value !== null && (value as { readonly type?: unknown }).type === "tool_call";
}

function nonEmptyString(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}
