// The task board: a SharedArrayBuffer with two cells per pool slot, read and written with
// Atomics by both sides and no message at all. A worker records which thread took the slot's
// task; the main thread records that it stopped it. That gives the main thread the thread
// to terminate after the grace period (no per-call kill signal for Piscina to track), and
// gives a worker a synchronous "already stopped?" check before it runs a tool.

const THREAD = 0;
const STOPPED = 1;
const CELLS_PER_SLOT = 2;

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

  /** Main: the slot is about to carry a new task. */
  reset(slot: number): void {
    Atomics.store(this.#cells, slot * CELLS_PER_SLOT + THREAD, 0);
    Atomics.store(this.#cells, slot * CELLS_PER_SLOT + STOPPED, 0);
  }

  /** Main: the slot's task was aborted or timed out. */
  stop(slot: number): void {
    Atomics.store(this.#cells, slot * CELLS_PER_SLOT + STOPPED, 1);
  }

  /** Main: the id of the thread running the slot's task, or 0 when no thread took it yet. */
  threadOf(slot: number): number {
    return Atomics.load(this.#cells, slot * CELLS_PER_SLOT + THREAD);
  }

  /** Worker: takes the slot's task; false when the main thread has stopped it already. */
  claim(slot: number, threadId: number): boolean {
    Atomics.store(this.#cells, slot * CELLS_PER_SLOT + THREAD, threadId);
    return Atomics.load(this.#cells, slot * CELLS_PER_SLOT + STOPPED) === 0;
  }
}
