// memoryDurableStore: durable records in this process's memory, bounded in count and kept for
// the retention. For one process: a LangGraph resume or a retry in the same process, and tests.
// The steps are the Redis scripts' (redis-store.ts), written for a Map: each runs to its end
// without yielding, so it is as atomic as a script.
// docs/durable.md — memoryDurableStore.
import {
  MapPrototypeDelete,
  MapPrototypeGet,
  MapPrototypeGetSize,
  MapPrototypeSet,
  mapEntryStepper,
  PerformanceNow,
  PromiseResolve,
} from "../contract/primordials.js";
import { integerOr, readOptions } from "../contract/validators.js";
import { type ClaimOrder, type DurableBackend, DurableStoreFullError, type RawClaim, type RawRecord, type Renewal } from "./backend.js";
import { DEFAULT_LEASE_MS, readMaxAttachmentBytes, readRetentionMs } from "./options.js";
import { DurableEngine, type DurableStore, storeOf } from "./store.js";

/** Options of `memoryDurableStore`. */
export interface MemoryDurableStoreOptions {
  /** Records kept at most (1 to 1,000,000; default 10,000): past it, the oldest finished record goes first. */
  readonly maxRecords?: number;
  /** How long a record is kept after its last write, in ms (1 minute to 30 days; default 24 hours). */
  readonly retentionMs?: number;
  /** Attachment bytes a stored outcome may keep (default 8 MiB, at most 64 MiB): a larger result is recorded as a clear error. */
  readonly maxAttachmentBytes?: number;
}

const MEMORY_OPTION_KEYS = ["maxRecords", "retentionMs", "maxAttachmentBytes"] as const;

/** A record, as Redis keeps it: its fields, and when it expires. */
interface Entry {
  state: string;
  fingerprint: string;
  toolName: string;
  attempt: number;
  maxAttempts: number;
  token: string | undefined;
  leaseUntil: number;
  cancel: boolean;
  outcome: string | undefined;
  expiresAt: number;
}

class MemoryBackend implements DurableBackend {
  readonly #records = new Map<string, Entry>();
  readonly #maxRecords: number;
  readonly #retentionMs: number;
  readonly pollMs = 1000; // every write is this process's, and wakes its waiters: polling only notices an expired lease
  readonly leaseMs = DEFAULT_LEASE_MS;
  readonly maxAttachmentBytes: number;

  constructor(maxRecords: number, retentionMs: number, maxAttachmentBytes: number) {
    this.#maxRecords = maxRecords;
    this.#retentionMs = retentionMs;
    this.maxAttachmentBytes = maxAttachmentBytes;
  }

  /** The live entry of `key` (an expired one is gone), with an expired lease made lost. */
  #entry(key: string, now: number): Entry | undefined {
    const entry = MapPrototypeGet(this.#records, key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= now) {
      MapPrototypeDelete(this.#records, key);
      return undefined;
    }
    return entry;
  }

  #touch(key: string, entry: Entry, now: number): void {
    entry.expiresAt = now + this.#retentionMs;
    // Re-inserted: the Map's order is the order of last writes, oldest first.
    MapPrototypeDelete(this.#records, key);
    MapPrototypeSet(this.#records, key, entry);
  }

  claim(order: ClaimOrder): Promise<RawClaim> {
    const now = PerformanceNow();
    const entry = this.#entry(order.key, now);
    if (entry === undefined) return PromiseResolve(this.#claim(order, 1, order.maxAttempts, now));
    if (entry.fingerprint !== order.fingerprint) return PromiseResolve({ claimed: false, record: raw(entry) });
    expireLease(entry, now);
    if (entry.state === "released") return PromiseResolve(this.#claim(order, entry.attempt, order.maxAttempts, now));
    if (entry.state === "lost" && entry.attempt < entry.maxAttempts) {
      return PromiseResolve(this.#claim(order, entry.attempt + 1, entry.maxAttempts, now));
    }
    return PromiseResolve({ claimed: false, record: raw(entry) });
  }

  #claim(order: ClaimOrder, attempt: number, maxAttempts: number, now: number): RawClaim {
    if (MapPrototypeGet(this.#records, order.key) === undefined) this.#makeRoom(now);
    const entry: Entry = {
      state: order.state,
      fingerprint: order.fingerprint,
      toolName: order.toolName,
      attempt,
      maxAttempts,
      token: order.token,
      leaseUntil: now + this.leaseMs,
      cancel: false,
      outcome: undefined,
      expiresAt: 0,
    };
    this.#touch(order.key, entry, now);
    return { claimed: true, token: order.token, attempt };
  }

  /** One slot for a new record: the expired go, then the oldest finished one; all running → the claim fails. */
  #makeRoom(now: number): void {
    if (MapPrototypeGetSize(this.#records) < this.#maxRecords) return;
    let oldestFinished: string | undefined;
    const next = mapEntryStepper(this.#records);
    for (let step = next(); step.done !== true; step = next()) {
      const [key, entry] = step.value;
      if (entry.expiresAt <= now) {
        MapPrototypeDelete(this.#records, key);
        return;
      }
      if (oldestFinished === undefined && !isHeld(entry)) oldestFinished = key;
    }
    if (oldestFinished === undefined) {
      throw new DurableStoreFullError(
        `the durable store is full: it holds ${this.#maxRecords} records (maxRecords), every one still running`,
      );
    }
    MapPrototypeDelete(this.#records, oldestFinished);
  }

  read(key: string): Promise<RawRecord | undefined> {
    const now = PerformanceNow();
    const entry = this.#entry(key, now);
    if (entry === undefined) return PromiseResolve(undefined);
    expireLease(entry, now);
    return PromiseResolve(raw(entry));
  }

  renew(key: string, token: string): Promise<Renewal> {
    const now = PerformanceNow();
    const entry = this.#entry(key, now);
    if (entry === undefined || !isHeld(entry) || entry.token !== token) return PromiseResolve("gone");
    if (entry.cancel) return PromiseResolve("cancelled");
    entry.leaseUntil = now + this.leaseMs;
    this.#touch(key, entry, now);
    return PromiseResolve("held");
  }

  start(key: string, token: string): Promise<boolean> {
    const now = PerformanceNow();
    const entry = this.#entry(key, now);
    if (entry === undefined) return PromiseResolve(false);
    expireLease(entry, now);
    if (entry.state !== "claimed" || entry.token !== token || entry.cancel) return PromiseResolve(false);
    entry.state = "running";
    this.#touch(key, entry, now);
    return PromiseResolve(true);
  }

  finish(key: string, token: string, outcome: string): Promise<boolean> {
    const now = PerformanceNow();
    const entry = this.#entry(key, now);
    if (entry === undefined || !isHeld(entry) || entry.token !== token) return PromiseResolve(false);
    settle(entry, "done", outcome);
    this.#touch(key, entry, now);
    return PromiseResolve(true);
  }

  end(key: string, token: string, state: "released" | "lost" | "forgotten"): Promise<void> {
    const now = PerformanceNow();
    const entry = this.#entry(key, now);
    if (entry !== undefined && isHeld(entry) && entry.token === token) {
      if (state === "forgotten") {
        MapPrototypeDelete(this.#records, key);
        return PromiseResolve(undefined);
      }
      settle(entry, state, undefined);
      this.#touch(key, entry, now);
    }
    return PromiseResolve(undefined);
  }

  stop(key: string, attempt: number, outcome: string | undefined): Promise<void> {
    const now = PerformanceNow();
    const entry = this.#entry(key, now);
    if (entry !== undefined && isHeld(entry) && entry.attempt === attempt) {
      if (outcome === undefined) entry.cancel = true;
      else {
        settle(entry, "done", outcome);
        this.#touch(key, entry, now);
      }
    }
    return PromiseResolve(undefined);
  }

  ready(): Promise<void> {
    return PromiseResolve(undefined);
  }

  forget(key: string): Promise<boolean> {
    const had = this.#entry(key, PerformanceNow()) !== undefined;
    MapPrototypeDelete(this.#records, key);
    return PromiseResolve(had);
  }

  close(): Promise<void> {
    this.#records.clear();
    return PromiseResolve(undefined);
  }
}

/** A record whose holder stopped renewing: running, it is lost (the tool may have run); claimed, released (it never started). */
function expireLease(entry: Entry, now: number): void {
  if (isHeld(entry) && entry.leaseUntil < now) settle(entry, entry.state === "running" ? "lost" : "released", undefined);
}

function isHeld(entry: Entry): boolean {
  return entry.state === "running" || entry.state === "claimed";
}

function settle(entry: Entry, state: "done" | "lost" | "released", outcome: string | undefined): void {
  entry.state = state;
  entry.outcome = outcome;
  entry.token = undefined;
  entry.cancel = false;
}

/** The fields record.ts reads. */
function raw(entry: Entry): RawRecord {
  return [entry.state, entry.fingerprint, entry.toolName, entry.attempt, entry.maxAttempts, entry.outcome ?? null];
}

/**
 * A store in this process's memory: bounded by `maxRecords`, each record kept `retentionMs`
 * after its last write. For one process only (a restarted process starts empty): for durable
 * calls across processes and restarts, use `redisDurableStore`.
 */
export function memoryDurableStore(options: MemoryDurableStoreOptions = {}): DurableStore {
  const read = readOptions(options, "options", MEMORY_OPTION_KEYS);
  const maxRecords = integerOr(read.maxRecords, "options.maxRecords", { min: 1, max: 1_000_000, fallback: 10_000 });
  const backend = new MemoryBackend(maxRecords, readRetentionMs(read.retentionMs), readMaxAttachmentBytes(read.maxAttachmentBytes));
  return storeOf(new DurableEngine(backend));
}
