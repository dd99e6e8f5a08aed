// The in-process executor: the seed's `executeToolCall(registry, call, signal)`, its batch
// twin, and the same thing as a ToolExecutor object. The tool runs on this thread.
import { COURSE_TOOL_EXECUTOR_CLOSED } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { isPromise, NativePromise, ObjectFreeze, PromisePrototypeThen, PromiseReject, PromiseResolve } from "../contract/primordials.js";
import { registeredTools, type ToolRegistry } from "../contract/registry.js";
import type { CourseToolResultMessage } from "../contract/results.js";
import { executeCall, executeCalls, type Pipeline, type RunRequest } from "./pipeline.js";
import { openProgressChannel } from "./progress.js";
import { runTool, type ToolOutcome } from "./run-tool.js";
import type { BatchOptions, CallOptions, ToolExecutor } from "./tool-executor.js";

/**
 * Runs a validated call's tool right here, with a frozen `{ signal, toolCallId,
 * reportProgress }` context; its progress channel closes as soon as the run settles.
 */
function runHere(request: RunRequest): ToolOutcome | Promise<ToolOutcome> {
  const { call, signal, onProgress } = request;
  if (onProgress === undefined) return runTool(request.tool, request.args, { signal, toolCallId: call.id });
  const progress = openProgressChannel(onProgress, call.id, call.name, signal);
  let outcome: ToolOutcome | Promise<ToolOutcome>;
  try {
    outcome = runTool(request.tool, request.args, ObjectFreeze({ signal, toolCallId: call.id, reportProgress: progress.report }));
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

function pipelineOf(registry: ToolRegistry): Pipeline {
  return { tools: registeredTools(registry), run: runHere };
}

/**
 * Runs one tool call through the boundary. Resolves to a frozen result linked to the call
 * (a success, or a recoverable `isError: true` result); rejects with ToolContractError for
 * a malformed call, with `signal.reason` when the signal aborts first, and with a genuine
 * NonRecoverableToolError thrown by the tool. The registry is read live. `options.onProgress`
 * receives the tool's progress reports (see `CallOptions`).
 */
export function executeToolCall(
  registry: ToolRegistry,
  call: unknown,
  signal: AbortSignal,
  options?: CallOptions,
): Promise<CourseToolResultMessage> {
  try {
    return executeCall(pipelineOf(registry), call, signal, options);
  } catch (error) {
    return PromiseReject(error);
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
): Promise<CourseToolResultMessage[]> {
  try {
    return executeCalls(pipelineOf(registry), calls, signal, options);
  } catch (error) {
    return PromiseReject(error);
  }
}

/**
 * The in-process executor as a ToolExecutor. It owns a snapshot of the registry it was
 * given (registering into that registry later adds nothing here). `close()` refuses new
 * calls with EXECUTOR_CLOSED and resolves once every accepted call has settled.
 */
export class InProcessToolExecutor implements ToolExecutor {
  readonly #registry: ToolRegistry;
  readonly #pipeline: Pipeline;
  #inFlight = 0;
  #closing: Promise<void> | undefined;
  #drained: (() => void) | undefined;

  constructor(registry: ToolRegistry) {
    registeredTools(registry); // a ToolContractError(INVALID_ARGUMENT) for anything else
    this.#registry = registry.snapshot();
    this.#pipeline = pipelineOf(this.#registry);
  }

  get registry(): ToolRegistry {
    return this.#registry.snapshot();
  }

  executeToolCall(call: unknown, signal: AbortSignal, options?: CallOptions): Promise<CourseToolResultMessage> {
    if (this.#closing !== undefined) return closed();
    return this.#track(executeCall(this.#pipeline, call, signal, options));
  }

  executeBatch(calls: readonly unknown[], signal: AbortSignal, options?: BatchOptions): Promise<CourseToolResultMessage[]> {
    if (this.#closing !== undefined) return closed();
    return this.#track(executeCalls(this.#pipeline, calls, signal, options));
  }

  close(): Promise<void> {
    this.#closing ??= this.#inFlight === 0 ? PromiseResolve(undefined) : new NativePromise<void>((resolve) => (this.#drained = resolve));
    return this.#closing;
  }

  #track<T>(pending: Promise<T>): Promise<T> {
    this.#inFlight += 1;
    const settled = (): void => {
      this.#inFlight -= 1;
      if (this.#inFlight === 0) this.#drained?.();
    };
    void PromisePrototypeThen(pending, settled, settled);
    return pending;
  }
}

function closed(): Promise<never> {
  return PromiseReject(new ToolContractError(COURSE_TOOL_EXECUTOR_CLOSED, "the executor is closed"));
}
