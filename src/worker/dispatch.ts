// Dispatch and kill: one validated call from the executor's queue to a slot, to a thread and
// back, settled exactly once (result, abort, timeout or fault, whichever comes first). At most
// maxThreads calls run at once. A slot is held until Piscina has heard back, even when the
// caller moved on at abort or timeout; such a task no longer counts as a running call, so the
// next call does not wait for its grace period: it goes to the first thread that is free, or
// to a spare Piscina starts at once (the pool has 2 × maxThreads threads).
//
// When every running call has its thread, a waiting call may wait on a thread, behind a task
// that began less than QUEUE_BEHIND_MS ago: the thread starts it the moment the reply before
// it has left (task-turns.ts), without a round trip through this thread. Until its thread
// claims it, it is taken back (the board's QUEUED → STOPPED) and queued here again when the
// call before it is answered while it still runs (abort, timeout: it may be killed), when its
// thread ends, or when another thread is free while the one it waits behind has run longer.
// Its timeout counts from when it runs, as every call's does. (The board has 3 × maxThreads slots.)
// docs/contract.md: rule W2 — abort relay, rule W3 — timeout and termination, rule W5 — faults are results.
import { matchesSnapshot } from "../contract/call.js";
import { ToolErrorCode } from "../contract/constants.js";
import { isNonRecoverableToolError } from "../contract/errors.js";
import {
  ArrayIsArray,
  ClearTimeout,
  type DOMExceptionInstance,
  DOMExceptionPrototypeGetName,
  MapPrototypeGet,
  NativePromise,
  ObjectFreeze,
  PerformanceNow,
  PromisePrototypeThen,
  PromiseReject,
  PromiseResolve,
  SetTimeout,
  StructuredClone,
  TimeoutPrototypeUnref,
  type TimerHandle,
} from "../contract/primordials.js";
import { describeFailure } from "../contract/untrusted.js";
import type { RunFacts } from "../executor/hooks.js";
import { ignoreFacts, type RunRequest } from "../executor/pipeline.js";
import { openProgressChannel, type ProgressChannel } from "../executor/progress.js";
import type { ToolOutcome } from "../executor/run-tool.js";
import { timeoutOutcome } from "../executor/run-tool.js";
import { AbortWatch, abortReason, isAborted, startWatching, stopWatching } from "../executor/signal.js";
import { DispatchQueue, type QueueEntry } from "./dispatch-queue.js";
import type { ResolvedOptions } from "./options.js";
import { decodeOutcome, failureOutcome, poolFailureOutcome, type StopReason, type WorkerReply, type WorkerTask } from "./protocol.js";
import type { TaskBoard } from "./task-board.js";
import { WaitingLines } from "./waiting-lines.js";
import { QUEUE_BEHIND_MS, type WorkerPool } from "./worker-pool.js";

/** A call that a retiring thread handed back is tried again, this many times at most. */
const MAX_ATTEMPTS = 3;
/** Task ids live in an Int32 cell of the board. */
const MAX_TASK_ID = 2 ** 31 - 1;
const THREAD_KILLED: RunFacts = ObjectFreeze({ threadKilled: true });
/** One call, from the queue until its slot is free again; watching its signal until answered. */
class PendingCall extends AbortWatch implements QueueEntry {
  waiting = false;
  /** The caller's promise has settled: whatever comes later only frees the slot. */
  answered = false;
  slot = -1;
  /** Counted among the calls running (from start until answered or its slot is free). */
  counted = false;
  taskId = 0;
  attempts = 0;
  timer: TimerHandle | undefined;
  grace: TimerHandle | undefined;
  /** The caller's onProgress, throttled again here: open until the call is answered. */
  progress: ProgressChannel | undefined;
  /** When it was queued, for its queue wait; 0 when nothing hears the facts (no clock read). */
  readonly queuedAt: number;
  constructor(
    readonly request: RunRequest,
    readonly module: number,
    readonly resolve: (outcome: ToolOutcome) => void,
    readonly reject: (reason: unknown) => void,
    readonly handleAbort: (call: PendingCall) => void,
  ) {
    super();
    this.queuedAt = request.record === ignoreFacts ? 0 : PerformanceNow();
  }

  onAbort(): void {
    this.handleAbort(this);
  }
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
  /** The tasks waiting on each thread behind its running one. */
  readonly #lines = new WaitingLines();
  /** The call of each slot's task (a task whose call moved on is no longer its call's: `call.slot` tells). */
  readonly #slotCalls: (PendingCall | undefined)[] = [];
  #nextTaskId = 0;
  #idle: (() => void) | undefined;
  readonly #aborted = (call: PendingCall): void => this.#onAbort(call);
  /** Each slot's handlers of its task's settlement, made once (not two closures per call). */
  readonly #onReply: ((reply: unknown) => void)[] = [];
  readonly #onFailure: ((error: unknown) => void)[] = [];

  constructor(pool: WorkerPool, board: TaskBoard, options: ResolvedOptions, moduleOf: Map<string, number>) {
    this.#pool = pool;
    this.#board = board;
    this.#options = options;
    this.#moduleOf = moduleOf;
    for (let slot = board.slots - 1; slot >= 0; slot -= 1) {
      this.#freeSlots[this.#freeCount++] = slot;
      // The slot is freed only by its task's settlement: its call is still this.#slotCalls[slot] then.
      this.#onReply[slot] = (reply) => this.#onOutcome(this.#slotCalls[slot] as PendingCall, slot, reply as WorkerReply);
      this.#onFailure[slot] = (error) => this.#onPoolFailure(this.#slotCalls[slot] as PendingCall, slot, error);
    }
  }

  /** The pipeline's `run`: settles once, with the outcome, the abort reason, or a NonRecoverableToolError. */
  run(request: RunRequest): Promise<ToolOutcome> {
    const unsendable = unsendableArguments(request);
    if (unsendable !== undefined) return PromiseResolve(unsendable);
    // The pipeline checked the signal; a getter run by the clone test may have aborted it since.
    if (isAborted(request.signal)) return PromiseReject(abortReason(request.signal));
    return new NativePromise<ToolOutcome>((resolve, reject) => {
      const call = new PendingCall(request, MapPrototypeGet(this.#moduleOf, request.call.name) as number, resolve, reject, this.#aborted);
      startWatching(request.signal, call);
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

  #pump(): void {
    while (this.#freeCount > 0 && this.#queue.size > 0) {
      if (this.#running >= this.#options.maxThreads) {
        // Every running call has its thread: the next waits behind a task that began just now, if any did.
        const threadId = this.#pool.threadForBehind();
        if (threadId === 0) break;
        this.#freeCount -= 1;
        this.#start(this.#queue.shift() as PendingCall, this.#freeSlots[this.#freeCount] as number, threadId);
        continue;
      }
      // Threads cannot boot, and the pool waits before it starts another: calls run only on the
      // threads that did load (Piscina would start a thread for any more); with none, no thread is coming.
      const refusal = this.#pool.bootRefusal();
      if (refusal !== undefined) {
        const usable = this.#pool.usableThreads();
        if (usable === 0) {
          this.#answer(this.#queue.shift() as PendingCall).resolve(failureOutcome(ToolErrorCode.EXECUTION_FAILED, refusal));
          continue;
        }
        if (this.#running >= usable) break; // the next call that ends makes room
      }
      const call = this.#queue.shift() as PendingCall;
      this.#freeCount -= 1;
      this.#start(call, this.#freeSlots[this.#freeCount] as number, 0);
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

  /** Hands the call to Piscina in `slot`: for the first free thread, or behind `behindThread`'s running task. */
  #start(call: PendingCall, slot: number, behindThread: number): void {
    this.#nextTaskId = this.#nextTaskId === MAX_TASK_ID ? 1 : this.#nextTaskId + 1;
    const taskId = this.#nextTaskId;
    call.slot = slot;
    call.taskId = taskId;
    call.attempts += 1;
    this.#slotCalls[slot] = call;
    this.#board.assign(slot, taskId);
    const request = call.request;
    const onProgress = request.onProgress;
    if (onProgress !== undefined) {
      call.progress ??= openProgressChannel(onProgress, request.call.id, request.call.name, request.signal);
      const channel = call.progress;
      this.#pool.messages.listen(taskId, (message) => relayProgress(channel, message));
    }
    if (behindThread === 0) this.#begin(call);
    else this.#lines.add(behindThread, slot);
    const durable = request.durable;
    const task: WorkerTask =
      durable === undefined
        ? [taskId, slot, call.module, request.call.name, request.call.id, request.args, onProgress !== undefined]
        : [
            taskId,
            slot,
            call.module,
            request.call.name,
            request.call.id,
            request.args,
            onProgress !== undefined,
            durable.idempotencyKey,
            durable.attempt,
          ];
    const replied = behindThread === 0 ? this.#pool.run(task) : this.#pool.runBehind(task, behindThread);
    void PromisePrototypeThen(replied, this.#onReply[slot], this.#onFailure[slot]);
  }

  /** The call runs (or is about to): it counts against maxThreads, and its timeout starts. */
  #begin(call: PendingCall): void {
    call.counted = true;
    this.#running += 1;
    const request = call.request;
    if (request.record !== ignoreFacts) request.record({ queueWaitMs: PerformanceNow() - call.queuedAt });
    // The pipeline's limit (call, else tool, else executor); it counts from here, not in the queue.
    const timeoutMs = request.timeoutMs;
    if (timeoutMs !== undefined && call.timer === undefined) {
      call.timer = SetTimeout(() => this.#onTimeout(call), timeoutMs);
      TimeoutPrototypeUnref(call.timer);
    }
  }

  /**
   * Piscina has heard back from the slot's thread (or failed the task). When it was the
   * thread's running task, the next in the thread's line runs now (it counts, its timeout
   * starts), unless the thread ended: then every call in the line is queued here again.
   * Returns the thread.
   */
  #taskSettled(slot: number, threadEnded: boolean): number {
    const threadId = this.#pool.threadOf(slot);
    this.#pool.settled(slot);
    if (threadId === 0 || this.#lines.line(threadId) === undefined || this.#lines.remove(threadId, slot)) return threadId;
    if (threadEnded) {
      this.#takeBack(threadId);
      return threadId;
    }
    const next = this.#lines.shift(threadId);
    const call = this.#slotCalls[next] as PendingCall;
    if (call.slot === next && !call.answered) this.#begin(call);
    return threadId;
  }

  /**
   * The calls waiting behind `threadId`'s running task are queued here again, in their order,
   * except one the thread has already started. Their tasks stay in the line until the thread
   * skips them (STOPPED) or ends; their slots are freed then (`#settledAfterMove`).
   */
  #takeBack(threadId: number): void {
    const line = this.#lines.line(threadId);
    if (line === undefined) return;
    for (let index = line.length - 1; index >= 0; index -= 1) {
      const slot = line[index] as number;
      const call = this.#slotCalls[slot] as PendingCall;
      if (call.slot !== slot || call.answered || !this.#board.stop(slot)) continue;
      if (call.progress !== undefined) this.#pool.messages.forget(call.taskId);
      this.#uncount(call);
      call.slot = -1;
      call.attempts -= 1; // not a thread's refusal: it never reached one
      this.#queue.unshift(call);
    }
  }

  /** Calls waiting behind a task that has run QUEUE_BEHIND_MS or more go to a thread that is free. */
  #takeBackFromSlowThreads(): void {
    if (this.#lines.size === 0) return;
    const threads = this.#lines.threads();
    for (let index = 0; index < threads.length; index += 1) {
      const threadId = threads[index] as number;
      if (this.#pool.busyForThread(threadId) >= QUEUE_BEHIND_MS) this.#takeBack(threadId);
    }
  }

  /** A task whose call moved on (taken back from behind another) was answered or failed: only its slot is freed. */
  #settledAfterMove(slot: number): void {
    this.#freeSlots[this.#freeCount++] = slot;
    this.#pump();
  }

  #onOutcome(call: PendingCall, slot: number, reply: WorkerReply): void {
    const threadId = this.#taskSettled(slot, false);
    const plain = typeof reply === "string"; // a plain success's bare content (protocol.ts)
    // Heard on every reply, a moved call's refusal too (it may be the last task the thread had:
    // unheard, the thread would stay, idle, taking no call and holding a place in the pool).
    if (!plain && reply.retire) {
      this.#pool.retire(threadId);
      this.#takeBack(threadId); // a retiring thread would refuse them
    }
    if (call.slot !== slot) {
      this.#settledAfterMove(slot);
      return;
    }
    if (!call.answered) this.#recordThread(call, slot);
    this.#freeSlot(call, slot);
    if (!plain && reply.kind === "refused" && !call.answered && call.attempts < MAX_ATTEMPTS) {
      this.#queue.unshift(call); // the thread did not start it: run it on another
    } else if (!call.answered) {
      const decoded = !plain && reply.kind === "refused" ? refusedTooOften() : decodeOutcome(reply);
      if (isNonRecoverableToolError(decoded)) this.#answer(call).reject(decoded);
      else this.#answer(call).resolve(decoded as ToolOutcome);
    }
    // This thread is free: a call waiting behind a slow task elsewhere runs here instead.
    if (this.#pool.idle(threadId)) this.#takeBackFromSlowThreads();
    this.#pump();
  }

  /** Piscina failed the task: the thread died under it (exit, out of memory), or we ended it. */
  #onPoolFailure(call: PendingCall, slot: number, error: unknown): void {
    this.#taskSettled(slot, true);
    if (call.slot !== slot) {
      this.#settledAfterMove(slot);
      return;
    }
    const reason = this.#pool.endReasonOf(this.#pool.threadOf(slot));
    // The thread ended before it started the call (its neighbour's fault, a stray exit between
    // tasks): nothing of it ran, so it runs on another thread.
    if (!call.answered && reason === undefined && call.attempts < MAX_ATTEMPTS && this.#board.stop(slot)) {
      this.#freeSlot(call, slot);
      this.#queue.unshift(call);
      this.#pump();
      return;
    }
    // A thread that had taken the call ended under it (a kill after the call settled was recorded by the grace timer).
    const owner = this.#board.owner(slot);
    if (!call.answered && owner !== 0) call.request.record({ threadId: owner, threadKilled: true });
    this.#freeSlot(call, slot);
    if (!call.answered) {
      this.#answer(call).resolve(reason === undefined ? poolFailureOutcome(error) : failureOutcome(ToolErrorCode.EXECUTION_FAILED, reason));
    }
    this.#pump();
  }

  #onAbort(call: PendingCall): void {
    if (call.answered) return;
    this.#recordThread(call, call.slot);
    this.#answer(call).reject(abortReason(call.request.signal));
    if (call.waiting)
      this.#queue.cancel(call); // no thread will ever see it
    // A caller's timeout (a TimeoutError reason: AbortSignal.timeout(), a queue host relaying
    // the agent's timer) reaches the tool as a timeout, as the caller's reason does in-process.
    else this.#stop(call, isTimeoutReason(abortReason(call.request.signal)) ? "timeout" : "abort");
    this.#pump();
  }

  #onTimeout(call: PendingCall): void {
    if (call.answered) return;
    this.#recordThread(call, call.slot);
    this.#answer(call).resolve(timeoutOutcome(call.request.timeoutMs as number));
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
    // It may be killed: no call waits behind it.
    this.#pool.closeBehind(slot);
    this.#takeBack(this.#pool.threadOf(slot));
    this.#pool.abort(slot, taskId, reason);
    this.#pool.prewarm(); // the next call should find a warm thread, not wait for this one
    call.grace = SetTimeout(() => {
      call.grace = undefined;
      if (this.#board.condemn(slot, taskId) === 0) return;
      call.request.record(THREAD_KILLED); // after the call settled: the pipeline's onThreadKilled
      this.#pool.kill(slot);
    }, this.#options.abortGraceMs);
    TimeoutPrototypeUnref(call.grace);
  }

  /** Tells the pipeline which thread took the call, once the board says one did. */
  #recordThread(call: PendingCall, slot: number): void {
    if (call.request.record === ignoreFacts) return; // nothing hears it: no record made, the board not read
    const owner = slot < 0 ? 0 : this.#board.owner(slot);
    if (owner !== 0) call.request.record({ threadId: owner });
  }

  /** Marks the call answered and drops its timers, abort subscription and task messages; returns it. */
  #answer(call: PendingCall): PendingCall {
    call.answered = true;
    // A task still running after its call settled speaks to no one (only a call with onProgress listens).
    if (call.progress !== undefined) this.#pool.messages.forget(call.taskId);
    stopWatching(call);
    call.progress?.close();
    if (call.timer !== undefined) ClearTimeout(call.timer);
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
    if (call.grace !== undefined) ClearTimeout(call.grace);
    call.grace = undefined;
    call.slot = -1;
    if (call.progress !== undefined) this.#pool.messages.forget(call.taskId);
    this.#freeSlots[this.#freeCount++] = slot;
  }
}

/**
 * A worker's progress report (`[progress, total, message]`, see RunningTask) to the caller's
 * channel, which checks it again: anything malformed is dropped, never the call's failure.
 */
function relayProgress(channel: ProgressChannel, message: unknown): void {
  if (!ArrayIsArray(message) || message.length !== 3) return;
  const progress: unknown = message[0]; // by index: a patched array iterator is not consulted
  const total: unknown = message[1];
  const text: unknown = message[2];
  try {
    channel.report({
      progress: progress as number,
      ...(total === undefined ? {} : { total: total as number }),
      ...(text === undefined ? {} : { message: text as string }),
    });
  } catch {
    // a message that is not a progress report (sendTaskMessage is reachable from a tool)
  }
}

function refusedTooOften(): ToolOutcome {
  return failureOutcome(ToolErrorCode.EXECUTION_FAILED, "no worker thread could take the call (every one was being replaced)");
}

/**
 * Arguments go to the worker by structured clone. The validator's value is usually the call's
 * own JSON snapshot, or equal to it (a schema library returns a fresh copy): either always
 * clones. Anything else is tried here first, so a function, a symbol or a throwing getter in it
 * is the validator's failure, not a worker's.
 */
function unsendableArguments(request: RunRequest): ToolOutcome | undefined {
  const snapshot = request.call.arguments;
  if (request.args === snapshot || matchesSnapshot(request.args, snapshot)) return undefined;
  try {
    StructuredClone(request.args);
    return undefined;
  } catch (error) {
    return failureOutcome(
      ToolErrorCode.VALIDATION_FAILED,
      `the validated arguments cannot be sent to a worker thread (${describeFailure(error).text})`,
    );
  }
}

/** A genuine DOMException named "TimeoutError" (brand-checked: a caller's reason may be anything). */
function isTimeoutReason(reason: unknown): boolean {
  try {
    return DOMExceptionPrototypeGetName(reason as DOMExceptionInstance) === "TimeoutError";
  } catch {
    return false;
  }
}
