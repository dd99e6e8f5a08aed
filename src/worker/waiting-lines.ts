// The tasks waiting on each thread behind its running task, by slot, in the order the thread
// will run them (dispatch.ts places them, and keeps a task here after its call was taken back
// until the thread has skipped it: the order is the thread's, not the calls'). A line holds a
// few tasks at most. Indexed writes only.
import { MapPrototypeDelete, MapPrototypeGet, MapPrototypeGetSize, MapPrototypeSet, mapKeyStepper } from "../contract/primordials.js";

export class WaitingLines {
  readonly #lines = new Map<number, number[]>();

  /** Threads with a line. */
  get size(): number {
    return MapPrototypeGetSize(this.#lines);
  }

  /** The slots waiting behind `threadId`'s running task, first to run first (do not keep it). */
  line(threadId: number): readonly number[] | undefined {
    return MapPrototypeGet(this.#lines, threadId);
  }

  add(threadId: number, slot: number): void {
    const line = MapPrototypeGet(this.#lines, threadId);
    if (line === undefined) MapPrototypeSet(this.#lines, threadId, [slot]);
    else line[line.length] = slot;
  }

  /** The slot the thread runs next, out of its line (-1: none waits). */
  shift(threadId: number): number {
    const line = MapPrototypeGet(this.#lines, threadId);
    if (line === undefined) return -1;
    const first = line[0] as number;
    for (let index = 1; index < line.length; index += 1) line[index - 1] = line[index] as number;
    line.length -= 1;
    if (line.length === 0) MapPrototypeDelete(this.#lines, threadId);
    return first;
  }

  /** Takes `slot` out of the thread's line; false when it was not in it (it was the running task). */
  remove(threadId: number, slot: number): boolean {
    const line = MapPrototypeGet(this.#lines, threadId);
    if (line === undefined) return false;
    let to = 0;
    for (let index = 0; index < line.length; index += 1) if (line[index] !== slot) line[to++] = line[index] as number;
    if (to === line.length) return false;
    line.length = to;
    if (to === 0) MapPrototypeDelete(this.#lines, threadId);
    return true;
  }

  /** The threads that have a line (a copy: the caller may change the lines). */
  threads(): number[] {
    const threads: number[] = [];
    const next = mapKeyStepper(this.#lines);
    for (let step = next(); step.done !== true; step = next()) threads[threads.length] = step.value;
    return threads;
  }
}
