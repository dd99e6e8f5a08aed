// The host's last look before a job's tool starts. BullMQ hands the host a job the moment it
// takes it (a host takes only as many jobs as it has threads, so never ahead of a thread), and
// the job may still have waited in a stalled connection (a fetch answered late, after a partition). Meanwhile
// its agent may have given up on the call, and the cancel message that says so may be lost
// with a connection. So a job that waited is confirmed against Redis right before it starts,
// with one MGET (one command, one round trip): no cancel mark, the lock still this host's, and
// its agent's lease fresh. A job that did not wait starts at once while its agent's lease is
// known fresh from an earlier look (no round trip on the common path); otherwise it is
// confirmed too. A lease says when the agent renewed it and when it runs out, on the server's
// clock; the host reads that clock (TIME) once per connection, with the first confirmation. A confirmation that
// took FETCH_WAIT_MS or more to come back is itself stale (the link may have stalled after the
// read) and is made again (up to STALE_READS times): so a job starts at most FETCH_WAIT_MS after
// Redis last said it was still wanted, and never later than that after its cancel reached Redis.
//
// The lease must also have been renewed after this host last (re)connected: an agent writes
// the cancels of the calls it gave up while Redis was out of its reach before it renews its
// lease, so a lease renewed after the outage, which this host could not see either, means
// every such cancel is in Redis. Until the agent renews it (every second at most while it
// has calls in flight), the job waits here; a lease that expires first never lets it start.
// A host that cannot confirm (no answer within CONFIRM_TIMEOUT_MS, its reads tried again while
// a connection is made again) does not start the job.
// docs/queue.md — Guarantees (never started once given up), Failure scenarios (partitions, outages).
import type { Redis } from "ioredis";
import { NativePromise, PerformanceNow } from "../contract/primordials.js";
import { agentIdOfChecked, type QueueKeys } from "./keys.js";
import type { NotStartedReason } from "./protocol.js";
import { decodeServerTime, decodeStartReading, type StartReading } from "./redis-data.js";

/**
 * A job whose fetch was sent longer ago than this has waited (in a connection), and a confirmation that took this long is out of date: a job starts at most this long
 * after Redis last said it was still wanted.
 */
export const FETCH_WAIT_MS = 500;
/** Confirmations out of date in a row before the host gives up starting the job (a link this slow cannot confirm anything). */
const STALE_READS = 3;
/** How long a host waits for Redis to confirm a job before it gives up starting it. */
const CONFIRM_TIMEOUT_MS = 5000;
/** How often a job looks again: for a lease renewed since this host connected, or for an answer at all. */
const RETRY_MS = 100;
/** Lease knowledge expires this much before the lease itself, beyond the uncertainty of the server's clock. */
const LEASE_MARGIN_MS = 50;

/** One job as the check needs it. */
export interface JobToStart {
  /** The job id, checked by `readJobId`. */
  readonly id: string;
  /** The lock token BullMQ took it with. */
  readonly token: string | undefined;
  /** It waited: its fetch was answered FETCH_WAIT_MS or more after it was sent. */
  readonly waited: boolean;
  /** Aborted when a cancel message for the job arrives while it waits here. */
  readonly signal: AbortSignal;
}

/** The server's clock as this host read it after it (re)connected. */
interface ServerClock {
  /** When this host's connections were last made, on the server's clock (at the latest): a lease must be renewed at or after it. */
  readonly connectedAt: number;
  /** Server time minus this process's PerformanceNow(), and how uncertain that is (half the read's round trip). */
  readonly offset: number;
  readonly uncertainty: number;
}

export class StartCheck {
  readonly #client: Redis;
  readonly #keys: QueueKeys;
  /** When this host's connections were last made (again), on this clock. */
  #connectedAt = PerformanceNow();
  /** Unknown until the first confirmation after this host's connections were (re)made. */
  #clock: ServerClock | undefined;
  /** Agent id → until when (this clock) its lease is known fresh and renewed after the clock's connectedAt. */
  readonly #fresh = new Map<string, number>();
  /** The agent of the last job checked: the next job is most often its too (keys.ts agentIdOfChecked). */
  #lastAgent: string | undefined;

  constructor(client: Redis, keys: QueueKeys) {
    this.#client = client;
    this.#keys = keys;
  }

  /** A connection of this host was made again: what it knew of leases and of the server's clock is from before. */
  reconnected(): void {
    this.#connectedAt = PerformanceNow();
    this.#clock = undefined;
    this.#fresh.clear();
  }

  /**
   * Undefined when the job may start now; else why it must not. Answered at once, without a
   * promise, when no reading is needed (the common path: a job that did not wait, of an agent
   * whose lease is known fresh); a promise of the answer when Redis must confirm the job.
   */
  check(job: JobToStart): NotStartedReason | undefined | Promise<NotStartedReason | undefined> {
    const agentId = agentIdOfChecked(job.id, this.#lastAgent);
    if (agentId === undefined) return "no-agent";
    this.#lastAgent = agentId;
    if (job.signal.aborted) return "cancelled";
    if (!job.waited && (this.#fresh.get(agentId) ?? 0) > PerformanceNow()) return undefined;
    return this.#confirm(job, agentId);
  }

  /** The job confirmed against Redis: read (again) until it may start, or why it must not. */
  async #confirm(job: JobToStart, agentId: string): Promise<NotStartedReason | undefined> {
    const giveUpAt = PerformanceNow() + CONFIRM_TIMEOUT_MS;
    let stale = 0;
    for (;;) {
      const sentAt = PerformanceNow();
      const reading = await this.#read(job, agentId, giveUpAt - sentAt);
      const clock = this.#clock;
      if (reading === undefined || clock === undefined) {
        // No answer (a connection being made again): tried again until the host gives up.
        if (PerformanceNow() >= giveUpAt) return "unconfirmed";
        await sleep(RETRY_MS);
        continue;
      }
      if (reading.marked || job.signal.aborted) return "cancelled";
      if (reading.lock !== job.token) return "lock-lost";
      const lease = reading.lease;
      const serverNow = PerformanceNow() + clock.offset;
      if (lease === undefined || lease.expiresAt <= serverNow - clock.uncertainty) return "lease-expired";
      // Came back late: what it read may be out of date by now (read again, at once).
      if (PerformanceNow() - sentAt >= FETCH_WAIT_MS) {
        stale += 1;
        if (stale === STALE_READS) return "unconfirmed";
        continue;
      }
      // Renewed after this host connected: every cancel the agent could not write before is in Redis.
      if (lease.renewedAt >= clock.connectedAt) {
        this.#fresh.set(agentId, lease.expiresAt - clock.offset - clock.uncertainty - LEASE_MARGIN_MS);
        return undefined;
      }
      await sleep(RETRY_MS);
    }
  }

  /** One reading of the job's mark, lock and lease (with the server's clock first, when unknown); undefined when Redis does not answer within `ms`. */
  async #read(job: JobToStart, agentId: string, ms: number): Promise<StartReading | undefined> {
    const keys = [this.#keys.mark(job.id), this.#keys.lock(job.id), this.#keys.lease(agentId)];
    if (this.#clock !== undefined) return decodeStartReading(await settleWithin(this.#client.mget(keys), ms));
    const sentAt = PerformanceNow();
    const replies = await settleWithin(this.#client.pipeline().time().mget(keys).exec(), ms);
    const receivedAt = PerformanceNow();
    const [time, values] = Array.isArray(replies) ? (replies as [unknown, unknown][]) : [];
    const serverNow = decodeServerTime(time?.[0] === null ? time[1] : undefined);
    if (serverNow === undefined || values?.[0] !== null) return undefined;
    // The server read its clock somewhere within the round trip: its middle, give or take half of it.
    const uncertainty = (receivedAt - sentAt) / 2;
    const offset = serverNow - (sentAt + uncertainty);
    this.#clock = { connectedAt: this.#connectedAt + offset + uncertainty, offset, uncertainty };
    return decodeStartReading(values[1]);
  }
}

function sleep(ms: number): Promise<void> {
  return new NativePromise((resolve) => setTimeout(resolve, ms));
}

/** `pending`'s value, or undefined when it fails or takes longer than `ms`. */
function settleWithin(pending: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  return NativePromise.race([
    pending.catch(() => undefined),
    new NativePromise((resolve) => {
      timer = setTimeout(() => resolve(undefined), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
