// The task board: a SharedArrayBuffer with cells per pool slot, changed only with Atomics
// compare-exchange by both threads, so every transition of a slot's task is decided exactly
// once, without any message:
//
//   main assign ──▶ QUEUED ──worker claim──▶ RUNNING ──worker release──▶ DONE
//                     │                         │
//                main stop                 main condemn (grace period over)
//                     ▼                         ▼
//                  STOPPED                   KILLED
//
// A worker runs a tool only if it moved QUEUED → RUNNING (a task stopped while it waited is
// never started). The main thread terminates a thread only if it moved RUNNING → KILLED for
// the very task it means (TASK cell): a worker that finished first has moved it to DONE and
// keeps its thread; a worker that finds KILLED never returns, so its thread cannot take
// another call before it dies.
// docs/contract.md: rule W3 — timeout and termination (a kill bound to its task).

const STATE = 0;
const OWNER = 1;
const TASK = 2;
const CELLS_PER_SLOT = 3;

export const SLOT_QUEUED = 1;
export const SLOT_RUNNING = 2;
export const SLOT_STOPPED = 3;
export const SLOT_DONE = 4;
export const SLOT_KILLED = 5;

export class TaskBoard {
  readonly #cells: Int32Array;

  private constructor(buffer: SharedArrayBuffer) {
    this.#cells = new Int32Array(buffer);
  }

  /** The main thread's board: one slot per call that can be in the pool at once. */
  static create(slots: number): TaskBoard {
    return new TaskBoard(new SharedArrayBuffer(slots * CELLS_PER_SLOT * Int32Array.BYTES_PER_ELEMENT));
  }

  /** A worker's view of the board it got in its workerData. */
  static attach(buffer: SharedArrayBuffer): TaskBoard {
    return new TaskBoard(buffer);
  }

  get buffer(): SharedArrayBuffer {
    return this.#cells.buffer as SharedArrayBuffer;
  }

  get slots(): number {
    return this.#cells.length / CELLS_PER_SLOT;
  }

  /** Main: the slot now carries task `taskId`, not yet taken by any thread. */
  assign(slot: number, taskId: number): void {
    const base = slot * CELLS_PER_SLOT;
    Atomics.store(this.#cells, base + TASK, taskId);
    Atomics.store(this.#cells, base + OWNER, 0);
    Atomics.store(this.#cells, base + STATE, SLOT_QUEUED);
  }

  /** Main: the task was aborted or timed out. True when no thread had started it (and none will). */
  stop(slot: number): boolean {
    return Atomics.compareExchange(this.#cells, slot * CELLS_PER_SLOT + STATE, SLOT_QUEUED, SLOT_STOPPED) === SLOT_QUEUED;
  }

  /**
   * Main: the grace period of task `taskId` is over. Returns the id of the thread to
   * terminate when the task is still running there, 0 when it finished (or never started).
   */
  condemn(slot: number, taskId: number): number {
    const base = slot * CELLS_PER_SLOT;
    if (Atomics.load(this.#cells, base + TASK) !== taskId) return 0;
    if (Atomics.compareExchange(this.#cells, base + STATE, SLOT_RUNNING, SLOT_KILLED) !== SLOT_RUNNING) return 0;
    return Atomics.load(this.#cells, base + OWNER);
  }

  /** The thread that took the slot's task (it claimed it: RUNNING, DONE or KILLED), else 0. */
  owner(slot: number): number {
    const base = slot * CELLS_PER_SLOT;
    const state = Atomics.load(this.#cells, base + STATE);
    return state === SLOT_RUNNING || state === SLOT_DONE || state === SLOT_KILLED ? Atomics.load(this.#cells, base + OWNER) : 0;
  }

  /** The slot's state (one of the SLOT_* values). */
  state(slot: number): number {
    return Atomics.load(this.#cells, slot * CELLS_PER_SLOT + STATE);
  }

  /** Worker: takes the slot's task; false when the main thread stopped it first. */
  claim(slot: number, threadId: number): boolean {
    const base = slot * CELLS_PER_SLOT;
    Atomics.store(this.#cells, base + OWNER, threadId);
    return Atomics.compareExchange(this.#cells, base + STATE, SLOT_QUEUED, SLOT_RUNNING) === SLOT_QUEUED;
  }

  /** Worker: the task finished; false when the main thread condemned it first (this thread is being terminated). */
  release(slot: number): boolean {
    return Atomics.compareExchange(this.#cells, slot * CELLS_PER_SLOT + STATE, SLOT_RUNNING, SLOT_DONE) === SLOT_RUNNING;
  }

  /** Worker, after a failed release: blocks until the thread is terminated (it must not return). */
  awaitTermination(slot: number): never {
    for (;;) Atomics.wait(this.#cells, slot * CELLS_PER_SLOT + STATE, SLOT_KILLED);
  }
}
