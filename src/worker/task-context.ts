// The worker side of one task: the signal its tool sees, its record in the async context
// (so a fault or a message can be traced to the task that scheduled it, even after that task
// finished), and the worker → main per-task messages.
import { AsyncLocalStorage } from "node:async_hooks";
import { AbortControllerPrototypeAbort, ObjectFreeze } from "../contract/primordials.js";
import type { RunContext } from "../executor/run-tool.js";
import type { StopReason } from "./protocol.js";
import type { WorkerPort } from "./thread-port.js";

/** A task this thread took, from its start until its outcome went back to the main thread. */
export class RunningTask {
  /** True once the outcome is decided: nothing is sent for the task after that. */
  settled = false;
  /** Set while an asynchronous tool runs: ends the task with a fault traced to it. */
  fault: ((error: unknown) => void) | undefined;
  readonly context: RunContext;
  readonly #controller = new AbortController();

  constructor(
    readonly taskId: number,
    toolCallId: string,
  ) {
    this.context = ObjectFreeze({ signal: this.#controller.signal, toolCallId });
  }

  /** Fires the tool's signal with the DOMException a main-thread abort or timeout means. */
  abort(reason: StopReason): void {
    const error =
      reason === "timeout"
        ? new DOMException("The tool call timed out", "TimeoutError")
        : new DOMException("The tool call was aborted", "AbortError");
    AbortControllerPrototypeAbort(this.#controller, error);
  }
}

const taskContexts = new AsyncLocalStorage<RunningTask>();

/** Runs `step` with `task` as the async context of everything it schedules. */
export function runInTask<A, B, C, R>(task: RunningTask, step: (a: A, b: B, c: C) => R, a: A, b: B, c: C): R {
  return taskContexts.run(task, step, a, b, c);
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
  if (task === undefined || task.settled || mainPort === undefined) return false;
  mainPort.send(task.taskId, message);
  return true;
}
