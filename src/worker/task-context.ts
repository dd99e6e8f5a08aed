// The worker side of one task: the signal its tool sees, its record in the async context
// (so a fault or a message can be traced to the task that scheduled it, even after that task
// finished), and the worker → main per-task messages.
// docs/contract.md: rule W2 — abort relay, rule W5 — faults are results (a fault traced to its task).
import { AsyncLocalStorage } from "node:async_hooks";
import type { ToolApp } from "../contract/app.js";
import {
  type AbortControllerInstance,
  AbortControllerPrototypeAbort,
  AbortControllerPrototypeGetSignal,
  NativeAbortController,
  NativeDOMException,
  ObjectFreeze,
} from "../contract/primordials.js";
import type { ToolContext, ToolProgressReport } from "../contract/tools.js";
import { contextWithSignalFrom, signalSourceOf } from "../executor/context-signal.js";
import { discardProgress, openProgressChannel, type ProgressChannel } from "../executor/progress.js";
import {
  type StopReason,
  TASK_ARGS,
  TASK_ATTEMPT,
  TASK_ID,
  TASK_IDEMPOTENCY_KEY,
  TASK_PROGRESS,
  TASK_TOOL_CALL_ID,
  TASK_TOOL_NAME,
  type WorkerTask,
} from "./protocol.js";
import type { WorkerPort } from "./thread-port.js";

/** A task this thread took, from its start until its outcome went back to the main thread. */
export class RunningTask {
  /** True once the outcome is decided: nothing is sent for the task after that. */
  settled = false;
  /** Set while an asynchronous tool runs: ends the task with a fault traced to it. */
  fault: ((error: unknown) => void) | undefined;
  /** True once the main thread aborted the task or its time ran out. */
  aborted = false;
  /**
   * The tool's context. Its `signal` is an own getter: a genuine AbortController (and the
   * signal it makes at once) costs microseconds to make (Node 20), and a synchronous tool that
   * never reads it has nothing to abort (an abort arrives over the thread's port, which is read
   * only between tasks' synchronous steps), so both are made when something reads the signal
   * first (awaiting an asynchronous tool does) or when the task is aborted.
   */
  readonly context: ToolContext;
  #controller: AbortControllerInstance | undefined;
  #signal: AbortSignal | undefined;
  /** Opened at the tool's first report when the caller asked for progress; closed when the task settles. */
  #progress: ProgressChannel | undefined;

  /** The tool it runs and the validated arguments it runs with (read by the step runInTask runs). */
  readonly tool: unknown;
  readonly args: unknown;
  readonly taskId: number;
  readonly #toolName: string;

  /**
   * `work`: the main thread's task (its id, call id, tool name, arguments, and whether the
   * caller has an `onProgress`: the tool's reports are then throttled here and sent over the
   * thread's port, otherwise checked and dropped). `app`: what the tool's module's `setup()`
   * gave in this thread (absent from the context when undefined, as in-process).
   */
  constructor(work: WorkerTask, tool: unknown, app: unknown) {
    const toolCallId = work[TASK_TOOL_CALL_ID];
    this.taskId = work[TASK_ID];
    this.#toolName = work[TASK_TOOL_NAME];
    this.tool = tool;
    this.args = work[TASK_ARGS];

    // The same own properties, in the same order, as an accessor literal gave: signal, toolCallId, reportProgress, app.
    const context = contextWithSignalFrom(this);
    context.toolCallId = toolCallId;
    // The channel opens at the first report: opening it reads the signal, which would make
    // an AbortController (microseconds) for every task whose caller listens, reported or not.
    context.reportProgress = work[TASK_PROGRESS] ? ObjectFreeze((report: ToolProgressReport) => this.#report(report)) : discardProgress;
    if (app !== undefined) context.app = app as ToolApp;
    const idempotencyKey = work[TASK_IDEMPOTENCY_KEY];
    if (idempotencyKey !== undefined) {
      // A durable call's (docs/durable.md): the main thread made both.
      context.idempotencyKey = idempotencyKey;
      context.attempt = work[TASK_ATTEMPT];
    }
    this.context = ObjectFreeze(context) as unknown as ToolContext;
  }

  #report(report: ToolProgressReport): void {
    if (this.settled) return; // as a closed channel: nothing after the outcome
    this.#progress ??= openProgressChannel(
      (reading) => sendForTask(this, [reading.progress, reading.total, reading.message]),
      this.context.toolCallId,
      this.#toolName,
      this.signal,
    );
    this.#progress.report(report);
  }

  /** The tool's signal, made on first read. */
  get signal(): AbortSignal {
    if (this.#signal === undefined) this.#signal = AbortControllerPrototypeGetSignal(this.#controllerMade());
    return this.#signal;
  }

  #controllerMade(): AbortControllerInstance {
    this.#controller ??= new NativeAbortController();
    return this.#controller;
  }

  /** The signal if something has read it, else undefined (and then nothing can be listening to it). */
  get signalIfMade(): AbortSignal | undefined {
    return this.#signal;
  }

  /** The outcome is decided: nothing is sent for the task after this. */
  settle(): void {
    this.settled = true;
    this.fault = undefined;
    this.#progress?.close();
  }

  /** Fires the tool's signal with the DOMException a main-thread abort or timeout means. */
  abort(reason: StopReason): void {
    if (this.aborted) return;
    this.aborted = true;
    const error =
      reason === "timeout"
        ? new NativeDOMException("The tool call timed out", "TimeoutError")
        : new NativeDOMException("The tool call was aborted", "AbortError");
    const controller = this.#controllerMade();
    AbortControllerPrototypeAbort(controller, error);
    this.#signal = AbortControllerPrototypeGetSignal(controller);
  }
}

/** The signal of the task a context belongs to, if something has read it (runTool's RunSettings.signalIfMade). */
export function taskSignalIfMade(context: ToolContext): AbortSignal | undefined {
  return (signalSourceOf(context) as RunningTask).signalIfMade;
}

const taskContexts = new AsyncLocalStorage<RunningTask>();

/** Runs `step(task)` with `task` as the async context of everything it schedules. */
export function runInTask<R>(task: RunningTask, step: (task: RunningTask) => R): R {
  return taskContexts.run(task, step, task);
}

/** The task whose code scheduled what is running now (undefined when it cannot be traced). */
export function tracedTask(): RunningTask | undefined {
  return taskContexts.getStore();
}

let mainPort: WorkerPort | undefined;

/** The worker entry hands over its thread port once, as the thread starts. */
export function useThreadPort(port: WorkerPort): void {
  mainPort = port;
}

/**
 * Sends `message` to the main thread for the task whose code is calling (traced through the
 * async context, so a late callback of a finished task cannot speak for the next one). False,
 * and nothing sent, outside a task or once the task settled. The message must be
 * structured-cloneable; the main thread hands it to the task's listener, if any.
 */
export function sendTaskMessage(message: unknown): boolean {
  const task = taskContexts.getStore();
  return task !== undefined && sendForTask(task, message);
}

/** Sends `message` for `task` unless it settled (a progress report, or sendTaskMessage's). */
function sendForTask(task: RunningTask, message: unknown): boolean {
  if (task.settled || mainPort === undefined) return false;
  mainPort.send(task.taskId, message);
  return true;
}
