// Dispatch and kill: one validated call from the executor's queue to a slot, to a thread and
// back, settled exactly once (result, abort, timeout or fault, whichever comes first). At most
// maxThreads calls run at once. A slot is held until Piscina has heard back, even when the
// caller moved on at abort or timeout; such a task no longer counts as a running call, so the
// next call does not wait for its grace period: it goes to the first thread that is free, or
// to a spare Piscina starts at once (the board has 2 × maxThreads slots, the pool as many threads).
import { COURSE_TOOL_EXECUTION_FAILED, COURSE_TOOL_EXECUTION_TIMEOUT, COURSE_TOOL_VALIDATION_FAILED } from "../contract/constants.js";
import { isNonRecoverableToolError } from "../contract/errors.js";
import { describeFailure } from "../contract/failure.js";
import {
  MapPrototypeGet,
  NativePromise,
  PromisePrototypeThen,
  PromiseReject,
  PromiseResolve,
  StructuredClone,
} from "../contract/primordials.js";
import { watchAbort } from "../executor/abort-watch.js";
import type { RunRequest } from "../executor/pipeline.js";
import type { ToolOutcome } from "../executor/run-tool.js";
import { abortReason, isAborted } from "../executor/signal.js";
import { DispatchQueue, type QueueEntry } from "./dispatch-queue.js";
import type { ResolvedOptions } from "./options.js";
import { decodeOutcome, failureOutcome, poolFailureOutcome, type StopReason, type WorkerOutcome } from "./protocol.js";
import type { TaskBoard } from "./task-board.js";
import { type PoolTask, SLOT_TAG, type WorkerPool } from "./worker-pool.js";

/** A call that a retiring thread handed back is tried again, this many times at most. */
const MAX_ATTEMPTS = 3;
/** Task ids live in an Int32 cell of the board. */
const MAX_TASK_ID = 2 ** 31 - 1;

/** One call, from the queue until its slot is free again. */
class PendingCall implements QueueEntry {
  waiting = false;
  /** The caller's promise has settled: whatever comes later only frees the slot. */
  answered = false;
  slot = -1;
  /** Counted among the calls running (from start until answered or its slot is free). */
  counted = false;
  taskId = 0;
  attempts = 0;
  timer: NodeJS.Timeout | undefined;
  grace: NodeJS.Timeout | undefined;
  unwatch: (() => void) | undefined;
  constructor(
    readonly request: RunRequest,
    readonly module: number,
    readonly resolve: (outcome: ToolOutcome) => void,
    readonly reject: (reason: unknown) => void,
  ) {}
}

export class Dispatcher {
  readonly #pool: WorkerPool;
  readonly #board: TaskBoard;
  readonly #options: ResolvedOptions;
  readonly #moduleOf: Map<string, number>;
  readonly #queue = new DispatchQueue<PendingCall>();
  /** Slots not carrying a call (a stack, written by index). */
  readonly #freeSlots: number[] = [];
  #freeCount = 0;
  /** Calls in slots that still count against maxThreads. */
  #running = 0;
  #nextTaskId = 0;
  #idle: (() => void) | undefined;

  constructor(pool: WorkerPool, board: TaskBoard, options: ResolvedOptions, moduleOf: Map<string, number>) {
    this.#pool = pool;
    this.#board = board;
    this.#options = options;
    this.#moduleOf = moduleOf;
    for (let slot = board.slots - 1; slot >= 0; slot -= 1) this.#freeSlots[this.#freeCount++] = slot;
  }

  /** The pipeline's `run`: settles once, with the outcome, the abort reason, or a NonRecoverableToolError. */
  run(request: RunRequest): Promise<ToolOutcome> {
    const unsendable = unsendableArguments(request);
    if (unsendable !== undefined) return PromiseResolve(unsendable);
    // The pipeline checked the signal; a getter run by the clone test may have aborted it since.
    if (isAborted(request.signal)) return PromiseReject(abortReason(request.signal));
    return new NativePromise<ToolOutcome>((resolve, reject) => {
      const call = new PendingCall(request, MapPrototypeGet(this.#moduleOf, request.call.name) as number, resolve, reject);
      call.unwatch = watchAbort(request.signal, () => this.#onAbort(call));
      this.#queue.push(call);
      this.#pump();
    });
  }

  /** Resolves once no call is queued or holds a slot. */
  drained(): Promise<void> {
    if (this.#isIdle()) return PromiseResolve(undefined);
    return new NativePromise<void>((resolve) => {
      const previous = this.#idle;
      this.#idle = () => {
        previous?.();
        resolve();
      };
    });
  }

  /** The per-call time limit: the one place a call's timeout is read. */
  #timeoutOf(_request: RunRequest): number | undefined {
    return this.#options.timeoutMs;
  }

  #pump(): void {
    while (this.#freeCount > 0 && this.#running < this.#options.maxThreads && this.#queue.size > 0) {
      const call = this.#queue.shift() as PendingCall;
      this.#freeCount -= 1;
      this.#start(call, this.#freeSlots[this.#freeCount] as number);
    }
    if (this.#idle !== undefined && this.#isIdle()) {
      const wake = this.#idle;
      this.#idle = undefined;
      wake();
    }
  }

  #isIdle(): boolean {
    return this.#freeCount === this.#board.slots && this.#queue.size === 0;
  }

  #start(call: PendingCall, slot: number): void {
    this.#nextTaskId = this.#nextTaskId === MAX_TASK_ID ? 1 : this.#nextTaskId + 1;
    const taskId = this.#nextTaskId;
    call.slot = slot;
    call.taskId = taskId;
    call.attempts += 1;
    call.counted = true;
    this.#running += 1;
    this.#board.assign(slot, taskId);
    const timeoutMs = this.#timeoutOf(call.request);
    if (timeoutMs !== undefined && call.timer === undefined) {
      call.timer = setTimeout(() => this.#onTimeout(call), timeoutMs);
      call.timer.unref();
    }
    const request = call.request;
    const task: PoolTask = {
      kind: "run",
      taskId,
      slot,
      module: call.module,
      toolName: request.call.name,
      toolCallId: request.call.id,
      args: request.args,
      [SLOT_TAG]: this.#pool.slotTag(slot),
    };
    void PromisePrototypeThen(
      this.#pool.run(task),
      (outcome) => this.#onOutcome(call, slot, outcome as WorkerOutcome),
      (error: unknown) => this.#onPoolFailure(call, slot, error),
    );
  }

  #onOutcome(call: PendingCall, slot: number, outcome: WorkerOutcome): void {
    const threadId = this.#pool.threadOf(slot);
    this.#freeSlot(call, slot);
    if (outcome.retire) this.#pool.retire(threadId);
    if (outcome.kind === "refused" && !call.answered && call.attempts < MAX_ATTEMPTS) {
      this.#queue.unshift(call); // the thread did not start it: run it on another
    } else if (!call.answered) {
      const decoded = outcome.kind === "refused" ? refusedTooOften() : decodeOutcome(outcome);
      if (isNonRecoverableToolError(decoded)) this.#answer(call).reject(decoded);
      else this.#answer(call).resolve(decoded as ToolOutcome);
    }
    this.#pump();
  }

  /** Piscina failed the task: the thread died under it (exit, out of memory), or we ended it. */
  #onPoolFailure(call: PendingCall, slot: number, error: unknown): void {
    const reason = this.#pool.endReasonOf(this.#pool.threadOf(slot));
    this.#freeSlot(call, slot);
    if (!call.answered) {
      this.#answer(call).resolve(reason === undefined ? poolFailureOutcome(error) : failureOutcome(COURSE_TOOL_EXECUTION_FAILED, reason));
    }
    this.#pump();
  }

  #onAbort(call: PendingCall): void {
    if (call.answered) return;
    this.#answer(call).reject(abortReason(call.request.signal));
    if (call.waiting)
      this.#queue.cancel(call); // no thread will ever see it
    else this.#stop(call, "abort");
    this.#pump();
  }

  #onTimeout(call: PendingCall): void {
    if (call.answered) return;
    const timeoutMs = this.#timeoutOf(call.request);
    this.#answer(call).resolve(failureOutcome(COURSE_TOOL_EXECUTION_TIMEOUT, `the tool did not finish within ${timeoutMs} ms`));
    if (call.waiting) this.#queue.cancel(call);
    else this.#stop(call, "timeout");
    this.#pump();
  }

  /**
   * The caller has its answer; the task may still be in the pool. A task no thread has
   * started never will be; a running one sees its signal abort, and if it is still running
   * when the grace period is over, its thread is terminated (bound to this very task).
   */
  #stop(call: PendingCall, reason: StopReason): void {
    const { slot, taskId } = call;
    this.#uncount(call);
    if (slot < 0 || this.#board.stop(slot)) return;
    this.#pool.abort(slot, taskId, reason);
    this.#pool.prewarm(); // the next call should find a warm thread, not wait for this one
    call.grace = setTimeout(() => {
      call.grace = undefined;
      if (this.#board.condemn(slot, taskId) !== 0) this.#pool.kill(slot);
    }, this.#options.abortGraceMs);
    call.grace.unref();
  }

  /** Marks the call answered and drops its timers, abort subscription and task messages; returns it. */
  #answer(call: PendingCall): PendingCall {
    call.answered = true;
    this.#pool.messages.forget(call.taskId); // a task still running after its call settled speaks to no one
    call.unwatch?.();
    call.unwatch = undefined;
    if (call.timer !== undefined) clearTimeout(call.timer);
    call.timer = undefined;
    return call;
  }

  /** The call no longer counts against maxThreads (its slot may still be held). */
  #uncount(call: PendingCall): void {
    if (!call.counted) return;
    call.counted = false;
    this.#running -= 1;
  }

  #freeSlot(call: PendingCall, slot: number): void {
    this.#uncount(call);
    if (call.grace !== undefined) clearTimeout(call.grace);
    call.grace = undefined;
    call.slot = -1;
    this.#pool.messages.forget(call.taskId);
    this.#freeSlots[this.#freeCount++] = slot;
  }
}

function refusedTooOften(): ToolOutcome {
  return failureOutcome(COURSE_TOOL_EXECUTION_FAILED, "no worker thread could take the call (every one was being replaced)");
}

/**
 * Arguments go to the worker by structured clone. The validator's value is usually the call's
 * own JSON snapshot, which always clones; anything else is tried here first, so a function, a
 * symbol or a throwing getter in it is the validator's failure, not a worker's.
 */
function unsendableArguments(request: RunRequest): ToolOutcome | undefined {
  if (request.args === request.call.arguments) return undefined;
  try {
    StructuredClone(request.args);
    return undefined;
  } catch (error) {
    return failureOutcome(
      COURSE_TOOL_VALIDATION_FAILED,
      `the validated arguments cannot be sent to a worker thread (${describeFailure(error).text})`,
    );
  }
}
