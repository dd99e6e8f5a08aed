// The Piscina pool as the dispatch sees it: threads, their ports, which thread each slot's
// task went to, and the ways a thread ends. Piscina runs the tasks; this file decides which
// thread may take one (a load balancer that skips retiring threads and records the choice),
// hears each thread's hello and module-load report, bounds how long a thread may take to load
// its modules, ends threads without ever taking another call down with them, and keeps a
// warm spare thread while threads are being replaced. A thread that exits before it loaded its
// modules fails the calls waiting for a thread, and no thread is started for a while after
// (boot-backoff.ts): Piscina would otherwise start the same failing thread again and again.
// docs/contract.md: rule W1 — tool modules, rule W3 — timeout and termination, rule W5 — faults are results.
import type { Worker } from "node:worker_threads";
import { Piscina, queueOptionsSymbol } from "piscina";
import type { ResolvedAttachmentBudgets, ResolvedOutputBudgets } from "../contract/budgets.js";
import { ContractErrorCode, type ToolContractErrorCode } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import {
  ArrayPrototypeJoin,
  ClearTimeout,
  MapPrototypeDelete,
  MapPrototypeGet,
  MapPrototypeGetSize,
  MapPrototypeSet,
  mapEntryStepper,
  NativePromise,
  ObjectFreeze,
  ObjectGetOwnPropertySymbols,
  PerformanceNow,
  PromisePrototypeThen,
  PromiseResolve,
  SetPrototypeAdd,
  SetPrototypeDelete,
  SetPrototypeHas,
  SetTimeout,
  setValueStepper,
  TimeoutPrototypeRefresh,
  TimeoutPrototypeUnref,
  type TimerHandle,
} from "../contract/primordials.js";
import { describeFailure } from "../contract/untrusted.js";
import { recordBootFailure } from "../executor/metrics.js";
import { BootBackoff } from "./boot-backoff.js";
import { watchNewThreads } from "./new-threads.js";
import { MAX_DELAY_MS, type ResolvedOptions } from "./options.js";
import {
  type StopReason,
  TASK_SLOT,
  type ThreadHello,
  type ThreadLoaded,
  type ToolWorkerData,
  type WorkerReply,
  type WorkerTask,
  type WorkerWarmup,
} from "./protocol.js";
import { SLOT_RUNNING, type TaskBoard } from "./task-board.js";
import { TaskMessages, ThreadPort } from "./thread-port.js";
import { type LoadedToolModules, moduleFileName } from "./tool-modules.js";

/** CommonJS on purpose: see workers/piscina-entry.cts. */
const WORKER_ENTRY = new URL("../../workers/piscina-entry.cjs", import.meta.url).href;

/**
 * Piscina's load balancer, typed from its own constructor's options: a change of its
 * signature in another Piscina version fails `tsc` here.
 */
type LoadBalancer = NonNullable<NonNullable<ConstructorParameters<typeof Piscina>[0]>["loadBalancer"]>;
/** A task as the balancer sees it (its queue options carry the slot: SLOT_TAG). */
type BalancerTask = Parameters<LoadBalancer>[0];
/** Piscina's view of a thread, as its load balancer gets it. */
type PiscinaWorker = Parameters<LoadBalancer>[1][number];

/** The key under which a task's slot rides along to the load balancer (Piscina's queue options; a symbol key is never cloned). */
const SLOT_TAG: typeof queueOptionsSymbol = queueOptionsSymbol;

/** A task as handed to Piscina: tagged with its slot by run(). */
type PoolTask = WorkerTask & { [SLOT_TAG]?: SlotTag };

/** The slot of a task, as the load balancer reads it. */
interface SlotTag {
  readonly slot: number;
}

/** What a pool is made of, made once per executor (frozen). */
export interface PoolSettings {
  readonly options: ResolvedOptions;
  readonly modules: Pick<LoadedToolModules, "urls" | "hasSetup">;
  readonly board: TaskBoard;
  readonly outputBudgets: ResolvedOutputBudgets;
  readonly attachmentBudgets: ResolvedAttachmentBudgets;
}

/**
 * One per slot, reused by every task of that slot: Piscina's `signal` for the task. Firing it
 * makes Piscina drop the task if no thread has it yet, or terminate exactly the thread that
 * runs it (Piscina stops listening the moment the task is done, so it can hit no other task).
 */
class SlotSignal {
  readonly aborted = false;
  #listener: (() => void) | undefined;
  addEventListener(_type: "abort", listener: () => void): void {
    this.#listener = listener;
  }
  removeEventListener(_type: "abort", listener: () => void): void {
    if (this.#listener === listener) this.#listener = undefined;
  }
  fire(): void {
    const listener = this.#listener;
    this.#listener = undefined;
    listener?.();
  }
}

/** Piscina's run options of a slot's tasks (Piscina copies them: one frozen record per slot serves every task). */
interface SlotRunOptions {
  readonly signal: SlotSignal;
}

/**
 * A no-op task sent to make Piscina start a thread. It carries a signal, as every call's task
 * does: Piscina then keeps it, while no thread takes it, in the queue it skips when it hands
 * out a new task (without one, every call after it would wait behind it for the thread it
 * started, however idle the others are, and forever if that thread never boots). The signal
 * also takes it back out when its thread cannot boot.
 */
class Warmup {
  readonly slot = -1;
  /** The thread that has it (its signal would end that thread), once handed; 0 until then. */
  threadId = 0;
  readonly signal = new SlotSignal();
  readonly task: WorkerWarmup & { readonly [SLOT_TAG]: Warmup } = { kind: "warmup", [SLOT_TAG]: this };
}

/** How a thread ended, as its own listeners saw it (the error comes before the exit). */
interface ThreadEnd {
  error: unknown;
  failed: boolean;
}

function ignore(): void {}

/**
 * A call waits behind a thread's running task only while that task has run less than this
 * (a short call is likely to end soon; a slow or spinning tool keeps its thread to itself, so
 * abort and the grace kill keep their meaning for the calls around it).
 */
export const QUEUE_BEHIND_MS = 1;
/** At most this many calls wait on a thread behind its running task. */
const MAX_WAITING_BEHIND = 2;

/** What this pool has handed a thread and not heard back (a running task and at most MAX_WAITING_BEHIND behind it). */
class ThreadLoad {
  constructor(
    readonly worker: PiscinaWorker,
    readonly threadId: number,
  ) {}
  tasks = 0;
  /** When the running task was handed over, or became the one running (the one before it answered). */
  since = 0;
  /** No call may wait behind the running task: its call was answered (abort, timeout), it may be killed. */
  closed = false;
  /**
   * The thread's last task took less than QUEUE_BEHIND_MS: its calls are short ones (a thread
   * that runs long calls, CPU-bound ones say, keeps them to itself and leaves the main thread
   * a core between them).
   */
  lastShort = true;
}

/**
 * Piscina's own record of a thread (the public view's `kWorkerData`): drains the replies a
 * thread posted before it ended. Found by its description, checked at run time: where it is
 * missing (another Piscina), no call ever waits behind another.
 */
interface PiscinaThreadRecord {
  processPendingMessages(): void;
}
const WORKER_DATA_DESCRIPTION = "Piscina.kWorkerData";

/** The thread id under which the reason of calls failed for want of any thread is kept (no thread has it). */
const NO_THREAD = -1;

/** How long after its module-load deadline a thread that never reported back is ended. */
const LOAD_REPORT_SLACK_MS = 500;

export class WorkerPool {
  readonly #piscina: Piscina;
  readonly #options: ResolvedOptions;
  readonly #board: TaskBoard;
  readonly #moduleNames: readonly string[];
  /** How long a new thread may take to report its modules loaded (loader, modules, setups). */
  readonly #readyWithinMs: number;
  readonly #slotSignals: SlotSignal[] = [];
  readonly #slotTags: SlotTag[] = [];
  /** Each slot's run options for Piscina (its signal), made once per slot, not once per call. */
  readonly #slotRunOptions: SlotRunOptions[] = [];
  /** The thread each slot's current task was handed to (0: none yet). */
  readonly #slotThread: Int32Array;
  readonly #ports = new Map<number, ThreadPort>();
  /** Threads that have loaded their modules: the only ones handed a task (Piscina lists threads still starting first). */
  readonly #loaded = new Set<number>();
  /** Threads that take no new task (a fault they did not cause, a module that never loaded). */
  readonly #retiring = new Set<number>();
  /** Piscina's live view of threads that were handed a task (to see when a retiring one is idle). */
  readonly #piscinaWorkers = new Map<number, PiscinaWorker>();
  readonly #loadTimers = new Map<number, TimerHandle>();
  /** Why this pool ended a thread, for the calls that were on it. */
  readonly #endReasons = new Map<number, string>();
  /**
   * Set while threads are being replaced (a task ran on after its call was answered and may be
   * killed, a thread retired or died mid-task), for idleTimeout after the last such event: the
   * pool then keeps one idle thread (loaded, or on its way) beside the busy ones, whenever
   * its thread budget has room.
   */
  #spareWanted = false;
  #spareTimer: TimerHandle | undefined;
  #spareCheckQueued = false;
  /** Warm-ups sent to make Piscina start a thread: the balancer refuses each once. */
  #threadsToStart = 0;
  /** Warm-ups Piscina still holds. */
  readonly #warmups = new Set<Warmup>();
  /** The thread that took the last call: tried first, so a spare stays idle (and is reaped once not wanted). */
  #lastChosen: PiscinaWorker | undefined;
  /** What each thread was handed and has not answered. */
  readonly #loads = new Map<number, ThreadLoad>();
  /** The same, as a list (scanned for a thread a call may wait behind; a few threads, no iterator). */
  readonly #loadList: ThreadLoad[] = [];
  /** The thread the next task goes to, behind its running one (runBehind). */
  #behind: PiscinaWorker | undefined;
  /** The key of Piscina's own thread record on its public view (undefined: not found yet; null: none, no queuing behind). */
  #recordKey: symbol | null | undefined;
  /** Threads Piscina may run: maxThreads running calls, and as many winding down after their calls settled. */
  readonly #threadBudget: number;
  #destroyed = false;
  /** Threads that exited before they loaded their modules: when the next may start, and what calls get meanwhile. */
  readonly #backoff = new BootBackoff();
  /** Threads that exited before they loaded their modules, since the pool was made (the metrics' boot failures). */
  #bootFailures = 0;
  readonly #stopWatching: () => void;
  /** Listeners of the worker → main per-task messages. */
  readonly messages = new TaskMessages();
  readonly #started: { resolve: () => void; reject: (error: unknown) => void; threadsLoaded: number; done: boolean };
  /** Resolves once `minThreads` threads have loaded every module; rejects with a ToolContractError. */
  readonly started: Promise<void>;

  constructor({ options, modules, board, outputBudgets, attachmentBudgets }: PoolSettings) {
    this.#options = options;
    const moduleUrls = modules.urls;
    // The loader and the modules load one after the other, each within moduleLoadTimeoutMs; then the setups.
    this.#readyWithinMs =
      options.moduleLoadTimeoutMs * (options.loader === undefined ? 1 : 2) + (modules.hasSetup ? options.setupTimeoutMs : 0);
    this.#board = board;
    const names: string[] = [];
    for (let index = 0; index < moduleUrls.length; index += 1) names[index] = moduleFileName(moduleUrls[index] as string);
    this.#moduleNames = names;
    this.#slotThread = new Int32Array(board.slots);
    this.#threadBudget = options.maxThreads * 2;
    for (let slot = 0; slot < board.slots; slot += 1) {
      const signal = new SlotSignal();
      this.#slotSignals[slot] = signal;
      this.#slotTags[slot] = { slot };
      this.#slotRunOptions[slot] = ObjectFreeze({ signal });
    }
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    this.started = new NativePromise<void>((onResolve, onReject) => {
      resolve = onResolve;
      reject = onReject;
    });
    this.#started = { resolve, reject, threadsLoaded: 0, done: false };
    this.#piscina = new Piscina({
      filename: WORKER_ENTRY,
      minThreads: options.minThreads,
      // Up to maxThreads running calls, and as many tasks winding down after their calls settled
      // (a warm spare uses this room too, never more).
      maxThreads: this.#threadBudget,
      idleTimeout: options.idleTimeout,
      concurrentTasksPerWorker: 1,
      // Nothing reads Piscina's run and wait time histograms: two clock reads and records per call saved.
      recordTiming: false,
      workerData: {
        modules: moduleUrls,
        board: board.buffer,
        moduleLoadTimeoutMs: options.moduleLoadTimeoutMs,
        setupTimeoutMs: options.setupTimeoutMs,
        loader: options.loader,
        outputBudgets,
        attachmentBudgets,
      } satisfies ToolWorkerData,
      loadBalancer: (task, workers) => this.#choose(task, workers),
      ...(options.resourceLimits === undefined ? {} : { resourceLimits: options.resourceLimits }),
    });
    // Node tells of a new thread on the next tick: Piscina's first threads are still heard of.
    this.#stopWatching = watchNewThreads((worker) => this.#onNewThread(worker));
    this.#piscina.on("message", (message: unknown) => this.#onThreadMessage(message));
    // A thread error no task claims (the worker entry failing, out of memory while loading):
    // the thread's own listeners (#onNewThread) have it, and its exit follows.
    this.#piscina.on("error", ignore);
    if (options.minThreads === 0) this.#settleStart();
  }

  /** The pool's live threads. */
  get threads(): readonly Worker[] {
    return this.#piscina.threads;
  }

  /** Runs a task on the thread the balancer picks; settles when Piscina hears back (or the thread ends). */
  run(task: WorkerTask): Promise<WorkerReply> {
    const slot = task[TASK_SLOT];
    this.#slotThread[slot] = 0;
    (task as PoolTask)[SLOT_TAG] = this.#slotTags[slot] as SlotTag; // the slot's tag, made once per slot
    return this.#piscina.run(task, this.#slotRunOptions[slot] as SlotRunOptions) as Promise<WorkerReply>;
  }

  /**
   * A thread whose running task started less than QUEUE_BEHIND_MS ago, whose task before took
   * less than that too, with fewer than MAX_WAITING_BEHIND tasks waiting behind it, for a call
   * to wait behind it (0: none). Only a thread that has loaded its modules
   * and is not retiring, and only where a reply posted before its thread ended is never lost.
   */
  threadForBehind(): number {
    if (this.#recordKey === null) return 0;
    const now = PerformanceNow();
    const loads = this.#loadList;
    for (let index = 0; index < loads.length; index += 1) {
      const load = loads[index] as ThreadLoad;
      if (load.tasks === 0 || load.tasks > MAX_WAITING_BEHIND || load.closed || !load.lastShort || now - load.since >= QUEUE_BEHIND_MS)
        continue;
      const worker = load.worker;
      if (worker.terminating || worker.destroyed || SetPrototypeHas(this.#retiring, load.threadId)) continue;
      return load.threadId;
    }
    return 0;
  }

  /** Runs a task behind the running one of `threadId` (from threadForBehind, in the same turn). */
  runBehind(task: WorkerTask, threadId: number): Promise<WorkerReply> {
    this.#behind = MapPrototypeGet(this.#loads, threadId)?.worker;
    try {
      return this.run(task);
    } finally {
      this.#behind = undefined;
    }
  }

  /** No call waits behind the slot's task any more (its call was answered: it may be killed). */
  closeBehind(slot: number): void {
    const load = MapPrototypeGet(this.#loads, this.threadOf(slot));
    if (load !== undefined) load.closed = true;
  }

  /** Piscina has answered the slot's task (or failed it): its thread holds one task fewer. */
  settled(slot: number): void {
    const threadId = this.#slotThread[slot] as number;
    if (threadId === 0) return;
    const load = MapPrototypeGet(this.#loads, threadId);
    if (load === undefined || load.tasks === 0) return;
    load.tasks -= 1;
    const now = PerformanceNow();
    load.lastShort = now - load.since < QUEUE_BEHIND_MS;
    if (load.tasks !== 0) {
      load.since = now; // the task behind it runs now
      return;
    }
    load.closed = false;
    this.#endIfRetired(threadId);
  }

  /**
   * A retiring thread ends once it runs nothing of a call's, whichever way its last task
   * settled: left alone it would take no call and hold a place in the pool until Piscina's
   * idleTimeout (with every place so held, calls would wait that long).
   */
  #endIfRetired(threadId: number): void {
    if (!SetPrototypeHas(this.#retiring, threadId) || !this.idle(threadId)) return;
    this.#terminate(threadId);
  }

  /** The thread runs nothing this pool handed it (its last task answered). */
  idle(threadId: number): boolean {
    return (MapPrototypeGet(this.#loads, threadId)?.tasks ?? 0) === 0;
  }

  /** How long the thread has run its current task (ms; 0 when it has none). */
  busyForThread(threadId: number): number {
    const load = MapPrototypeGet(this.#loads, threadId);
    return load === undefined || load.tasks === 0 ? 0 : PerformanceNow() - load.since;
  }

  /** The thread the slot's task was handed to (0: still in Piscina's queue). */
  threadOf(slot: number): number {
    return this.#slotThread[slot] as number;
  }

  /** Why this pool ended `threadId`, when it did. */
  endReasonOf(threadId: number): string | undefined {
    return threadId === 0 ? undefined : MapPrototypeGet(this.#endReasons, threadId);
  }

  /** Fires the worker-side signal of the slot's task (over its thread's port). */
  abort(slot: number, taskId: number, reason: StopReason): void {
    // A task is only handed to a thread that has reported its modules loaded, which it does
    // after its hello on the same channel: its port is known (unless the thread is gone).
    MapPrototypeGet(this.#ports, this.threadOf(slot))?.abort(taskId, reason);
  }

  /** Ends the thread running the slot's task, through Piscina, bound to that very task. */
  kill(slot: number): void {
    (this.#slotSignals[slot] as SlotSignal).fire();
  }

  /** The thread takes no new task, and is terminated as soon as it runs none. */
  retire(threadId: number): void {
    if (threadId === 0) return;
    SetPrototypeAdd(this.#retiring, threadId);
    this.#wantSpare();
    this.#failCallsIfNoThread();
    this.#endIfRetired(threadId);
  }

  /** While threads cannot boot and the pool waits before starting another: why (what a call gets when no thread can take it). */
  bootRefusal(): string | undefined {
    return this.#backoff.refusal();
  }

  /** Threads that exited (or were ended) before they had loaded their modules, since the pool was made. */
  get bootFailures(): number {
    return this.#bootFailures;
  }

  /** Threads running a task of a call now. */
  busyThreads(): number {
    let busy = 0;
    const loads = this.#loadList;
    for (let index = 0; index < loads.length; index += 1) if ((loads[index] as ThreadLoad).tasks !== 0) busy += 1;
    return busy;
  }

  /** Threads that have loaded their modules and take calls (during a boot failure's wait, the only ones a call may use). */
  usableThreads(): number {
    let usable = 0;
    const next = setValueStepper(this.#loaded);
    for (let step = next(); step.done !== true; step = next()) if (!SetPrototypeHas(this.#retiring, step.value)) usable += 1;
    return usable;
  }

  destroy(): Promise<void> {
    this.#destroyed = true;
    this.#stopWatching();
    this.#spareWanted = false;
    if (this.#spareTimer !== undefined) ClearTimeout(this.#spareTimer);
    const timers = mapEntryStepper(this.#loadTimers);
    for (let step = timers(); step.done !== true; step = timers()) ClearTimeout(step.value[1]);
    const ports = mapEntryStepper(this.#ports);
    for (let step = ports(); step.done !== true; step = ports()) step.value[1].close();
    return this.#piscina.destroy();
  }

  /**
   * Piscina's load balancer: the thread that took the last call when it is idle (no scan, and
   * a spare stays idle), else the first idle thread that has loaded its modules and is not
   * retiring (none: the task waits in Piscina's queue until one is); records which slot went where.
   */
  #choose(task: BalancerTask, workers: PiscinaWorker[]): PiscinaWorker | null {
    const behind = this.#behind;
    if (behind !== undefined) {
      this.#behind = undefined;
      return this.#hand(task, behind);
    }
    // A warm-up sent to start a thread is refused once: Piscina then starts one (and hands the
    // warm-up, a no-op, to whichever thread is free later).
    if ((task[SLOT_TAG] as SlotTag).slot < 0 && this.#threadsToStart > 0) {
      this.#threadsToStart -= 1;
      return null;
    }
    const last = this.#lastChosen;
    const lastUsable = last !== undefined && !last.terminating && !last.destroyed && !SetPrototypeHas(this.#retiring, last.id);
    const lastIdle = lastUsable && last.currentUsage === 0;
    // A warm-up (a no-op) goes to another idle thread if there is one: on the thread that took
    // the last call it would make the next call look elsewhere.
    const warmup = (task[SLOT_TAG] as SlotTag).slot < 0;
    // A thread running only a warm-up (a no-op, answered at once; it got one when no other was
    // idle) is still the one to try first: the call waits behind it there, not on the spare.
    if (!warmup && lastUsable && (lastIdle || this.#onlyWarmingUp(last))) return this.#hand(task, last);
    for (let index = 0; index < workers.length; index += 1) {
      const worker = workers[index] as PiscinaWorker;
      const threadId = worker.id;
      if (MapPrototypeGet(this.#piscinaWorkers, threadId) === undefined) MapPrototypeSet(this.#piscinaWorkers, threadId, worker);
      // By id: Piscina makes a new view of each thread every time it asks.
      if (worker.currentUsage !== 0 || worker.terminating || worker.destroyed || (warmup && threadId === last?.id)) continue;
      if (!SetPrototypeHas(this.#loaded, threadId) || SetPrototypeHas(this.#retiring, threadId)) continue;
      return this.#hand(task, worker);
    }
    return lastIdle ? this.#hand(task, last as PiscinaWorker) : null;
  }

  /** Records the choice: which slot went where, and the thread to try first next time. */
  #hand(task: BalancerTask, worker: PiscinaWorker): PiscinaWorker {
    const tag = task[SLOT_TAG] as SlotTag;
    if (tag.slot >= 0) {
      const threadId = worker.id;
      this.#slotThread[tag.slot] = threadId;
      this.#lastChosen = worker;
      let load = MapPrototypeGet(this.#loads, threadId);
      if (load === undefined) {
        load = new ThreadLoad(worker, threadId);
        MapPrototypeSet(this.#loads, threadId, load);
        this.#loadList[this.#loadList.length] = load;
        this.#findRecordKey(worker);
      }
      load.tasks += 1;
      if (load.tasks === 1) load.since = PerformanceNow();
    } else (tag as Warmup).threadId = worker.id; // a warm-up has no slot, and does not make its thread the one to try first
    if (this.#spareWanted) this.#queueSpareCheck();
    return worker;
  }

  /** The thread runs nothing of a call's, only a warm-up it was handed. */
  #onlyWarmingUp(worker: PiscinaWorker): boolean {
    if ((MapPrototypeGet(this.#loads, worker.id)?.tasks ?? 0) !== 0) return false;
    const next = setValueStepper(this.#warmups);
    for (let step = next(); step.done !== true; step = next()) if (step.value.threadId === worker.id) return true;
    return false;
  }

  /**
   * A task whose call settled runs on (abort, timeout), and may be killed: the pool keeps a
   * warm spare from now on, so the next call finds a thread that has loaded its modules
   * instead of one still booting (or the grace period).
   */
  prewarm(): void {
    this.#wantSpare();
  }

  /** Keeps a spare from now until idleTimeout after the last call of this (Piscina reaps idle threads by then). */
  #wantSpare(): void {
    if (this.#destroyed) return;
    this.#spareWanted = true;
    if (this.#spareTimer === undefined) {
      this.#spareTimer = SetTimeout(() => {
        this.#spareTimer = undefined;
        this.#spareWanted = false;
      }, this.#options.idleTimeout);
      TimeoutPrototypeUnref(this.#spareTimer);
    } else TimeoutPrototypeRefresh(this.#spareTimer);
    this.#keepSpare();
  }

  /** After the balancer's choice, once Piscina has handed the task over (the chosen thread then counts as busy). */
  #queueSpareCheck(): void {
    if (this.#spareCheckQueued) return;
    this.#spareCheckQueued = true;
    void PromisePrototypeThen(PromiseResolve(undefined), () => {
      this.#spareCheckQueued = false;
      this.#keepSpare();
    });
  }

  /**
   * Unless a thread that is not retiring is idle or still starting, starts one: a no-op
   * warm-up task, for which Piscina starts a thread when none is free (it runs on whichever
   * thread is free first; the new one is the spare either way).
   */
  #keepSpare(): void {
    // While threads cannot boot, a thread starts only for a call that comes after the wait.
    if (!this.#spareWanted || this.#destroyed || this.#backoff.failing) return;
    const threads = this.#piscina.threads;
    if (threads.length >= this.#threadBudget) return;
    let serving = 0;
    let spare = false;
    for (let index = 0; index < threads.length; index += 1) {
      const threadId = (threads[index] as Worker).threadId;
      if (SetPrototypeHas(this.#retiring, threadId)) continue;
      serving += 1;
      const worker = MapPrototypeGet(this.#piscinaWorkers, threadId);
      // Starting (the spare is on its way), or loaded and idle.
      if (
        !SetPrototypeHas(this.#loaded, threadId) ||
        worker === undefined ||
        (worker.currentUsage === 0 && !worker.terminating && !worker.destroyed)
      ) {
        spare = true;
      }
    }
    // An idle thread is a spare only beside maxThreads others: alone, it is the one the next
    // call takes (and then a spare would only start when that call is aborted, too late to load).
    if (spare && serving > this.#options.maxThreads) return;
    this.#startThread();
  }

  /** Sends a warm-up, for which Piscina starts a thread (the balancer refuses it once). */
  #startThread(): void {
    const warmup = new Warmup();
    this.#threadsToStart += 1;
    SetPrototypeAdd(this.#warmups, warmup);
    const done = (): void => {
      SetPrototypeDelete(this.#warmups, warmup);
    };
    void PromisePrototypeThen(this.#piscina.run(warmup.task, { signal: warmup.signal as never }), done, done);
  }

  /** Takes back the warm-ups no thread has taken (their threads may never boot): no thread is started for them later. */
  #withdrawWarmups(): void {
    const next = setValueStepper(this.#warmups);
    for (let step = next(); step.done !== true; step = next()) if (step.value.threadId === 0) step.value.signal.fire();
    this.#threadsToStart = 0;
  }

  #onThreadMessage(message: unknown): void {
    if (typeof message !== "object" || message === null) return;
    if ((message as ThreadHello).toolgateThreadPort === true) this.#onHello(message as ThreadHello);
    else if ((message as ThreadLoaded).toolgateThreadLoaded === true) this.#onLoaded(message as ThreadLoaded);
  }

  /**
   * A worker thread was created (by anyone): if it is one of this pool's, its exit is watched
   * from now on, whenever it comes (before its hello, while it loads, or later), with the
   * error that ended it, if any (out of memory, the worker entry failing).
   */
  #onNewThread(worker: Worker): void {
    if (this.#destroyed || !this.#holds(worker)) return;
    const threadId = worker.threadId; // -1 once it has exited
    const end: ThreadEnd = { error: undefined, failed: false };
    worker.on("error", (error: unknown) => {
      end.error = error;
      end.failed = true;
    });
    worker.once("exit", (code: number) => this.#onExit(threadId, code, end));
    worker.prependOnceListener("exit", () => this.#takeRepliesOf(threadId));
  }

  #forgetLoad(threadId: number): void {
    const load = MapPrototypeGet(this.#loads, threadId);
    if (load === undefined) return;
    MapPrototypeDelete(this.#loads, threadId);
    const list = this.#loadList;
    for (let index = 0; index < list.length; index += 1) {
      if (list[index] !== load) continue;
      list[index] = list[list.length - 1] as ThreadLoad;
      list.length -= 1;
      return;
    }
  }

  /** Piscina's own record of a thread, behind its public view (once, at the first thread handed a task). */
  #findRecordKey(worker: PiscinaWorker): void {
    if (this.#recordKey !== undefined) return;
    this.#recordKey = null;
    const keys = ObjectGetOwnPropertySymbols(worker);
    for (let index = 0; index < keys.length; index += 1) {
      const key = keys[index] as symbol;
      if (key.description !== WORKER_DATA_DESCRIPTION) continue;
      const record = (worker as unknown as Record<symbol, unknown>)[key];
      if (typeof record === "object" && record !== null && typeof (record as PiscinaThreadRecord).processPendingMessages === "function")
        this.#recordKey = key;
    }
  }

  /**
   * The thread has ended: the replies it posted before, still on their way, are taken now,
   * before Piscina fails what it has not heard back (its own exit listener runs after this one).
   * A call that waited behind the one that ended the thread was never started (task-turns.ts):
   * the call before it is answered with its own reply, never with its neighbour's fault.
   */
  #takeRepliesOf(threadId: number): void {
    const key = this.#recordKey;
    if (key === undefined || key === null) return;
    const worker = MapPrototypeGet(this.#loads, threadId)?.worker;
    if (worker === undefined) return;
    try {
      ((worker as unknown as Record<symbol, PiscinaThreadRecord>)[key] as PiscinaThreadRecord).processPendingMessages();
    } catch {
      // never in an exit listener: Piscina's own exit handling follows as it would have
    }
  }

  #holds(worker: Worker): boolean {
    const threads = this.#piscina.threads;
    for (let index = 0; index < threads.length; index += 1) if (threads[index] === worker) return true;
    return false;
  }

  /** A thread started: its port, and the watch on its module loading. */
  #onHello({ threadId, port }: ThreadHello): void {
    MapPrototypeSet(this.#ports, threadId, new ThreadPort(port, this.messages));
    // Capped: a delay of 2^31 ms or more would fire after 1 ms.
    const timer = SetTimeout(() => this.#loadTimedOut(threadId), Math.min(this.#readyWithinMs + LOAD_REPORT_SLACK_MS, MAX_DELAY_MS));
    TimeoutPrototypeUnref(timer);
    MapPrototypeSet(this.#loadTimers, threadId, timer);
  }

  #onLoaded({ threadId, failures }: ThreadLoaded): void {
    const timer = MapPrototypeGet(this.#loadTimers, threadId);
    if (timer !== undefined) ClearTimeout(timer);
    MapPrototypeDelete(this.#loadTimers, threadId);
    SetPrototypeAdd(this.#loaded, threadId);
    if (this.#backoff.failing) {
      this.#backoff.loaded(); // threads boot again: the pool gets its minThreads back
      this.#restoreMinThreads();
    }
    if (this.#started.done) return; // after start, a module that failed in a thread fails its own calls there
    for (let index = 0; index < failures.length; index += 1) {
      const failure = failures[index];
      if (failure !== undefined) {
        this.#failStart(ContractErrorCode.INVALID_TOOL_MODULE, failure, undefined);
        return;
      }
    }
    this.#started.threadsLoaded += 1;
    if (this.#started.threadsLoaded >= this.#options.minThreads) this.#settleStart();
  }

  /** A thread never reported its modules loaded (a top-level spin, say): it is ended. */
  #loadTimedOut(threadId: number): void {
    MapPrototypeDelete(this.#loadTimers, threadId);
    const reason = `a worker thread did not finish loading the tool modules (${ArrayPrototypeJoin(this.#moduleNames, ", ")}) within ${this.#readyWithinMs} ms`;
    MapPrototypeSet(this.#endReasons, threadId, reason);
    this.#failStart(ContractErrorCode.INVALID_TOOL_MODULE, reason, undefined);
    SetPrototypeAdd(this.#retiring, threadId);
    if (!this.#failCallsWaitingFor(threadId)) this.#terminate(threadId);
  }

  /**
   * Fails, with the reason `threadId` was ended, the calls handed to it and the calls Piscina
   * holds for a thread to become ready (a thread that cannot load its modules is not
   * replaced by Piscina: they would wait forever). True when one was running on it (Piscina
   * then terminates the thread itself).
   */
  #failCallsWaitingFor(threadId: number): boolean {
    let onThread = false;
    for (let slot = 0; slot < this.#slotThread.length; slot += 1) {
      const owner = this.#slotThread[slot] as number;
      if (owner !== threadId && owner !== 0) continue;
      if (owner === threadId) onThread = true;
      this.#slotThread[slot] = threadId; // so the dispatch finds the reason
      this.kill(slot); // a free slot has no listener: nothing happens
    }
    return onThread;
  }

  #onExit(threadId: number, code: number, end: ThreadEnd): void {
    const wasLoaded = SetPrototypeHas(this.#loaded, threadId);
    const greeted = MapPrototypeGet(this.#ports, threadId) !== undefined;
    const port = MapPrototypeGet(this.#ports, threadId);
    port?.close();
    MapPrototypeDelete(this.#ports, threadId);
    MapPrototypeDelete(this.#piscinaWorkers, threadId);
    this.#forgetLoad(threadId);
    SetPrototypeDelete(this.#retiring, threadId);
    SetPrototypeDelete(this.#loaded, threadId);
    const timer = MapPrototypeGet(this.#loadTimers, threadId);
    if (timer !== undefined) ClearTimeout(timer);
    MapPrototypeDelete(this.#loadTimers, threadId);
    if (this.#destroyed) return;
    if (!wasLoaded) {
      this.#bootFailed(threadId, code, end, greeted);
      return;
    }
    if (!this.#started.done)
      this.#failStart(ContractErrorCode.WORKER_POOL_START_FAILED, `a worker thread exited with code ${code} while starting`, undefined);
    // Calls that reached Piscina after we ended a thread that could not load its modules.
    if (MapPrototypeGet(this.#endReasons, threadId) !== undefined) this.#failCallsWaitingFor(threadId);
    // Reasons are read by the calls settling right after the exit; keep the map small.
    if (MapPrototypeGetSize(this.#endReasons) > 64) this.#endReasons.clear();
    // A thread that died mid-task (not our kill: the spare for that started at the abort) is
    // replaced by a warm spare; one that could not load its modules is not (it would fail the same way).
    if (this.#backoff.failing)
      this.#failCallsIfNoThread(); // the last thread that loaded is gone: none is coming
    else if (this.#diedMidTask(threadId)) this.#wantSpare();
    // One thread fewer: while a spare is wanted, start the next one now, not when a call next
    // comes (a thread takes tens of milliseconds to load its modules).
    else this.#queueSpareCheck();
  }

  /**
   * A thread exited before it reported its modules loaded (or was ended because it never
   * did): create() rejects; after start, the calls waiting for a thread fail with why (the
   * module cannot boot: no thread they could wait for is coming), and the pool waits before
   * it starts another thread.
   */
  #bootFailed(threadId: number, code: number, end: ThreadEnd, greeted: boolean): void {
    const error = end.failed ? `: ${describeFailure(end.error).text}` : "";
    const modules = ArrayPrototypeJoin(this.#moduleNames, ", ");
    const reason =
      MapPrototypeGet(this.#endReasons, threadId) ??
      (greeted
        ? `a worker thread exited with code ${code} before it had loaded the tool modules (${modules})${error}`
        : `a worker thread exited with code ${code} before it started (tool modules: ${modules})${error}`);
    if (greeted) this.#failStart(ContractErrorCode.INVALID_TOOL_MODULE, reason, undefined);
    else this.#failStart(ContractErrorCode.WORKER_POOL_START_FAILED, end.failed ? describeFailure(end.error).text : reason, end.error);
    this.#backoff.failed(reason);
    this.#bootFailures += 1;
    recordBootFailure();
    this.#withdrawWarmups();
    this.#failCallsIfNoThread();
  }

  /**
   * While threads cannot boot, once no thread that loaded is left to take a call: the calls
   * waiting in Piscina for a thread fail with why (the one they wait for is not coming). With
   * one left, they wait for it.
   */
  #failCallsIfNoThread(): void {
    if (!this.#backoff.failing || this.usableThreads() !== 0) return;
    // Keep the map small, but never drop a reason before the calls that read it settle.
    if (MapPrototypeGetSize(this.#endReasons) > 64) this.#endReasons.clear();
    MapPrototypeSet(this.#endReasons, NO_THREAD, this.#backoff.reason);
    this.#failCallsWaitingFor(NO_THREAD);
  }

  /** After threads that could not boot, one loaded: starts threads until minThreads are up (Piscina no longer does). */
  #restoreMinThreads(): void {
    if (this.#destroyed) return;
    const threads = this.#piscina.threads;
    let serving = 0;
    for (let index = 0; index < threads.length; index += 1) {
      if (!SetPrototypeHas(this.#retiring, (threads[index] as Worker).threadId)) serving += 1;
    }
    for (; serving < this.#options.minThreads; serving += 1) this.#startThread();
  }

  /** The thread was running a task when it exited (a crash): its slot still says RUNNING (our kill says KILLED). */
  #diedMidTask(threadId: number): boolean {
    for (let slot = 0; slot < this.#slotThread.length; slot += 1) {
      if (this.#slotThread[slot] === threadId && this.#board.state(slot) === SLOT_RUNNING) return true;
    }
    return false;
  }

  #terminate(threadId: number): void {
    void this.#workerById(threadId)?.terminate();
  }

  #workerById(threadId: number): Worker | undefined {
    const threads = this.#piscina.threads;
    for (let index = 0; index < threads.length; index += 1) {
      const worker = threads[index] as Worker;
      if (worker.threadId === threadId) return worker;
    }
    return undefined;
  }

  #settleStart(): void {
    if (this.#started.done) return;
    this.#started.done = true;
    this.#started.resolve();
  }

  #failStart(code: ToolContractErrorCode, message: string, cause: unknown): void {
    if (this.#started.done) return;
    this.#started.done = true;
    const text = code === ContractErrorCode.INVALID_TOOL_MODULE ? message : `the worker pool could not start: ${message}`;
    this.#started.reject(new ToolContractError(code, text, cause === undefined ? undefined : { cause }));
  }
}
