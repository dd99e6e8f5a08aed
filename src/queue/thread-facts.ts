// Thread facts across machines. The host's own executor tells its hooks which thread ran a call,
// how long the call waited for it and ran, and whether the thread was terminated; the host
// attaches these to the job's result, and a thread terminated after the host answered (an
// abort's or timeout's grace period ran out: the agent's stop, the host's own time limit, or
// the host's close()) is announced as an event on the queue's stream, so the agent's
// `onThreadKilled` hears of it, as the pool's does. A result the host answered by stopping the
// call itself says so (`stopped`): the agent remembers that job for its late kill too.
// docs/queue.md — Attachments, progress and thread facts across machines.
import type { Redis } from "ioredis";
import { ToolErrorCode } from "../contract/constants.js";
import { PerformanceNow } from "../contract/primordials.js";
import type { CallEndEvent, RunFacts, ThreadKilledEvent, ToolExecutorHooks } from "../executor/hooks.js";
import type { QueueKeys } from "./keys.js";
import type { QueueJobFacts } from "./protocol.js";

/** The event a host adds to `bull:<queue>:events` when it terminated the thread of a job it had answered. */
export const THREAD_KILLED_EVENT = "toolgate-thread-killed";
/** The stream's approximate bound, as BullMQ keeps it (its default `maxLenEvents`). */
const EVENTS_MAX_LENGTH = 10_000;
/** How long a host remembers a finished job's call id for a late kill, and an agent a stopped job. */
export const LATE_KILL_MEMORY_MS = 10 * 60 * 1000;
/** At most this many remembered jobs on either side: the oldest is forgotten first. */
export const LATE_KILL_MEMORY_ENTRIES = 10_000;

interface RunningJob {
  readonly jobId: string;
  facts: QueueJobFacts | undefined;
}

/**
 * The host's record of its jobs' calls, fed by its executor's hooks. The hooks name a call
 * by its id: while two running jobs carry the same call id, neither gets facts (they could
 * not be told apart), and a late kill of either is not announced.
 */
export class HostFactsBook {
  /** Call id → its running job (null while several share the id), and how many run. */
  readonly #running = new Map<string, { job: RunningJob | null; count: number }>();
  /**
   * Call id → job id of jobs answered recently (null: ambiguous) and when, for a late kill;
   * oldest first, forgotten as later answers come (no timer per job).
   */
  readonly #answered = new LateKillMemory<{ readonly jobId: string | null; readonly at: number }>();
  readonly #announce: (jobId: string) => void;

  constructor(announce: (jobId: string) => void) {
    this.#announce = announce;
  }

  readonly hooks: ToolExecutorHooks = {
    onCallEnd: (event: CallEndEvent) => {
      const job = this.#running.get(event.toolCallId)?.job;
      if (job === undefined || job === null) return;
      // Stopped here (the host's time limit, or its close() aborting the call): the thread may be terminated after the answer.
      const stopped = event.outcome === "aborted" || event.code === ToolErrorCode.EXECUTION_TIMEOUT;
      job.facts = {
        waitMs: event.queueWaitMs,
        runMs: event.runMs,
        killed: event.threadKilled,
        ...(event.threadId === undefined ? {} : { threadId: event.threadId }),
        ...(stopped ? { stopped: true } : {}),
      };
    },
    onThreadKilled: (event: ThreadKilledEvent) => {
      const answered = this.#answered.get(event.toolCallId);
      if (answered === undefined || answered.jobId === null || PerformanceNow() - answered.at > LATE_KILL_MEMORY_MS) return;
      this.#announce(answered.jobId);
    },
  };

  /** A job's call starts on this host. */
  begin(jobId: string, callId: string): RunningJob {
    const job: RunningJob = { jobId, facts: undefined };
    const entry = this.#running.get(callId);
    if (entry === undefined) this.#running.set(callId, { job, count: 1 });
    else {
      entry.job = null;
      entry.count += 1;
    }
    return job;
  }

  /**
   * The job's call never started here (a durable record refused it): forgotten, not remembered
   * for a late kill. Left counted, its call id would read "shared by several jobs" from then on,
   * and a later job of that id would answer without its facts.
   */
  abandon(callId: string): void {
    const entry = this.#running.get(callId);
    if (entry !== undefined && --entry.count === 0) this.#running.delete(callId);
  }

  /** The job's call settled on this host: its facts (if its hooks told them), remembered for a late kill. */
  end(job: RunningJob, callId: string): QueueJobFacts | undefined {
    // No longer running, as an abandoned call; unlike one, remembered below.
    this.abandon(callId);
    const now = PerformanceNow();
    const earlier = this.#answered.get(callId);
    // The newest now: another job of this call id answered within the memory makes it ambiguous.
    const ambiguous = earlier !== undefined && now - earlier.at <= LATE_KILL_MEMORY_MS;
    this.#answered.set(callId, { jobId: ambiguous ? null : job.jobId, at: now }, now);
    return job.facts;
  }
}

/**
 * Entries by key, forgotten oldest first (an entry set again is the newest) while there are more
 * than LATE_KILL_MEMORY_ENTRIES or the oldest is older than LATE_KILL_MEMORY_MS: each step O(1).
 * The age order is a list of its own: a Map's own order is no queue in V8, whose iterators
 * start at the front and step over every entry deleted there until the table is rebuilt
 * (about 10 µs a step at 10,000 entries).
 */
export class LateKillMemory<Entry extends { readonly at: number }> {
  readonly #byKey = new Map<string, Entry>();
  /** Keys and their entries, oldest first, in pairs from #head on; a pair whose entry is no longer its key's is skipped. */
  #order: (string | Entry | undefined)[] = [];
  #head = 0;

  get(key: string): Entry | undefined {
    return this.#byKey.get(key);
  }

  delete(key: string): void {
    this.#byKey.delete(key);
  }

  /** Remembers `entry` as the newest, then forgets what is beyond the bound or stale at `now`. */
  set(key: string, entry: Entry, now: number): void {
    this.#byKey.delete(key);
    this.#byKey.set(key, entry);
    this.#order.push(key, entry);
    while (this.#head < this.#order.length) {
      const oldestKey = this.#order[this.#head] as string;
      const oldest = this.#order[this.#head + 1] as Entry;
      const current = this.#byKey.get(oldestKey) === oldest;
      if (current && this.#byKey.size <= LATE_KILL_MEMORY_ENTRIES && now - oldest.at <= LATE_KILL_MEMORY_MS) break;
      if (current) this.#byKey.delete(oldestKey);
      this.#order[this.#head] = undefined;
      this.#order[this.#head + 1] = undefined;
      this.#head += 2;
    }
    if (this.#head >= ORDER_COMPACT_AT && 2 * this.#head >= this.#order.length) {
      this.#order = this.#order.slice(this.#head);
      this.#head = 0;
    } else if (this.#order.length - this.#head > 4 * this.#byKey.size + ORDER_COMPACT_AT) {
      // Pairs set again behind a fresh oldest entry: the list again from the map (whose order is the same, an entry set again moved to its end).
      this.#order = [];
      for (const [key, value] of this.#byKey) this.#order.push(key, value);
      this.#head = 0;
    }
  }
}

/** The age order's list is cut down once this much of it is spent. */
const ORDER_COMPACT_AT = 2048;

/** Adds the late-kill event of `jobId` to the queue's event stream (Redis errors drop it: telemetry only). */
export function announceThreadKilled(client: Redis, keys: QueueKeys, jobId: string): void {
  client.xadd(keys.events, "MAXLEN", "~", EVENTS_MAX_LENGTH, "*", "event", THREAD_KILLED_EVENT, "jobId", jobId).catch(() => {});
}

/**
 * The agent's memory of jobs it stopped (abort, timeout, gave up): their host may still
 * terminate the thread, and the event of that kill reaches the call's `record` (the
 * pipeline's `onThreadKilled`). Bounded in time and size; an event for any other job is dropped.
 */
export class StoppedJobs {
  readonly #records = new LateKillMemory<{ readonly record: (facts: RunFacts) => void; readonly at: number }>();

  remember(jobId: string, record: (facts: RunFacts) => void): void {
    const now = PerformanceNow();
    this.#records.set(jobId, { record, at: now }, now);
  }

  killed(jobId: unknown): void {
    if (typeof jobId !== "string") return;
    const entry = this.#records.get(jobId);
    if (entry === undefined) return;
    this.#records.delete(jobId);
    if (PerformanceNow() - entry.at <= LATE_KILL_MEMORY_MS) entry.record(THREAD_KILLED);
  }
}

const THREAD_KILLED: RunFacts = Object.freeze({ threadKilled: true });
