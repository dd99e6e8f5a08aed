// The host's fetch watchdog: a host that stops taking jobs while it believes itself connected
// (BullMQ #3088, #4378: after a Sentinel failover or a silent partition, a connection stays
// "ready" while the commands sent on it are never answered, and the worker waits forever).
// Nothing in ioredis or BullMQ says so: a black-holed TCP connection is noticed by the kernel
// only after many minutes. So the host looks for itself: while it has a free thread and has
// taken no job lately, it reads the length of its queue's wait list on its control connection
// (one LLEN on a timer, never per call: a host that keeps taking jobs never sends it). Jobs
// waiting, a thread free, and no job taken for `fetchStallMs`: the host is stuck. A check
// Redis does not answer within `fetchStallMs` while the connection says "ready": it is cut
// off. Either way it says so (/readyz answers 503 with the reason, a counter counts it, the
// host's onError is told) and recovers by itself: it drops the connections concerned, which
// ioredis makes again (through the sentinels: to the current primary) and on which it sends
// again the commands that were never answered (BullMQ's fetch among them). It is ready again
// once it takes a job, or finds its queue's wait list empty.
// docs/queue.md — Watching a host (metrics and health); docs/operations.md — Running Redis for toolgate (Sentinel).
import type { Redis } from "ioredis";
import { PerformanceNow } from "../contract/primordials.js";

/** What the watchdog watches, and whom it tells. */
export interface FetchWatchdogSettings {
  /** The host's control client (no offline queue: a check fails at once while it is not connected). */
  readonly client: Redis;
  /** The queue's wait list (BullMQ's `<prefix>:<queue>:wait`). */
  readonly waitKey: string;
  /** No job taken this long while jobs wait and a thread is free, or no answer to a check this long: stuck. */
  readonly stallMs: number;
  /** Threads of the host not running a job now. */
  readonly freeThreads: () => number;
  /**
   * The host found itself stuck: `reason` in words; `cutOff` when Redis did not answer its check
   * (every connection of the host is suspect), else the connections that fetch jobs are.
   */
  readonly stalled: (reason: string, cutOff: boolean) => void;
}

/** Checks at least this often (and at most every stallMs / 4): a stall is seen within stallMs + this. */
const MAX_CHECK_EVERY_MS = 5000;
/** ioredis's rejection of a command its `commandTimeout` gave up on. */
const COMMAND_TIMED_OUT = "Command timed out";

export class FetchWatchdog {
  readonly #settings: FetchWatchdogSettings;
  readonly #checkEveryMs: number;
  /** When this host last took a job (this clock); its start counts as one. */
  #lastTakenAt = PerformanceNow();
  /** Since when every check found jobs waiting with a thread free and none taken (undefined: not so at the last check). */
  #suspectSince: number | undefined;
  /** Why the host is stuck, until it takes a job or finds nothing waiting. */
  #problem: string | undefined;
  #checking = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(settings: FetchWatchdogSettings) {
    this.#settings = settings;
    this.#checkEveryMs = Math.min(MAX_CHECK_EVERY_MS, Math.floor(settings.stallMs / 4));
  }

  /** Why the host is stuck now, or undefined. */
  get problem(): string | undefined {
    return this.#problem;
  }

  start(): void {
    if (this.#timer !== undefined) return;
    this.#lastTakenAt = PerformanceNow();
    this.#timer = setInterval(() => void this.#check(), this.#checkEveryMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** The host took a job: it fetches. */
  taken(): void {
    this.#lastTakenAt = PerformanceNow();
    this.#suspectSince = undefined;
    this.#problem = undefined;
  }

  async #check(): Promise<void> {
    if (this.#checking) return;
    const { client, stallMs } = this.#settings;
    const now = PerformanceNow();
    // No thread free, or a job taken lately: nothing to fetch, or it fetches; no command sent.
    if (this.#settings.freeThreads() <= 0 || now - this.#lastTakenAt < this.#checkEveryMs) {
      this.#suspectSince = undefined;
      return;
    }
    this.#checking = true;
    let timer: NodeJS.Timeout | undefined;
    try {
      const length = client.llen(this.#settings.waitKey);
      const answer = await Promise.race([
        length.then(
          (count) => ({ count }),
          // The client's own commandTimeout (the host's lockDurationMs) said what this timer says.
          (error: unknown) => (error instanceof Error && error.message === COMMAND_TIMED_OUT ? "silent" : undefined),
        ),
        new Promise<"silent">((resolve) => {
          timer = setTimeout(() => resolve("silent"), stallMs);
        }),
      ]);
      if (this.#timer === undefined) return; // stopped meanwhile
      if (answer === "silent") {
        // The connection says it is up (a check on one that is not fails at once, above): it is cut off.
        this.#stall(`Redis did not answer the host's check of its queue within ${stallMs} ms while its connection was up`, true);
        return;
      }
      // A failed check: the connection is being made again (readiness says so meanwhile); the next check judges.
      if (answer === undefined) return;
      if (answer.count === 0 || this.#settings.freeThreads() <= 0) {
        this.#suspectSince = undefined;
        this.#problem = undefined;
        return;
      }
      const since = Math.max(this.#suspectSince ?? now, this.#lastTakenAt);
      this.#suspectSince = since;
      const idleMs = PerformanceNow() - since;
      if (idleMs >= stallMs) {
        this.#stall(
          `${answer.count} job(s) wait in the queue and this host, with a thread free, took none for ${Math.round(idleMs)} ms`,
          false,
        );
      }
    } finally {
      clearTimeout(timer);
      this.#checking = false;
    }
  }

  /** Says so, and starts counting again: the next recovery comes no sooner than stallMs later. */
  #stall(reason: string, cutOff: boolean): void {
    this.#problem = reason;
    this.#suspectSince = PerformanceNow();
    this.#settings.stalled(reason, cutOff);
  }
}
