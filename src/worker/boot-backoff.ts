// Threads that cannot boot: a worker thread that exits before it reported its tool modules
// loaded (process.exit at a module's top level or in setup(), out of memory under
// resourceLimits, ...) would fail the same way on a new thread. Piscina would start one
// again at once (and again, ...), and the calls waiting for it would wait forever. So after
// each such exit the pool starts no thread for a while, growing with each exit in a row and
// bounded, and every call in that time fails at once, saying why. No timer: the next call
// after the wait starts a thread (the probe); a thread that loads ends the episode. An idle
// pool whose module cannot boot so costs nothing.
// docs/worker.md: tool modules that fail only inside a worker.
import { PerformanceNow } from "../contract/primordials.js";

/** The wait after the first exit in a row; it doubles with each further one. */
export const BOOT_RETRY_FIRST_MS = 100;
/** The longest wait between two threads that cannot boot. */
export const BOOT_RETRY_MAX_MS = 5000;

export class BootBackoff {
  /** Threads in a row that exited before they had loaded their modules. */
  #failures = 0;
  /** Why the last of them could not boot. */
  #reason = "";
  #waitMs = 0;
  /** No thread is started before this time (PerformanceNow). */
  #until = 0;

  /** A thread exited before it reported its modules loaded: wait longer before the next. */
  failed(reason: string): void {
    this.#failures += 1;
    this.#reason = reason;
    this.#waitMs = Math.min(BOOT_RETRY_FIRST_MS * 2 ** Math.min(this.#failures - 1, 30), BOOT_RETRY_MAX_MS);
    this.#until = PerformanceNow() + this.#waitMs;
  }

  /** A thread loaded its modules: threads boot again. */
  loaded(): void {
    this.#failures = 0;
  }

  /** Why the last thread that could not boot did not. */
  get reason(): string {
    return this.#reason;
  }

  /** Whether a thread has failed to boot since the last one that loaded. */
  get failing(): boolean {
    return this.#failures !== 0;
  }

  /** While no thread may be started: why (the text a call gets); otherwise undefined. */
  refusal(): string | undefined {
    if (this.#failures === 0 || PerformanceNow() >= this.#until) return undefined;
    const times = this.#failures === 1 ? "" : ` (${this.#failures} threads in a row)`;
    return `no worker thread can load the tool modules: ${this.#reason}${times}; the pool starts no new thread for ${this.#waitMs} ms`;
  }
}
