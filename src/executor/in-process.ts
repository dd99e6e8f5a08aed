// The in-process executor: the seed's `executeToolCall(registry, call, signal)`, its batch
// twin, and the same thing as a ToolExecutor object. The tool runs on this thread.
import { COURSE_TOOL_EXECUTOR_CLOSED, COURSE_TOOL_INVALID_ARGUMENT } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { isProxy, NativePromise, ObjectFreeze, PromisePrototypeThen, PromiseReject, PromiseResolve } from "../contract/primordials.js";
import { registeredTools, type ToolRegistry } from "../contract/registry.js";
import type { CourseToolResultMessage } from "../contract/results.js";
import { executeCall, executeCalls, executorBudgets, type Pipeline, type RunRequest } from "./pipeline.js";
import { runTool, type ToolOutcome } from "./run-tool.js";
import type { BatchOptions, CallOptions, ExecutorBudgetOptions, ToolExecutor } from "./tool-executor.js";

/** Options of an `InProcessToolExecutor`, read and validated once, in the constructor. */
export interface InProcessToolExecutorOptions extends ExecutorBudgetOptions {}

/** Runs a validated call's tool right here, with a frozen `{ signal, toolCallId }` context. */
function runHere(request: RunRequest): ToolOutcome | Promise<ToolOutcome> {
  return runTool(request.tool, request.args, ObjectFreeze({ signal: request.signal, toolCallId: request.call.id }), request.outputBudgets);
}

function pipelineOf(registry: ToolRegistry): Pipeline {
  return { tools: registeredTools(registry), run: runHere };
}

/** The executor's pipeline: its own registry snapshot, and its options' budgets. */
function executorPipeline(registry: ToolRegistry, options: InProcessToolExecutorOptions | undefined): Pipeline {
  if (options === undefined) return pipelineOf(registry);
  if (typeof options !== "object" || options === null || isProxy(options)) {
    throw new ToolContractError(COURSE_TOOL_INVALID_ARGUMENT, "options must be an object");
  }
  return { tools: registeredTools(registry), run: runHere, ...executorBudgets(options) };
}

/**
 * Runs one tool call through the boundary. Resolves to a frozen result linked to the call
 * (a success, or a recoverable `isError: true` result); rejects with ToolContractError for
 * a malformed call, with `signal.reason` when the signal aborts first, and with a genuine
 * NonRecoverableToolError thrown by the tool. The registry is read live. `options.argumentBudgets`
 * overrides the default argument budgets for this call.
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

  constructor(registry: ToolRegistry, options?: InProcessToolExecutorOptions) {
    registeredTools(registry); // a ToolContractError(INVALID_ARGUMENT) for anything else
    this.#registry = registry.snapshot();
    this.#pipeline = executorPipeline(this.#registry, options);
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
