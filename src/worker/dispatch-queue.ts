// The executor's own queue: calls waiting for a free slot (at most maxThreads calls are in
// the pool, so a call still waiting here can be cancelled before any thread sees it). A ring
// buffer: memory follows the number of calls waiting, however long the queue stays non-empty,
// and a call cancelled while waiting leaves a hole that is compacted away once holes outnumber
// the calls. Indexed writes only: no array method a caller could patch is ever reached.
// docs/contract.md: rule W2 — abort relay (a call aborted while queued never reaches a worker).

/** What the queue holds. `waiting` is the queue's own mark: true from push until shift or cancel. */
export interface QueueEntry {
  waiting: boolean;
}

const MIN_CAPACITY = 16;

export class DispatchQueue<T extends QueueEntry> {
  #items: (T | undefined)[] = new Array<T | undefined>(MIN_CAPACITY);
  #head = 0;
  /** Entries in the ring, holes (cancelled entries) included. */
  #length = 0;
  #holes = 0;

  /** Calls waiting. */
  get size(): number {
    return this.#length - this.#holes;
  }

  /** The ring's capacity (for tests: it follows `size`, never the number of calls ever queued). */
  get capacity(): number {
    return this.#items.length;
  }

  push(entry: T): void {
    this.#makeRoom();
    this.#items[(this.#head + this.#length) % this.#items.length] = entry;
    this.#length += 1;
    entry.waiting = true;
  }

  /** Puts a call back at the front (a call a thread refused goes first again). */
  unshift(entry: T): void {
    this.#makeRoom();
    this.#head = (this.#head - 1 + this.#items.length) % this.#items.length;
    this.#items[this.#head] = entry;
    this.#length += 1;
    entry.waiting = true;
  }

  /** The next waiting call, or undefined. */
  shift(): T | undefined {
    while (this.#length > 0) {
      const entry = this.#items[this.#head] as T;
      this.#items[this.#head] = undefined;
      this.#head = (this.#head + 1) % this.#items.length;
      this.#length -= 1;
      if (entry.waiting) {
        entry.waiting = false;
        return entry;
      }
      this.#holes -= 1;
    }
    return undefined;
  }

  /** Takes a waiting call out (it leaves a hole); compacts when holes outnumber waiting calls. */
  cancel(entry: T): void {
    if (!entry.waiting) return;
    entry.waiting = false;
    this.#holes += 1;
    if (this.#holes > MIN_CAPACITY && this.#holes * 2 > this.#length) this.#rebuild(this.#items.length);
  }

  #makeRoom(): void {
    if (this.#length === this.#items.length)
      this.#rebuild(this.size * 2 >= this.#items.length ? this.#items.length * 2 : this.#items.length);
  }

  /** Copies the waiting calls, in order and without holes, into a ring of `capacity`. */
  #rebuild(capacity: number): void {
    const items = new Array<T | undefined>(capacity);
    let count = 0;
    for (let index = 0; index < this.#length; index += 1) {
      const entry = this.#items[(this.#head + index) % this.#items.length] as T;
      if (entry.waiting) {
        items[count] = entry;
        count += 1;
      }
    }
    this.#items = items;
    this.#head = 0;
    this.#length = count;
    this.#holes = 0;
  }
}
