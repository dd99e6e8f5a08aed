// WorkerToolExecutor: the main thread snapshots, validates and owns the registry (the shared
// pipeline); a Piscina pool runs `execute` and the serializer (dispatch.ts, worker-pool.ts).
// This file is the lifecycle: create, the two ways in, and close.
// docs/contract.md: rules 1–13 through the shared pipeline; rule W4 — re-link and freeze on the main thread, rule W6 — batches.
import { ContractErrorCode } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { ObjectFreeze, PromisePrototypeThen, PromiseReject } from "../contract/primordials.js";
import type { ToolResultMessage } from "../contract/results.js";
import { registeredTools, type ToolRegistry } from "../contract/tools.js";
import { watchPoolThreads } from "../executor/metrics.js";
import { executeCall, executeCalls, InFlight, type Pipeline, type PipelineSettings, readExecutorOptions } from "../executor/pipeline.js";
import type { BatchOptions, CallOptions, ToolExecutor } from "../executor/tool-executor.js";
import { recordArgumentBudgets } from "../executor/tool-executor.js";
import { appRefused, callAppRefusal } from "./app-refusal.js";
import { Dispatcher } from "./dispatch.js";
import { type ResolvedOptions, resolveOptions, WORKER_OPTION_KEYS, type WorkerToolExecutorOptions } from "./options.js";
import { TaskBoard } from "./task-board.js";
import { type LoadedToolModules, loadToolModules } from "./tool-modules.js";
import { WorkerPool } from "./worker-pool.js";

export type { WorkerToolExecutorOptions } from "./options.js";

/** Set by the class (its pool is private). */
let bootFailuresOf: (executor: WorkerToolExecutor) => number;

/**
 * The tool contract of `executeToolCall`, with `execute` and the serializer running in a
 * Piscina worker pool: the main thread stays responsive, a tool that ignores abort is
 * terminated after `abortGraceMs`, and every fault is a per-call result. Create it with
 * `WorkerToolExecutor.create`; `close()` it when done (idle, it never keeps a process alive).
 */
export class WorkerToolExecutor implements ToolExecutor {
  readonly #registry: ToolRegistry;
  readonly #pipeline: Pipeline;
  readonly #pool: WorkerPool;
  readonly #dispatcher: Dispatcher;
  /** Calls and batches accepted and not yet settled: close() waits for every one. */
  readonly #accepted = new InFlight();
  #closing: Promise<void> | undefined;
  /** Takes the pool out of the thread gauges (metrics.ts), at close. */
  readonly #unwatchThreads: () => void;

  static {
    bootFailuresOf = (executor) => executor.#pool.bootFailures;
  }

  private constructor(modules: LoadedToolModules, pool: WorkerPool, dispatcher: Dispatcher, settings: PipelineSettings) {
    this.#registry = modules.registry;
    this.#pool = pool;
    this.#unwatchThreads = watchPoolThreads({ threads: () => pool.threads.length, busyThreads: () => pool.busyThreads() });
    this.#dispatcher = dispatcher;
    // The tools are never exposed: `registry` hands out copies.
    this.#pipeline = { tools: registeredTools(modules.registry), run: (request) => dispatcher.run(request), settings };
    recordArgumentBudgets(this, settings.argumentBudgets);
  }

  /**
   * Checks the options (`timeoutMs` and `hooks` as every executor's; an `app` is refused: see
   * `setup()`), loads and checks every tool module on the main thread (a module that fails to
   * load or defines a bad tool rejects here, with a ToolContractError), then starts the pool
   * and waits until `minThreads` threads have loaded the modules (and run their `setup()`) too:
   * a module that fails or hangs only in a worker rejects with INVALID_TOOL_MODULE, a pool
   * that cannot start its threads with WORKER_POOL_START_FAILED.
   */
  static async create(options: WorkerToolExecutorOptions): Promise<WorkerToolExecutor> {
    const resolved: ResolvedOptions = resolveOptions(options);
    const settings = readExecutorOptions(options, WORKER_OPTION_KEYS);
    if (settings.app !== undefined) throw appRefused();
    // A Redis store is connected and its eviction policy checked now, not at the first durable call.
    if (settings.durable !== undefined) await settings.durable.ready();
    const modules = await loadToolModules(resolved.modules);
    // Three times maxThreads: a task whose call was answered (abort, timeout) may still run while
    // the next call starts, and a call may wait on a thread behind its running one (dispatch.ts).
    const board = TaskBoard.create(resolved.maxThreads * 3);
    const pool = new WorkerPool(
      ObjectFreeze({
        options: resolved,
        modules,
        board,
        outputBudgets: settings.outputBudgets,
        attachmentBudgets: settings.attachmentBudgets,
      }),
    );
    try {
      await pool.started;
    } catch (error) {
      await pool.destroy();
      throw error;
    }
    return new WorkerToolExecutor(modules, pool, new Dispatcher(pool, board, resolved, modules.moduleOf), settings);
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
   * rejects with a ToolContractError (INVALID_ARGUMENT for an `options.app`, before anything
   * runs: worker tools get theirs from `setup()`), `signal.reason`, or a NonRecoverableToolError
   * that the tool threw in the worker. After close(): rejects with EXECUTOR_CLOSED.
   */
  executeToolCall(call: unknown, signal: AbortSignal, options?: CallOptions): Promise<ToolResultMessage> {
    if (this.#closing !== undefined) return closed();
    const refused = options === undefined ? undefined : callAppRefusal(options);
    if (refused !== undefined) return PromiseReject(refused);
    return this.#accepted.track(executeCall(this.#pipeline, call, signal, options));
  }

  /**
   * Many calls, results in call order (the batch semantics of `ToolExecutor.executeBatch`).
   * A batch accepted before close() runs to the end: its members not yet dispatched still run.
   */
  executeBatch(calls: readonly unknown[], signal: AbortSignal, options?: BatchOptions): Promise<ToolResultMessage[]> {
    if (this.#closing !== undefined) return closed();
    const refused = options === undefined ? undefined : callAppRefusal(options);
    if (refused !== undefined) return PromiseReject(refused);
    return this.#accepted.track(executeCalls(this.#pipeline, calls, signal, options));
  }

  /**
   * Refuses new calls and batches (EXECUTOR_CLOSED), lets every accepted one settle on its own
   * (queued calls and batch members not yet dispatched included), then terminates the threads
   * and closes their ports. Idempotent: every call returns the same promise.
   */
  close(): Promise<void> {
    this.#closing ??= PromisePrototypeThen(this.#accepted.allSettled(), async () => {
      await this.#dispatcher.drained(); // tasks whose callers moved on (abort, timeout) still hold slots
      this.#unwatchThreads();
      await this.#pool.destroy();
    }) as Promise<void>;
    return this.#closing;
  }
}

/** The threads of `executor`'s pool that could not boot (exited, or were ended, before they loaded the tool modules), for a host's metrics. */
export function threadBootFailures(executor: WorkerToolExecutor): number {
  return bootFailuresOf(executor);
}

function closed(): Promise<never> {
  return PromiseReject(new ToolContractError(ContractErrorCode.EXECUTOR_CLOSED, "the WorkerToolExecutor is closed"));
}
