// The agent's writes that stop jobs, and its lease, kept in the order hosts rely on. A cancel
// goes out at once (after its job's add has answered: a cancel that overtook the add would find
// nothing to remove); one Redis did not take is kept and written again, first, with the next
// renewal of the lease. The lease is renewed only when no cancel is on its way (waiting for its
// job's add, or sent and not answered), and always in the same script as every cancel not yet
// written: so a lease renewed at time T
// means every call given up before T has its mark in Redis (start-check.ts reads both). It is
// renewed every RENEW_EVERY_MS while calls are in flight, at once when the control connection
// is made again, and before a new call's job is added when the last renewal is older than half
// the lease (a host starts a job only on a fresh lease). The lease lasts `leaseMs` (the agent's
// redisLostMs): a call given up because Redis did not answer that long is given up after the
// lease expired, so its job never starts afterwards.
// docs/queue.md — Guarantees (never started once given up; the window an outage leaves).
import type { Redis } from "ioredis";
import { NativePromise, PerformanceNow } from "../contract/primordials.js";
import { type CancelOrder, cancelAndRenew } from "./cancel.js";
import type { QueueKeys } from "./keys.js";
import type { CancelReason } from "./protocol.js";

/** Renewals while calls are in flight: at least four per lease, at most one a second. */
const MAX_RENEW_EVERY_MS = 1000;
const MIN_RENEW_EVERY_MS = 20;

/** What the agent's lease is made of, and whom it tells what. */
export interface AgentLeaseSettings {
  /** The agent's control client (no offline queue: a write fails at once when Redis is away). */
  readonly client: Redis;
  readonly keys: QueueKeys;
  readonly agentId: string;
  /** How long the lease lasts after each renewal (the agent's redisLostMs). */
  readonly leaseMs: number;
  /** Redis answered a write (the heartbeat's measure of Redis's silence). */
  readonly answered: () => void;
  /** A cancel Redis did not take waits for the next renewal: the renewals must go on. */
  readonly stranded: () => void;
}

export class AgentLease {
  readonly #client: Redis;
  readonly #keys: QueueKeys;
  readonly #agentId: string;
  readonly #leaseMs: number;
  readonly #renewEveryMs: number;
  readonly #answered: () => void;
  readonly #stranded: () => void;
  /** Cancels Redis did not take: written again, first, with the next renewal. */
  readonly #unsent = new Map<string, CancelReason>();
  /** Cancels on their way (waiting for their job's add, or sent and not answered): no renewal meanwhile. */
  #onTheirWay = 0;
  readonly #inFlight = new Set<Promise<unknown>>();
  /** When the last renewal Redis took was sent (this clock); -Infinity before the first. */
  #renewedAt = Number.NEGATIVE_INFINITY;
  #renewing: Promise<boolean> | undefined;
  /** Calls whose job waits for a fresh lease before it is added. */
  readonly #waiters: (() => void)[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(settings: AgentLeaseSettings) {
    const { client, leaseMs } = settings;
    this.#client = client;
    this.#keys = settings.keys;
    this.#agentId = settings.agentId;
    this.#leaseMs = leaseMs;
    this.#renewEveryMs = Math.min(MAX_RENEW_EVERY_MS, Math.max(MIN_RENEW_EVERY_MS, Math.floor(leaseMs / 4)));
    this.#answered = settings.answered;
    this.#stranded = settings.stranded;
    // The connection was made again (Redis restarted, a partition healed): the cancels it could not take go first.
    client.on("ready", () => {
      if (this.#timer !== undefined || this.#unsent.size > 0) void this.#renew();
    });
  }

  /** Cancels not yet written (Redis did not take them). */
  get unsent(): number {
    return this.#unsent.size;
  }

  /** Renews while calls are in flight (the executor starts and stops it with its heartbeat). */
  start(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => {
      if (PerformanceNow() - this.#renewedAt >= this.#renewEveryMs || this.#unsent.size > 0) void this.#renew();
    }, this.#renewEveryMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** The lease is fresh for a new job now: renewed within half of it, and no cancel waits to be written before it. */
  isFresh(): boolean {
    return PerformanceNow() - this.#renewedAt < this.#leaseMs / 2 && this.#unsent.size === 0;
  }

  /** Resolves once the lease is fresh for a new job: at once when it is (isFresh), else after a renewal. */
  fresh(): Promise<void> {
    if (this.isFresh()) return NativePromise.resolve();
    const ready = new NativePromise<void>((resolve) => this.#waiters.push(resolve));
    void this.#renew();
    return ready;
  }

  /** Stops `jobId`'s job: now, or once its add (`adding`) has answered; kept for later when Redis does not take it. */
  cancel(jobId: string, reason: CancelReason, adding: Promise<unknown> | undefined): void {
    const send = (): Promise<unknown> => cancelAndRenew(this.#client, this.#keys, [{ jobId, reason }], undefined);
    this.#onTheirWay += 1;
    const sending = (adding === undefined ? send() : adding.then(send, send))
      .then(
        () => this.#answered(),
        () => {
          this.#unsent.set(jobId, reason);
          this.#stranded();
        },
      )
      .finally(() => {
        this.#onTheirWay -= 1;
      });
    this.#track(sending);
  }

  /** Writes the cancels not yet written (and renews the lease with them): at close(). */
  flush(): void {
    if (this.#unsent.size > 0) void this.#renew();
  }

  /** Resolves once every write sent so far has settled. */
  async settled(): Promise<void> {
    await NativePromise.allSettled([...this.#inFlight]);
  }

  /** One renewal at a time, never while a cancel is on its way; true when Redis took it. */
  #renew(): Promise<boolean> {
    if (this.#renewing !== undefined) return this.#renewing;
    if (this.#onTheirWay > 0) return NativePromise.resolve(false); // the next tick tries again
    const cancels: CancelOrder[] = [];
    for (const [jobId, reason] of this.#unsent) cancels.push({ jobId, reason });
    const sentAt = PerformanceNow();
    const renewing = cancelAndRenew(this.#client, this.#keys, cancels, { agentId: this.#agentId, ms: this.#leaseMs }).then(
      () => {
        for (const { jobId } of cancels) this.#unsent.delete(jobId);
        this.#renewedAt = sentAt;
        this.#answered();
        for (const wake of this.#waiters.splice(0)) wake();
        return true;
      },
      () => false,
    );
    this.#renewing = renewing.finally(() => {
      this.#renewing = undefined;
    });
    this.#track(this.#renewing);
    return this.#renewing;
  }

  #track(pending: Promise<unknown>): void {
    this.#inFlight.add(pending);
    void pending.finally(() => this.#inFlight.delete(pending));
  }
}
