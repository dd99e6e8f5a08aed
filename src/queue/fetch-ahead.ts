// When a host fetches a job ahead of its threads. BullMQ's Worker takes at most `concurrency`
// jobs at once, and a finished job's completion (moveToFinished) fetches the next one in its own
// round trip. With one job per thread, a thread sits idle for that round trip after every job
// while jobs keep waiting; with two per thread, the second slot's fetch finds nothing on most
// calls when they come one at a time (an empty moveToActive per call, and a request on a
// sequential call's critical path). So the host takes one job per thread, and arms one job
// ahead per thread only while its queue keeps jobs waiting:
// - armed when a completion brought the next job (BullMQ hands it over under the finished
//   job's lock token: a fetch of the main loop has a fresh token) after a short run: a job
//   fetched behind a run of FETCH_WAIT_MS or more would have waited long enough to need its
//   start check's round trip (start-check.ts), the round trip fetching ahead saves, while
//   another host with a free thread could have taken it;
// - disarmed when a fetch finds the wait list empty (BullMQ's "drained") or a run was long.
//   Two fetches' replies can come in one chunk of one connection: BullMQ then marks itself
//   drained by one and not by the other before it reports the job ("active", a few microtasks
//   later), so a handover reported in the turn of an empty fetch does not arm (armed while
//   BullMQ waits blocked, the next job's fetch would bring an empty one behind it).
// Each change follows one fetch's outcome or one run, so it cannot oscillate faster than jobs
// come; armed or not, an empty fetch happens at most once per arming (one call in flight never
// arms: its completion finds nothing, the next job comes through the blocking wait).
// A job fetched ahead waits for a thread here (ThreadSlots), not in the pool: its start check
// is made once it holds a thread, and its time limit starts with its tool.
// docs/queue.md — Topology (fetching ahead).
import { NativePromise } from "../contract/primordials.js";
import { FETCH_WAIT_MS } from "./start-check.js";

/** Lock tokens of finished short runs kept at most (one per slot is enough; stale ones are never handed over again). */
const TOKENS_PER_THREAD = 4;

export class FetchAhead {
  readonly #threads: number;
  readonly #setConcurrency: (concurrency: number) => void;
  #armed = false;
  /** A fetch found nothing in this turn of the event loop (cleared by the next turn). */
  #drainedThisTurn = false;
  /** Tokens of jobs that finished after a short run, oldest first: their completion may hand over the next job. */
  readonly #handing = new Set<string>();

  /** `setConcurrency` sets the BullMQ Worker's concurrency (its runtime setter). */
  constructor(threads: number, setConcurrency: (concurrency: number) => void) {
    this.#threads = threads;
    this.#setConcurrency = setConcurrency;
  }

  get armed(): boolean {
    return this.#armed;
  }

  /** A fetch brought a job with this lock token (BullMQ's "active"): a finished short run's token means its completion brought it. */
  arrived(token: string | undefined): void {
    if (token === undefined || !this.#handing.delete(token) || this.#drainedThisTurn) return;
    this.#set(true);
  }

  /** The job with this token ran `ms` (from taking its thread to its answer). */
  finished(token: string | undefined, ms: number): void {
    if (ms >= FETCH_WAIT_MS) {
      this.#set(false);
      return;
    }
    if (token === undefined) return;
    this.#handing.add(token);
    if (this.#handing.size > TOKENS_PER_THREAD * this.#threads) {
      for (const oldest of this.#handing) {
        this.#handing.delete(oldest);
        break;
      }
    }
  }

  /** A fetch found the wait list empty. */
  drained(): void {
    this.#set(false);
    if (this.#drainedThisTurn) return;
    this.#drainedThisTurn = true;
    setImmediate(() => {
      this.#drainedThisTurn = false;
    });
  }

  #set(armed: boolean): void {
    if (armed === this.#armed) return;
    this.#armed = armed;
    this.#setConcurrency(armed ? 2 * this.#threads : this.#threads);
  }
}

/** The host's threads as slots: a job takes one before its start check and gives it back with its answer (FIFO). */
export class ThreadSlots {
  #free: number;
  readonly #waiting = new Set<() => void>();

  constructor(threads: number) {
    this.#free = threads;
  }

  /**
   * True once a slot is this job's; false when `signal` aborts first (the job is answered without
   * a thread). The answer itself when it is known now (a slot free, or the signal aborted): the
   * common case makes no promise and costs the job no turn of the microtask queue.
   */
  take(signal: AbortSignal): boolean | Promise<boolean> {
    if (signal.aborted) return false;
    if (this.#free > 0) {
      this.#free -= 1;
      return true;
    }
    return new NativePromise((resolve) => {
      const granted = (): void => {
        signal.removeEventListener("abort", aborted);
        resolve(true);
      };
      const aborted = (): void => {
        this.#waiting.delete(granted);
        resolve(false);
      };
      this.#waiting.add(granted);
      signal.addEventListener("abort", aborted, { once: true });
    });
  }

  give(): void {
    for (const next of this.#waiting) {
      this.#waiting.delete(next);
      next();
      return;
    }
    this.#free += 1;
  }
}
