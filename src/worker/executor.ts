// WorkerToolExecutor: the main thread snapshots, validates and owns the registry; a Piscina
// pool runs `execute` and the serializer. Abort is relayed over the control channel, a tool
// that ignores it is terminated after a grace period, and every fault is a per-call result.
import { randomUUID } from "node:crypto";
import { availableParallelism } from "node:os";
import type { ResourceLimits } from "node:worker_threads";
import { Piscina } from "piscina";
import {
  COURSE_TOOL_EXECUTION_FAILED,
  COURSE_TOOL_EXECUTION_TIMEOUT,
  COURSE_TOOL_EXECUTOR_CLOSED,
  COURSE_TOOL_INVALID_ARGUMENT,
  COURSE_TOOL_VALIDATION_FAILED,
} from "../contract/constants.js";
import { NonRecoverableToolError, ToolContractError } from "../contract/errors.js";
import { describeFailure } from "../contract/failure.js";
import { MapPrototypeGet, NativePromise, ObjectFreeze } from "../contract/primordials.js";
import { registeredTools, type ToolRegistry } from "../contract/registry.js";
import { type CourseToolResultMessage, errorContent } from "../contract/results.js";
import { watchAbort } from "../executor/abort-watch.js";
import { executeCall, executeCalls, type Pipeline, type RunRequest } from "../executor/pipeline.js";
import type { ToolOutcome } from "../executor/run-tool.js";
import { abortReason } from "../executor/signal.js";
import type { BatchOptions, CallOptions, ToolExecutor } from "../executor/tool-executor.js";
import { PoolControl } from "./pool-control.js";
import type { StopReason, ToolWorkerData, WorkerOutcome, WorkerTask, WorkerWarmup } from "./protocol.js";
import { TaskBoard } from "./task-board.js";
import { type LoadedToolModules, loadToolModules, type ToolModuleSpecifier } from "./tool-modules.js";

/** Options of `WorkerToolExecutor.create`. */
export interface WorkerToolExecutorOptions {
  /** Tool modules: ES modules whose default export is an array of tool definitions. */
  readonly modules: readonly ToolModuleSpecifier[];
  /** Threads kept alive (default 1, so the first call does not wait for a thread to boot). */
  readonly minThreads?: number;
  /** Upper bound of threads, and of calls running at once (default `os.availableParallelism()`). */
  readonly maxThreads?: number;
  /** Milliseconds an idle thread above `minThreads` lives on (default 30 000: bursts reuse threads). */
  readonly idleTimeout?: number;
  /** After an abort or timeout, how long a tool may keep running before its thread is terminated (default 1000). */
  readonly abortGraceMs?: number;
  /** Per-call limit in milliseconds; expiry gives a TOOL_EXECUTION_TIMEOUT result (default: none). */
  readonly timeoutMs?: number;
  /** Passed to every worker thread; exceeding them ends that call with TOOL_EXECUTION_FAILED. */
  readonly resourceLimits?: ResourceLimits;
}

interface ResolvedOptions {
  readonly minThreads: number;
  readonly maxThreads: number;
  readonly idleTimeout: number;
  readonly abortGraceMs: number;
  readonly timeoutMs: number | undefined;
  readonly resourceLimits: ResourceLimits | undefined;
}

/** A call waiting for a free slot; `cancelled` skips it when its turn comes. */
interface QueuedCall {
  readonly start: (slot: number) => void;
  cancelled: boolean;
}

const WORKER_ENTRY = new URL("../../workers/tool-worker.js", import.meta.url).href;

/**
 * The tool contract of `executeToolCall`, with `execute` and the serializer running in a
 * Piscina worker pool: the main thread stays responsive, a tool that ignores abort is
 * terminated after `abortGraceMs`, and every fault is a per-call result. Create it with
 * `WorkerToolExecutor.create`; `close()` it when done (idle, it never keeps a process alive).
 */
export class WorkerToolExecutor implements ToolExecutor {
  readonly #registry: ToolRegistry;
  readonly #pipeline: Pipeline;
  readonly #moduleOf: Map<string, number>;
  readonly #pool: Piscina;
  readonly #control: PoolControl;
  readonly #options: ResolvedOptions;
  // The main thread's own queue: at most maxThreads calls are handed to Piscina, so a call
  // still waiting here can be cancelled before any worker sees it.
  readonly #queue: QueuedCall[] = [];
  #queueHead = 0;
  /** Slots on the task board not carrying a call: maxThreads of them when idle. */
  readonly #freeSlots: number[];
  readonly #board: TaskBoard;
  #nextTaskId = 0;
  #closing: Promise<void> | undefined;
  readonly #idleWaiters: (() => void)[] = [];

  private constructor({ registry, urls, moduleOf }: LoadedToolModules, options: ResolvedOptions) {
    this.#registry = registry;
    // The tools are never exposed: `registry` hands out copies.
    this.#pipeline = { tools: registeredTools(registry), run: (request) => this.#dispatch(request) };
    this.#moduleOf = moduleOf;
    this.#options = options;
    const controlChannel = `toolgate-control-${randomUUID()}`;
    this.#control = new PoolControl(controlChannel);
    this.#board = TaskBoard.create(options.maxThreads);
    this.#freeSlots = Array.from({ length: options.maxThreads }, (_, slot) => options.maxThreads - 1 - slot);
    this.#pool = new Piscina({
      filename: WORKER_ENTRY,
      minThreads: options.minThreads,
      maxThreads: options.maxThreads,
      idleTimeout: options.idleTimeout,
      concurrentTasksPerWorker: 1,
      workerData: { controlChannel, modules: urls, board: this.#board.buffer } satisfies ToolWorkerData,
      ...(options.resourceLimits === undefined ? {} : { resourceLimits: options.resourceLimits }),
    });
  }

  /**
   * Loads and checks every tool module on the main thread (a module that fails to load or
   * defines a bad tool rejects here, with a ToolContractError), then starts the pool.
   */
  static async create(options: WorkerToolExecutorOptions): Promise<WorkerToolExecutor> {
    const resolved = resolveOptions(options);
    const executor = new WorkerToolExecutor(await loadToolModules(options.modules), resolved);
    await executor.#warmUp();
    return executor;
  }

  /** One warm-up per initial thread: each subscribes to the control channel before any call. */
  async #warmUp(): Promise<void> {
    const warmups: Promise<unknown>[] = [];
    for (let index = 0; index < this.#options.minThreads; index += 1) {
      warmups.push(this.#pool.run({ kind: "warmup" } satisfies WorkerWarmup));
    }
    try {
      await Promise.all(warmups);
    } catch (error) {
      this.#control.close();
      await this.#pool.destroy();
      throw new ToolContractError(COURSE_TOOL_INVALID_ARGUMENT, `the worker pool could not start: ${describeFailure(error).text}`, {
        cause: error,
      });
    }
  }

  /** A copy of the registry built from the modules (registering into it adds nothing to the pool). */
  get registry(): ToolRegistry {
    return this.#registry.snapshot();
  }

  /** The pool's live threads (for diagnostics and tests). */
  get threadCount(): number {
    return this.#pool.threads.length;
  }

  /**
   * The in-process contract, with `execute` and the serializer in a worker thread. Resolves
   * to a frozen linked result (including TOOL_EXECUTION_TIMEOUT and per-call worker faults);
   * rejects with a ToolContractError, `signal.reason`, or a NonRecoverableToolError that
   * the tool threw in the worker.
   */
  async executeToolCall(call: unknown, signal: AbortSignal, options?: CallOptions): Promise<CourseToolResultMessage> {
    this.#assertOpen();
    return executeCall(this.#pipeline, call, signal, options);
  }

  /** Many calls, results in call order (the batch semantics of `ToolExecutor.executeBatch`). */
  async executeBatch(calls: readonly unknown[], signal: AbortSignal, options?: BatchOptions): Promise<CourseToolResultMessage[]> {
    this.#assertOpen();
    return executeCalls(this.#pipeline, calls, signal, options);
  }

  /**
   * Stops accepting calls, lets the accepted ones finish (queued ones included), then
   * terminates the threads and closes the control channel. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#drained().then(async () => {
      this.#control.close();
      await this.#pool.destroy();
    });
    return this.#closing;
  }

  #assertOpen(): void {
    if (this.#closing !== undefined) throw new ToolContractError(COURSE_TOOL_EXECUTOR_CLOSED, "the WorkerToolExecutor is closed");
  }

  /** Runs a validated call in the pool; settles once, whichever comes first. */
  #dispatch(prepared: RunRequest): Promise<ToolOutcome> {
    const signal = prepared.signal;
    return new NativePromise<ToolOutcome>((resolve, reject) => {
      let settled = false;
      let timer: NodeJS.Timeout | undefined;
      let stopTask: ((reason: StopReason) => void) | undefined;
      const entry: QueuedCall = { start: (slot) => start(slot), cancelled: false };

      let unwatch: (() => void) | undefined;
      const finish = (): boolean => {
        if (settled) return false;
        settled = true;
        unwatch?.();
        if (timer !== undefined) clearTimeout(timer);
        return true;
      };
      const onAbort = (): void => {
        if (!finish()) return;
        entry.cancelled = true; // still queued: no worker will ever see it
        stopTask?.("abort");
        reject(abortReason(signal));
      };
      const onTimeout = (): void => {
        if (!finish()) return;
        stopTask?.("timeout");
        resolve(failure(COURSE_TOOL_EXECUTION_TIMEOUT, `the tool did not finish within ${this.#options.timeoutMs} ms`));
      };
      const start = (slot: number): void => {
        this.#nextTaskId += 1;
        const taskId = this.#nextTaskId;
        this.#board.reset(slot);
        let graceTimer: NodeJS.Timeout | undefined;
        stopTask = (reason) => {
          this.#board.stop(slot); // a worker that has not taken the task yet will not run it
          this.#control.stop(this.#threadIds(), taskId, reason); // one that has sees its signal abort
          graceTimer = setTimeout(() => this.#terminate(slot), this.#options.abortGraceMs);
          graceTimer.unref();
        };
        if (this.#options.timeoutMs !== undefined) {
          timer = setTimeout(onTimeout, this.#options.timeoutMs);
          timer.unref();
        }
        const task: WorkerTask = {
          kind: "run",
          taskId,
          slot,
          module: MapPrototypeGet(this.#moduleOf, prepared.call.name) as number,
          toolName: prepared.call.name,
          toolCallId: prepared.call.id,
          args: prepared.args,
        };
        runInPool(this.#pool, task)
          .then(
            (outcome) => {
              if (finish()) settleWith(outcome, resolve, reject);
            },
            (error: unknown) => {
              if (finish()) resolve(poolFailure(error));
            },
          )
          .finally(() => {
            // The slot is free only now, even if the caller moved on at abort or timeout.
            if (graceTimer !== undefined) clearTimeout(graceTimer);
            this.#freeSlots.push(slot);
            this.#pump();
          });
      };

      unwatch = watchAbort(signal, onAbort); // prepareToolCall has checked it is not aborted yet
      this.#queue.push(entry);
      this.#pump();
    });
  }

  /** Hands queued calls to Piscina while slots are free. */
  #pump(): void {
    while (this.#freeSlots.length > 0 && this.#queueHead < this.#queue.length) {
      const entry = this.#queue[this.#queueHead] as QueuedCall;
      this.#queueHead += 1;
      if (!entry.cancelled) entry.start(this.#freeSlots.pop() as number);
    }
    if (this.#queueHead === this.#queue.length) {
      this.#queue.length = 0;
      this.#queueHead = 0;
      if (this.#isIdle()) for (const wake of this.#idleWaiters.splice(0)) wake();
    }
  }

  #isIdle(): boolean {
    return this.#freeSlots.length === this.#board.slots && this.#queueHead === this.#queue.length;
  }

  #drained(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /**
   * The grace period is over and the slot's task still holds its slot: terminate the thread
   * running it. Piscina sees the exit, fails that task (already settled for the caller) and
   * starts a replacement. A task no thread has taken yet needs nothing: its stop mark keeps
   * any worker from running it.
   */
  #terminate(slot: number): void {
    const threadId = this.#board.threadOf(slot);
    if (threadId === 0) return;
    for (const thread of this.#pool.threads) {
      if (thread.threadId === threadId) void thread.terminate();
    }
  }

  #threadIds(): number[] {
    return this.#pool.threads.map((thread) => thread.threadId);
  }
}

/** `piscina.run`, with a synchronous throw (e.g. DataCloneError) turned into a rejection. */
function runInPool(pool: Piscina, task: WorkerTask): Promise<WorkerOutcome> {
  try {
    return pool.run(task) as Promise<WorkerOutcome>;
  } catch (error) {
    return Promise.reject(error);
  }
}

function settleWith(outcome: WorkerOutcome, resolve: (outcome: ToolOutcome) => void, reject: (reason: unknown) => void): void {
  switch (outcome.kind) {
    case "result":
      resolve({ content: outcome.content, isError: outcome.isError });
      return;
    case "fatal":
      // A worker has its own realm: re-create the error here so it is genuine on this thread.
      reject(new NonRecoverableToolError(outcome.message));
      return;
    default:
      // "aborted": the worker saw its signal abort though this call neither aborted nor timed out.
      resolve(failure(COURSE_TOOL_EXECUTION_FAILED, "the tool was stopped in the worker"));
      return;
  }
}

/** A task the pool itself failed: uncloneable arguments, or a thread that died mid-call. */
function poolFailure(error: unknown): ToolOutcome {
  const description = describeFailure(error).text;
  if (description.startsWith("DataCloneError")) {
    return failure(COURSE_TOOL_VALIDATION_FAILED, `the validated arguments cannot be sent to a worker thread (${description})`);
  }
  return failure(COURSE_TOOL_EXECUTION_FAILED, `the worker thread running the tool failed: ${description}`);
}

function failure(code: Parameters<typeof errorContent>[0], text: string): ToolOutcome {
  return ObjectFreeze({ content: errorContent(code, { text, cut: false }), isError: true });
}

function resolveOptions(options: WorkerToolExecutorOptions): ResolvedOptions {
  if (typeof options !== "object" || options === null) invalidOption("options must be an object");
  const modules: unknown = options.modules;
  if (!Array.isArray(modules) || modules.length === 0)
    invalidOption("options.modules must be a non-empty array of tool module URLs or paths");
  const maxThreads = integerOption("maxThreads", options.maxThreads, 1, availableParallelism());
  const minThreads = integerOption("minThreads", options.minThreads, 0, Math.min(1, maxThreads));
  if (minThreads > maxThreads) invalidOption(`options.minThreads (${minThreads}) must not exceed options.maxThreads (${maxThreads})`);
  const resourceLimits: unknown = options.resourceLimits;
  if (resourceLimits !== undefined && (typeof resourceLimits !== "object" || resourceLimits === null)) {
    invalidOption("options.resourceLimits must be an object");
  }
  const timeoutMs = options.timeoutMs === undefined ? undefined : integerOption("timeoutMs", options.timeoutMs, 1, 0);
  return {
    minThreads,
    maxThreads,
    idleTimeout: integerOption("idleTimeout", options.idleTimeout, 0, 30_000),
    abortGraceMs: integerOption("abortGraceMs", options.abortGraceMs, 0, 1000),
    timeoutMs,
    resourceLimits: resourceLimits as ResourceLimits | undefined,
  };
}

function integerOption(name: string, value: unknown, minimum: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < minimum) {
    invalidOption(`options.${name} must be an integer >= ${minimum} (got ${typeof value === "number" ? value : typeof value})`);
  }
  return value;
}

function invalidOption(message: string): never {
  throw new ToolContractError(COURSE_TOOL_INVALID_ARGUMENT, message);
}
