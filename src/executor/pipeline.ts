// The pipeline every executor shares: one call top to bottom, then the options it applies
// (an executor's, read once; a call's, read as it starts), then the count of accepted calls
// that close() drains.
//
// One call, top to bottom, written once for every executor:
//   signal → options → snapshot → [onCallStart] → lookup → validate → signal → [beforeExecute]
//   → signal → run (under the effective timeout) → re-link → freeze → signal → [onCallEnd].
// onCallEnd is read off the promise handed out, after its last abort check, so it tells what the caller got.
// An executor supplies only `run`: how a validated call's tool is executed and its output
// serialized (in this thread, in a worker thread, on another machine).
// docs/contract.md: rules 4–8 and 13, in this order; rule W4 — re-link and freeze on the main thread.
import type { ToolApp } from "../contract/app.js";
import {
  type ArgumentBudgets,
  attachmentBudgetsFor,
  DEFAULT_ARGUMENT_BUDGETS,
  DEFAULT_ATTACHMENT_BUDGETS,
  DEFAULT_OUTPUT_BUDGETS,
  type ResolvedArgumentBudgets,
  type ResolvedAttachmentBudgets,
  type ResolvedOutputBudgets,
  readArgumentBudgets,
  readAttachmentBudgets,
  readOutputBudgets,
  resolveBudgets,
} from "../contract/budgets.js";
import { type AcceptedArguments, snapshotCallParts, snapshotToolCall, type ToolCall, validateArguments } from "../contract/call.js";
import { ContractErrorCode, Limits, type RecoverableToolErrorCode, ToolErrorCode } from "../contract/constants.js";
import {
  ArrayPrototypeJoin,
  isPromise,
  JSONStringify,
  MapPrototypeGet,
  MapPrototypeGetSize,
  mapKeyStepper,
  NativePromise,
  ObjectFreeze,
  ObjectHasOwn,
  PromisePrototypeThen,
  PromiseReject,
  PromiseResolve,
} from "../contract/primordials.js";
import { adoptAttachments, errorContent, guardThen, type ToolResultMessage, toolResultMessage } from "../contract/results.js";
import { cutToCodePoints } from "../contract/serialize.js";
import { checkTimeoutMs } from "../contract/timeout.js";
import type { Tool } from "../contract/tools.js";
import type { FailureText } from "../contract/untrusted.js";
import { readOwnOption, validateObject, validateOptionKeys } from "../contract/validators.js";
import type { DurableEngine } from "../durable/store.js";
import { runBatch } from "./batch.js";
import {
  checkDurableStore,
  type DurableRun,
  type DurableSteps,
  readDurableCallOption,
  readDurableExecutorOption,
  runDurable,
} from "./durable-call.js";
import { approve, CallTrace, type ResolvedHooks, type RunFacts, resolveHooks } from "./hooks.js";
import { toolMeters } from "./metrics.js";
import type { OwnSignal } from "./own-signal.js";
import { checkProgressListener, type ProgressListener } from "./progress.js";
import { effectiveTimeoutMs, type ToolOutcome } from "./run-tool.js";
import { assertAbortSignal, throwIfAborted } from "./signal.js";
import type { BatchOptions, CallOptions } from "./tool-executor.js";
import { startToolSpan } from "./tracing.js";
import { NO_RECORDING, readTracingOptions, type TracingSettings } from "./tracing-options.js";

/** A validated (and approved) call, ready for its tool to run. */
export interface RunRequest {
  readonly call: Readonly<ToolCall>;
  readonly tool: Tool;
  /** What the validator accepted: the value `execute` receives. */
  readonly args: unknown;
  readonly signal: AbortSignal;
  /** The call's time limit in ms (see `effectiveTimeoutMs`), or undefined for none. The runner enforces it. */
  readonly timeoutMs: number | undefined;
  /** `context.app` for a tool that runs on this thread; a runner on another thread cannot pass it on. */
  readonly app: ToolApp | undefined;
  /** Tells the pipeline where and how the call runs (queue wait, thread, a kill), for the telemetry events. */
  readonly record: (facts: RunFacts) => void;
  /** The executor's output budgets; the tool's own `budgets` override them (runTool merges). */
  readonly outputBudgets: ResolvedOutputBudgets;
  /** The executor's attachment budgets; the tool's own `attachmentBudgets` override them (runTool merges). */
  readonly attachmentBudgets: ResolvedAttachmentBudgets;
  /** The caller's `onProgress`, if any: where the tool's progress reports go. */
  readonly onProgress: ProgressListener | undefined;
  /** A durable call's idempotency key and attempt, for the tool's context (docs/durable.md); absent otherwise. */
  readonly durable?: DurableRun;
  /**
   * An adapter call's: the signal of its own a tool on this thread gets, made on first read and
   * following `signal` (own-signal.ts). Absent: a tool on this thread is handed `signal` itself.
   */
  readonly ownSignal?: OwnSignal | undefined;
}

/**
 * Runs a validated call's tool and serializes its output. Resolves to the bounded outcome;
 * rejects with the signal's reason as soon as it aborts, or with a NonRecoverableToolError.
 */
export type ToolRunner = (request: RunRequest) => ToolOutcome | Promise<ToolOutcome>;

/** What an executor hands the pipeline: the tools it owns, how it runs one, and its options. */
export interface Pipeline {
  readonly tools: Map<string, Tool>;
  readonly run: ToolRunner;
  /** The executor's `ExecutorOptions`, read by `readExecutorOptions`; absent: none. */
  readonly settings?: PipelineSettings;
}

/**
 * `executeToolCall` of every executor: the signal first, then the options and the snapshot
 * (within the call's argument budgets), then the call. Never throws: every failure is a
 * rejection. A call whose tool settles synchronously costs one promise, the one returned.
 */
export function executeCall(pipeline: Pipeline, call: unknown, signal: AbortSignal, options?: CallOptions): Promise<ToolResultMessage> {
  const completed = completeCall(pipeline, call, signal, options);
  return isPromise(completed) ? (completed as Promise<ToolResultMessage>) : PromiseResolve(completed as ToolResultMessage);
}

/**
 * `executeCall` that gives the result itself when the call completed synchronously (after the
 * last abort check), else a promise: an executor that counts its pending calls need not count
 * one that is already over. Never throws.
 */
export function completeCall(
  pipeline: Pipeline,
  call: unknown,
  signal: AbortSignal,
  options?: CallOptions,
): ToolResultMessage | Promise<ToolResultMessage> {
  try {
    assertAbortSignal(signal);
    // docs/contract.md: rule 8 — abort wins (even over a malformed call).
    throwIfAborted(signal);
    const callOptions = readCallOptions(options, "call options");
    checkDurableStore(pipeline.settings, callOptions);
    // docs/contract.md: rule 4 — call snapshot.
    // The tools: a tool's own argument budgets tighten the call's (looked up by the call's name).
    const snapshot = snapshotToolCall(call, callArgumentBudgets(pipeline.settings, callOptions), pipeline.tools);
    return startCall(pipeline, snapshot, signal, callOptions);
  } catch (error) {
    return PromiseReject(error);
  }
}

/**
 * A call an adapter assembled from its framework's id, name and arguments (untrusted: checked
 * and snapshotted as any call's), with the adapter's own progress listener, if any, and what
 * its precheck accepted (`accepted`, see AcceptedArguments). Its signal is passed beside it.
 */
export interface AdapterCall {
  readonly id: unknown;
  readonly name: unknown;
  readonly args: unknown;
  readonly onProgress?: ProgressListener | undefined;
  readonly accepted?: AcceptedArguments | undefined;
}

/**
 * `executeCall` for an adapter that assembles the call from what its framework passed (the
 * id, the name, the arguments) and whose only option is its own progress listener: the same
 * steps, without reading back a call record and an options object toolgate made itself. A
 * call that completed synchronously gives its result itself, after the last abort check (the
 * adapter hands on its own promise, one turn sooner); anything else, a promise. Never throws.
 * `ownSignal`: the tool's signal of its own, following `signal` (own-signal.ts): the adapter
 * passes the framework's signal, shared by its calls, as `signal` for the pipeline's own
 * checks, and stops this one when the call settles. Absent: the tool is handed `signal` itself.
 */
export function executeCallParts(
  pipeline: Pipeline,
  call: AdapterCall,
  signal: AbortSignal,
  ownSignal: OwnSignal | undefined,
): ToolResultMessage | Promise<ToolResultMessage> {
  const { onProgress, accepted } = call;
  try {
    assertAbortSignal(signal);
    throwIfAborted(signal); // rule 8 — abort wins (even over a malformed call)
    const callOptions =
      onProgress === undefined && accepted === undefined && ownSignal === undefined
        ? NO_CALL_OPTIONS
        : new AdapterCallSettings(onProgress, accepted, ownSignal);
    const budgets = callArgumentBudgets(pipeline.settings, callOptions);
    const snapshot = snapshotCallParts(call.id, call.name, call.args, budgets, pipeline.tools, accepted);
    return startCall(pipeline, snapshot, signal, callOptions);
  } catch (error) {
    return PromiseReject(error);
  }
}

/**
 * The snapshot on: onCallStart when there are hooks, the call, and the last abort check, on
 * the promise handed out (with hooks, or when the call is pending) or on the result itself.
 */
function startCall(
  pipeline: Pipeline,
  snapshot: Readonly<ToolCall>,
  signal: AbortSignal,
  callOptions: CallSettings,
): ToolResultMessage | Promise<ToolResultMessage> {
  const settings = pipeline.settings;
  const hooks = settings?.hooks;
  const span = startToolSpan(snapshot, settings?.tracing ?? NO_RECORDING);
  const meters = toolMeters();
  if (hooks === undefined && span === undefined && meters === undefined) {
    const completed = settleCall(pipeline, snapshot, signal, callOptions);
    return isPromise(completed) ? handOut(completed, signal) : publishNow(completed as ToolResultMessage, signal);
  }
  return traced(new CallTrace(hooks, snapshot, span, meters), signal, (trace) =>
    handOut(settleCall(pipeline, trace, signal, callOptions), signal),
  );
}

// docs/contract.md: rule 8 — abort wins (until the result is published).
/** The last abort check, on the very promise the caller holds. */
function handOut(completed: ToolResultMessage | Promise<ToolResultMessage>, signal: AbortSignal): Promise<ToolResultMessage> {
  if (!isPromise(completed)) return PromiseResolve(publishNow(completed as ToolResultMessage, signal));
  return PromisePrototypeThen(completed, (result) => publishNow(result, signal)) as Promise<ToolResultMessage>;
}

function publishNow(result: ToolResultMessage, signal: AbortSignal): ToolResultMessage {
  throwIfAborted(signal);
  return guardThen(result);
}

// docs/contract.md: rule W6 — batches.
/** `executeBatch` of every executor; the per-call options apply to every call of the batch. */
export async function executeCalls(
  pipeline: Pipeline,
  calls: readonly unknown[],
  signal: AbortSignal,
  options?: BatchOptions,
): Promise<ToolResultMessage[]> {
  assertAbortSignal(signal); // before the options, as for a single call
  const callOptions = readCallOptions(options, "batch options");
  checkDurableStore(pipeline.settings, callOptions);
  const budgets = callArgumentBudgets(pipeline.settings, callOptions);
  const results = await runBatch(calls, signal, options, {
    argumentBudgets: budgets,
    tools: pipeline.tools,
    runOne: (call, batchSignal) => completeCallLater(pipeline, call, batchSignal, callOptions),
  });
  throwIfAborted(signal); // on the very promise the caller holds
  return results;
}

/** A batch's call from its snapshot on, as a promise that never throws synchronously; the final abort check is the batch's. */
function completeCallLater(
  pipeline: Pipeline,
  call: Readonly<ToolCall>,
  signal: AbortSignal,
  options: CallSettings,
): Promise<ToolResultMessage> {
  try {
    throwIfAborted(signal); // the batch may have been aborted since this call was snapshotted
    const settings = pipeline.settings;
    const hooks = settings?.hooks;
    const span = startToolSpan(call, settings?.tracing ?? NO_RECORDING);
    const meters = toolMeters();
    if (hooks !== undefined || span !== undefined || meters !== undefined) {
      return traced(new CallTrace(hooks, call, span, meters), signal, (trace) => settleCall(pipeline, trace, signal, options));
    }
    const completed = settleCall(pipeline, call, signal, options);
    return isPromise(completed) ? (completed as Promise<ToolResultMessage>) : PromiseResolve(completed as ToolResultMessage);
  } catch (error) {
    return PromiseReject(error);
  }
}

/**
 * A call between onCallStart and onCallEnd. The end event is read off the very promise that
 * is handed on (the caller's, or the batch's for its member), once it has settled: it tells
 * what its holder got, and nothing after it (an abort from onCallEnd itself) can change that.
 */
function traced(
  trace: CallTrace,
  signal: AbortSignal,
  settle: (trace: CallTrace) => ToolResultMessage | Promise<ToolResultMessage>,
): Promise<ToolResultMessage> {
  const settled = settledLater(() => settle(trace));
  void PromisePrototypeThen(
    settled,
    (result) => trace.ended(result as ToolResultMessage),
    (error: unknown) => trace.rejected(error, signal),
  );
  return settled;
}

/** What `settle` gives, as a promise (its throw a rejection). */
function settledLater(settle: () => ToolResultMessage | Promise<ToolResultMessage>): Promise<ToolResultMessage> {
  try {
    const completed = settle();
    return isPromise(completed) ? (completed as Promise<ToolResultMessage>) : PromiseResolve(completed as ToolResultMessage);
  } catch (error) {
    return PromiseReject(error);
  }
}

/**
 * Lookup, validation, approval, then the run. Synchronous until something it runs is not.
 * `subject` is the call, or the trace that watches it when the executor has hooks.
 */
function settleCall(
  pipeline: Pipeline,
  subject: Readonly<ToolCall> | CallTrace,
  signal: AbortSignal,
  options: CallSettings,
): ToolResultMessage | Promise<ToolResultMessage> {
  const trace = subject instanceof CallTrace ? subject : undefined;
  const call = trace === undefined ? (subject as Readonly<ToolCall>) : trace.call;
  throwIfAborted(signal); // onCallStart may have run, and a batch member waits its turn
  const tool = MapPrototypeGet(pipeline.tools, call.name);
  // docs/contract.md: rule 5 — unknown tool.
  if (tool === undefined) return answered(call, ToolErrorCode.NOT_FOUND, notFound(call.name, pipeline.tools));
  const span = trace?.span;
  span?.described(tool, call);
  // docs/contract.md: rule 6 — validation first (or the verdict on the very snapshot the call took: AcceptedArguments).
  const accepted = options.accepted;
  const validation =
    accepted !== undefined && accepted.args === call.arguments && accepted.tool === tool
      ? accepted
      : validateArguments(tool, call.arguments);
  throwIfAborted(signal); // the validator may have taken long, or aborted the run itself (rule 8 — abort wins)
  if (!validation.ok) return answered(call, validation.code, validation.failure);
  const settings = pipeline.settings ?? DEFAULT_PIPELINE_SETTINGS;
  // docs/contract.md: rule 7 — execution context (execute gets the validated value).
  // The request is the call's one record from here on: approval, the run and publication read it.
  const request: RunRequest = {
    call,
    tool,
    args: validation.value,
    signal,
    timeoutMs: effectiveTimeoutMs(options.timeoutMs, tool.timeoutMs, settings.timeoutMs),
    app: options.app !== undefined ? options.app : settings.app,
    record: trace === undefined ? ignoreFacts : trace.record,
    outputBudgets: settings.outputBudgets,
    attachmentBudgets: settings.attachmentBudgets,
    // A recording span hears the tool's progress reports (as events) even when the caller does not listen.
    onProgress: span === undefined ? options.onProgress : span.progressListener(options.onProgress),
    ownSignal: options.ownSignal,
  };
  const durable = options.durable;
  if (durable !== undefined)
    return runDurable(settings.durable as DurableEngine, durable, request, trace, durableSteps(pipeline, trace, request));
  const approval = trace?.hooks === undefined ? undefined : approve(trace.hooks, request);
  if (approval === undefined) return runRequest(pipeline, request, trace);
  return PromisePrototypeThen(approval, (denial) => {
    if (denial !== undefined) return toolResultMessage(call, errorContent(ToolErrorCode.CALL_DENIED, denial), true);
    throwIfAborted(signal);
    return runRequest(pipeline, request, trace);
  }) as Promise<ToolResultMessage>;
}

/** What a durable call borrows from this pipeline (durable-call.ts): the runner, publication, and the approval hook. */
function durableSteps(pipeline: Pipeline, trace: CallTrace | undefined, request: RunRequest): DurableSteps {
  const hooks = trace?.hooks;
  return {
    run: pipeline.run,
    publish,
    approve:
      hooks === undefined || hooks.beforeExecute === undefined
        ? undefined
        : () => approve(hooks, request) as Promise<FailureText | undefined>,
    denied: (reason) => toolResultMessage(request.call, errorContent(ToolErrorCode.CALL_DENIED, reason), true),
  };
}

/** The executor's run (under the request's effective timeout: call > tool > executor), then publication. */
function runRequest(pipeline: Pipeline, request: RunRequest, trace: CallTrace | undefined): ToolResultMessage | Promise<ToolResultMessage> {
  trace?.runStarted();
  const span = trace?.span;
  const outcome = span === undefined ? pipeline.run(request) : span.within(() => pipeline.run(request));
  if (!isPromise(outcome)) {
    trace?.runEnded();
    return publish(request, outcome as ToolOutcome);
  }
  return PromisePrototypeThen(outcome as Promise<ToolOutcome>, (settled) => {
    trace?.runEnded();
    return publish(request, settled);
  }) as Promise<ToolResultMessage>;
}

// docs/contract.md: rule 13 — frozen, linked results (built from the snapshot, whatever ran the tool).
/**
 * The outcome as a frozen linked result; attachments checked again, against the tool's
 * budgets over the executor's (a runner may have carried them across a thread).
 */
function publish(request: RunRequest, outcome: ToolOutcome): ToolResultMessage {
  const call = request.call;
  // Own only: an `attachments` planted on Object.prototype is not an outcome's.
  const attachments = ObjectHasOwn(outcome, "attachments") ? outcome.attachments : undefined;
  if (attachments === undefined) return toolResultMessage(call, outcome.content, outcome.isError);
  const adopted = adoptAttachments(attachments, attachmentBudgetsFor(request.tool.attachmentBudgets, request.attachmentBudgets));
  if (typeof adopted === "string") {
    return toolResultMessage(call, errorContent(ToolErrorCode.OUTPUT_SERIALIZATION_FAILED, { text: adopted, cut: false }), true);
  }
  return toolResultMessage(call, outcome.content, outcome.isError, adopted);
}

/** A request's `record` when nothing hears the facts (no hooks, span or meters): a runner may skip making them. */
export function ignoreFacts(): void {}

function answered(call: Readonly<ToolCall>, code: RecoverableToolErrorCode, failure: FailureText): ToolResultMessage {
  return toolResultMessage(call, errorContent(code, failure), true);
}

const MAX_ECHOED_NAME_CODE_POINTS = 128;
const MAX_LISTED_NAME_CODE_POINTS = 64;

/** Names what is registered (bounded), so the model can correct itself. */
function notFound(name: string, tools: Map<string, Tool>): FailureText {
  const echoed = JSONStringify(cutToCodePoints(name, MAX_ECHOED_NAME_CODE_POINTS).text);
  const total = MapPrototypeGetSize(tools);
  if (total === 0) return { text: `Tool ${echoed} is not registered. No tools are registered.`, cut: false };
  const listed: string[] = [];
  const next = mapKeyStepper(tools);
  for (let step = next(); step.done !== true && listed.length < Limits.MAX_LISTED_TOOL_NAMES; step = next()) {
    listed[listed.length] = cutToCodePoints(step.value, MAX_LISTED_NAME_CODE_POINTS).text;
  }
  const more = total > listed.length ? `, and ${total - listed.length} more` : "";
  return { text: `Tool ${echoed} is not registered. Available tools: ${ArrayPrototypeJoin(listed, ", ")}${more}.`, cut: false };
}

// The options every executor shares, read once and checked up front: an executor's
// (`timeoutMs`, `hooks`, `app`, the argument, output and attachment budgets) when it is made, a call's (`timeoutMs`, `app`,
// `argumentBudgets`) when it starts.
// Only own data properties are read, so a getter or a Proxy never runs during a call.
// docs/contract.md: rule W1 — tool modules (every option validated up front); docs/operations.md — Timeouts, Application context; docs/guarantees.md — Budgets.

/** An executor's resolved options: what its pipeline applies to every call. */
export interface PipelineSettings {
  readonly timeoutMs: number | undefined;
  readonly hooks: ResolvedHooks | undefined;
  readonly app: ToolApp | undefined;
  /** What each call's span records (absent: NO_RECORDING). */
  readonly tracing?: TracingSettings;
  /** The executor's argument budgets over the defaults; a call's own override them. */
  readonly argumentBudgets: ResolvedArgumentBudgets;
  /** The executor's output budgets over the defaults; a tool's own override them. */
  readonly outputBudgets: ResolvedOutputBudgets;
  /** The executor's attachment budgets over the defaults; a tool's own override them. */
  readonly attachmentBudgets: ResolvedAttachmentBudgets;
  /** The store of the executor's `durable` option, if any: durable calls need one. */
  readonly durable?: DurableEngine | undefined;
}

/** One call's (or one batch's) resolved options. */
export interface CallSettings {
  readonly timeoutMs: number | undefined;
  readonly app: ToolApp | undefined;
  /** Checked, not yet resolved: they apply over the executor's. */
  readonly argumentBudgets: ArgumentBudgets | undefined;
  readonly onProgress: ProgressListener | undefined;
  /** An adapter's: arguments its precheck accepted (see AcceptedArguments). */
  readonly accepted?: AcceptedArguments | undefined;
  /** The run id of `options.durable`: the call is durable under (this run id, its call id). */
  readonly durable?: string | undefined;
  /** An adapter's: the tool's signal of its own (executeCallParts' `ownSignal`). */
  readonly ownSignal?: OwnSignal | undefined;
}

/** What an executor made without options applies. */
export const DEFAULT_PIPELINE_SETTINGS: PipelineSettings = ObjectFreeze({
  timeoutMs: undefined,
  hooks: undefined,
  app: undefined,
  argumentBudgets: DEFAULT_ARGUMENT_BUDGETS,
  outputBudgets: DEFAULT_OUTPUT_BUDGETS,
  attachmentBudgets: DEFAULT_ATTACHMENT_BUDGETS,
  durable: undefined,
});

const NO_CALL_OPTIONS: CallSettings = ObjectFreeze({
  timeoutMs: undefined,
  app: undefined,
  argumentBudgets: undefined,
  onProgress: undefined,
});

/** The settings of an adapter's call: its own progress listener, arguments a precheck accepted, and the tool's own signal. */
class AdapterCallSettings implements CallSettings {
  readonly timeoutMs = undefined;
  readonly app = undefined;
  readonly argumentBudgets = undefined;
  constructor(
    readonly onProgress: ProgressListener | undefined,
    readonly accepted: AcceptedArguments | undefined,
    readonly ownSignal: OwnSignal | undefined,
  ) {}
}

/** The options every executor takes (each executor may add its own). */
export const EXECUTOR_OPTION_KEYS: readonly string[] = ObjectFreeze([
  "timeoutMs",
  "hooks",
  "tracing",
  "app",
  "argumentBudgets",
  "outputBudgets",
  "attachmentBudgets",
  "durable",
]);
/** The options of one call (`CallOptions`). */
const CALL_OPTION_KEYS: readonly string[] = ObjectFreeze(["timeoutMs", "app", "argumentBudgets", "onProgress", "durable"]);
/** The options of a batch (`BatchOptions`): a call's, and `concurrency`. */
// Written out, not spread: a module of toolgate may first load after a tool module patched Array.prototype.
const BATCH_OPTION_KEYS: readonly string[] = ObjectFreeze(["timeoutMs", "app", "argumentBudgets", "onProgress", "concurrency", "durable"]);

/** A hook given where an executor's or a call's options are read: where it belongs. */
export const HOOKS_ELSEWHERE: { readonly [key: string]: string } = ObjectFreeze({
  __proto__: null,
  beforeExecute: "hooks.beforeExecute",
  onCallStart: "hooks.onCallStart",
  onCallEnd: "hooks.onCallEnd",
  onThreadKilled: "hooks.onThreadKilled",
  onHookError: "hooks.onHookError",
} as unknown as { readonly [key: string]: string });

/**
 * Reads `ExecutorOptions` (absent: none); a ToolContractError(INVALID_ARGUMENT) naming a bad
 * one, or an unknown key. `known`: every option the executor takes (the shared ones, then its
 * own, which it reads itself).
 */
export function readExecutorOptions(options: unknown, known: readonly string[] = EXECUTOR_OPTION_KEYS): PipelineSettings {
  if (options === undefined) return DEFAULT_PIPELINE_SETTINGS;
  validateObject(options, "options");
  validateOptionKeys(options, "options", known, HOOKS_ELSEWHERE);
  const timeoutMs = readOwnOption(options, "timeoutMs", "options");
  const hooks = readOwnOption(options, "hooks", "options");
  const argumentBudgets = readOwnOption(options, "argumentBudgets", "options");
  const outputBudgets = readOwnOption(options, "outputBudgets", "options");
  const attachmentBudgets = readOwnOption(options, "attachmentBudgets", "options");
  return ObjectFreeze({
    timeoutMs: timeoutMs === undefined ? undefined : checkTimeoutMs(timeoutMs, "options.timeoutMs", ContractErrorCode.INVALID_ARGUMENT),
    hooks: hooks === undefined ? undefined : resolveHooks(hooks),
    app: readOwnOption(options, "app", "options") as ToolApp | undefined,
    tracing: readTracingOptions(readOwnOption(options, "tracing", "options")),
    argumentBudgets: resolveBudgets(
      DEFAULT_ARGUMENT_BUDGETS,
      argumentBudgets === undefined ? undefined : readArgumentBudgets(argumentBudgets, "options.argumentBudgets"),
    ),
    outputBudgets: resolveBudgets(
      DEFAULT_OUTPUT_BUDGETS,
      outputBudgets === undefined ? undefined : readOutputBudgets(outputBudgets, "options.outputBudgets"),
    ),
    attachmentBudgets: resolveBudgets(
      DEFAULT_ATTACHMENT_BUDGETS,
      attachmentBudgets === undefined ? undefined : readAttachmentBudgets(attachmentBudgets, "options.attachmentBudgets"),
    ),
    durable: readDurableExecutorOption(readOwnOption(options, "durable", "options")),
  });
}

/** Reads `CallOptions` (`what`: "call options"), or the per-call part of `BatchOptions` ("batch options", which may also hold `concurrency`). */
export function readCallOptions(options: unknown, what: string): CallSettings {
  if (options === undefined) return NO_CALL_OPTIONS;
  validateObject(options, what);
  validateOptionKeys(options, what, what === "batch options" ? BATCH_OPTION_KEYS : CALL_OPTION_KEYS, HOOKS_ELSEWHERE);
  const timeoutMs = readOwnOption(options, "timeoutMs", "options");
  const app = readOwnOption(options, "app", "options") as ToolApp | undefined;
  const argumentBudgets = readOwnOption(options, "argumentBudgets", "options");
  const onProgress = readOwnOption(options, "onProgress", "options");
  const durable = readDurableCallOption(readOwnOption(options, "durable", "options"));
  if (timeoutMs === undefined && app === undefined && argumentBudgets === undefined && onProgress === undefined && durable === undefined) {
    return NO_CALL_OPTIONS;
  }
  return {
    timeoutMs: timeoutMs === undefined ? undefined : checkTimeoutMs(timeoutMs, "options.timeoutMs", ContractErrorCode.INVALID_ARGUMENT),
    app,
    argumentBudgets: argumentBudgets === undefined ? undefined : readArgumentBudgets(argumentBudgets, "options.argumentBudgets"),
    onProgress: onProgress === undefined ? undefined : checkProgressListener(onProgress),
    durable,
  };
}

/** A call's argument budgets: its own over the executor's. */
export function callArgumentBudgets(settings: PipelineSettings | undefined, options: CallSettings): ResolvedArgumentBudgets {
  const base = settings === undefined ? DEFAULT_ARGUMENT_BUDGETS : settings.argumentBudgets;
  return options.argumentBudgets === undefined ? base : resolveBudgets(base, options.argumentBudgets);
}

// The calls and batches an executor accepted and that have not settled yet: close() refuses new
// ones, then waits for these (docs/contract.md: rule W5 — faults are results, "close() drains
// accepted calls"; the in-process executor's close() keeps the same promise).

export class InFlight {
  #count = 0;
  #drained: (() => void) | undefined;
  /** One handler for every tracked promise, made once (not a closure per call). */
  readonly #settled = (): void => {
    this.#count -= 1;
    if (this.#count === 0) this.#drained?.();
  };

  /** Counts `pending` until it settles, either way; gives it back unchanged. */
  track<T>(pending: Promise<T>): Promise<T> {
    this.#count += 1;
    void PromisePrototypeThen(pending, this.#settled, this.#settled);
    return pending;
  }

  /** Resolves once nothing tracked is pending (at once when nothing is). */
  allSettled(): Promise<void> {
    if (this.#count === 0) return PromiseResolve(undefined);
    return new NativePromise<void>((resolve) => {
      this.#drained = resolve;
    });
  }
}
