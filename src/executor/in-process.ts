// The in-process executor: the seed's `executeToolCall(registry, call, signal)`, its batch
// twin, and the same thing as a ToolExecutor object. The tool runs on this thread.
// docs/contract.md: rules 1–13 through the pipeline; rule 3 — registry snapshot (the executor's own copy).
import { threadId } from "node:worker_threads";
import { ContractErrorCode } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { isPromise, ObjectFreeze, PromisePrototypeThen, PromiseReject, PromiseResolve } from "../contract/primordials.js";
import type { ToolResultMessage } from "../contract/results.js";
import type { ToolContext, ToolProgressReport } from "../contract/tools.js";
import { registeredTools, type ToolRegistry } from "../contract/tools.js";
import type { RunFacts } from "./hooks.js";
import { contextWithOwnSignal } from "./own-signal.js";
import {
  completeCall,
  executeCall,
  executeCalls,
  InFlight,
  type Pipeline,
  type PipelineSettings,
  type RunRequest,
  readExecutorOptions,
} from "./pipeline.js";
import { discardProgress, openProgressChannel, type ProgressChannel, type ProgressListener } from "./progress.js";
import { runTool, runWithTimeout, type ToolOutcome } from "./run-tool.js";
import type { BatchOptions, CallOptions, ExecutorOptions, ToolExecutor } from "./tool-executor.js";
import { recordArgumentBudgets } from "./tool-executor.js";

// In-process, the tool runs on the calling thread and nothing waits in a queue.
const HERE: RunFacts = ObjectFreeze({ threadId, queueWaitMs: 0 });

/**
 * Runs a validated call's tool right here, with a frozen `{ signal, toolCallId,
 * reportProgress, app? }` context; under `timeoutMs`, the signal the tool sees also fires at
 * expiry (cooperatively: see runWithTimeout). A progress channel closes as soon as the run settles.
 */
function runHere(request: RunRequest): ToolOutcome | Promise<ToolOutcome> {
  request.record(HERE);
  if (request.onProgress === undefined) return runWithin(request, discardProgress);
  const progress = new ProgressOnFirstReport(request);
  let outcome: ToolOutcome | Promise<ToolOutcome>;
  try {
    outcome = runWithin(request, progress.report);
  } catch (error) {
    progress.close();
    throw error;
  }
  if (!isPromise(outcome)) {
    progress.close();
    return outcome;
  }
  return PromisePrototypeThen(
    outcome,
    (settled) => {
      progress.close();
      return settled;
    },
    (error: unknown) => {
      progress.close();
      throw error;
    },
  ) as Promise<ToolOutcome>;
}

/**
 * A call's progress channel, opened at the tool's first report: most tools never report, and
 * a framework may pass a listener on every call (Pi always does), so opening it up front
 * would cost every call a throttle and its closures.
 */
class ProgressOnFirstReport {
  readonly report: ToolContext["reportProgress"];
  readonly #request: RunRequest;
  #channel: ProgressChannel | undefined;
  #closed = false;

  constructor(request: RunRequest) {
    this.#request = request;
    this.report = ObjectFreeze((report: ToolProgressReport) => this.#report(report));
  }

  #report(report: ToolProgressReport): void {
    if (this.#closed) return; // as a closed channel: a report after the run settled is not even read
    if (this.#channel === undefined) {
      const { call, signal, onProgress } = this.#request;
      this.#channel = openProgressChannel(onProgress as ProgressListener, call.id, call.name, signal);
    }
    this.#channel.report(report);
  }

  close(): void {
    this.#closed = true;
    this.#channel?.close();
  }
}

/**
 * The tool under the call's timeout, if it has one (its signal is then the timeout's, made for
 * this call alone), else with the call's own signal when an adapter gave one, made on first read.
 */
function runWithin(request: RunRequest, reportProgress: ToolContext["reportProgress"]): ToolOutcome | Promise<ToolOutcome> {
  const timeoutMs = request.timeoutMs;
  if (timeoutMs === undefined) {
    const own = request.ownSignal;
    // A durable call runs its request under a signal of its own (durable-call.ts): the tool is then handed that one.
    if (own !== undefined && own.followed === request.signal) {
      const { call, app, durable } = request;
      const context = contextWithOwnSignal(own, call.id, reportProgress, app, durable);
      // The request carries the executor's budgets; the run is aborted by the signal the tool's own follows.
      return runTool(request.tool, request.args, context, request, request.signal);
    }
    // The request carries the executor's budgets: it is the run's settings.
    return runTool(request.tool, request.args, contextOf(request, request.signal, reportProgress), request);
  }
  return runWithTimeout(timeoutMs, request.signal, (signal) =>
    runTool(request.tool, request.args, contextOf(request, signal, reportProgress), request),
  );
}

// docs/contract.md: rule 7 — execution context.
function contextOf(request: RunRequest, signal: AbortSignal, reportProgress: ToolContext["reportProgress"]): ToolContext {
  const app = request.app;
  const toolCallId = request.call.id;
  const durable = request.durable;
  if (durable !== undefined) {
    // A durable call's: its idempotency key and attempt (docs/durable.md).
    const { idempotencyKey, attempt } = durable;
    return ObjectFreeze(
      app === undefined
        ? { signal, toolCallId, reportProgress, idempotencyKey, attempt }
        : { signal, toolCallId, reportProgress, app, idempotencyKey, attempt },
    );
  }
  return ObjectFreeze(app === undefined ? { signal, toolCallId, reportProgress } : { signal, toolCallId, reportProgress, app });
}

/**
 * The pipeline a registry's calls run through (executeCallParts): `executeToolCall` makes one
 * per call, an adapter one for its lifetime, an InProcessToolExecutor one with its settings. The
 * registry is still read live (its tools are the registry's own map). A
 * ToolContractError(INVALID_ARGUMENT) for a registry that is not one.
 */
export function pipelineOf(registry: ToolRegistry, settings?: PipelineSettings): Pipeline {
  const tools = registeredTools(registry);
  return settings === undefined ? { tools, run: runHere } : { tools, run: runHere, settings };
}

/**
 * Runs one tool call through the boundary. Resolves to a frozen result linked to the call
 * (a success, or a recoverable `isError: true` result); rejects with ToolContractError for
 * a malformed call, with `signal.reason` when the signal aborts first, and with a genuine
 * NonRecoverableToolError thrown by the tool. The registry is read live. `options.timeoutMs`,
 * `options.app`, `options.argumentBudgets` and `options.onProgress` apply to this call (see CallOptions).
 */
export function executeToolCall(
  registry: ToolRegistry,
  call: unknown,
  signal: AbortSignal,
  options?: CallOptions,
): Promise<ToolResultMessage> {
  try {
    return executeCall(pipelineOf(registry), call, signal, options);
  } catch (error) {
    return PromiseReject(error); // a registry that is not one
  }
}

/**
 * In-process batch: every call is snapshotted before any tool runs (a malformed call
 * rejects the batch with INVALID_TOOL_CALL), then the calls run at most `concurrency` at a
 * time. Results come back in call order, each linked to its own call. Abort rejects with
 * `signal.reason`; a NonRecoverableToolError rejects the batch and aborts its siblings.
 */
export function executeToolCalls(
  registry: ToolRegistry,
  calls: readonly unknown[],
  signal: AbortSignal,
  options?: BatchOptions,
): Promise<ToolResultMessage[]> {
  try {
    return executeCalls(pipelineOf(registry), calls, signal, options);
  } catch (error) {
    return PromiseReject(error);
  }
}

/** Options of `InProcessToolExecutor`: the ones every executor takes. */
export type InProcessToolExecutorOptions = ExecutorOptions;

/**
 * The in-process executor as a ToolExecutor. It owns a snapshot of the registry it was
 * given (registering into that registry later adds nothing here). `close()` refuses new
 * calls with EXECUTOR_CLOSED and resolves once every accepted call has settled.
 * `options` (`timeoutMs`, `hooks`, `app`, budgets) are read and checked here, once.
 */
export class InProcessToolExecutor implements ToolExecutor {
  readonly #registry: ToolRegistry;
  readonly #pipeline: Pipeline;
  readonly #inFlight = new InFlight();
  #closing: Promise<void> | undefined;

  constructor(registry: ToolRegistry, options?: InProcessToolExecutorOptions) {
    registeredTools(registry); // a ToolContractError(INVALID_ARGUMENT) for anything else
    const settings = readExecutorOptions(options);
    this.#registry = registry.snapshot();
    this.#pipeline = pipelineOf(this.#registry, settings);
    recordArgumentBudgets(this, settings.argumentBudgets);
  }

  get registry(): ToolRegistry {
    return this.#registry.snapshot();
  }

  executeToolCall(call: unknown, signal: AbortSignal, options?: CallOptions): Promise<ToolResultMessage> {
    if (this.#closing !== undefined) return closed();
    // A call that completed synchronously is over: only a pending one is counted for close().
    const completed = completeCall(this.#pipeline, call, signal, options);
    return isPromise(completed)
      ? this.#inFlight.track(completed as Promise<ToolResultMessage>)
      : PromiseResolve(completed as ToolResultMessage);
  }

  executeBatch(calls: readonly unknown[], signal: AbortSignal, options?: BatchOptions): Promise<ToolResultMessage[]> {
    if (this.#closing !== undefined) return closed();
    return this.#inFlight.track(executeCalls(this.#pipeline, calls, signal, options));
  }

  close(): Promise<void> {
    this.#closing ??= this.#inFlight.allSettled();
    return this.#closing;
  }
}

function closed(): Promise<never> {
  return PromiseReject(new ToolContractError(ContractErrorCode.EXECUTOR_CLOSED, "the executor is closed"));
}
