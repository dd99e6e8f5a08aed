// A durable store as toolgate holds it: the backend's atomic steps (backend.ts), with what one
// process adds on top: the claims this process holds (their lease renewals, and a stop asked by
// a caller attached in this same process, acted on at once), and the callers waiting on a key
// (woken by this process's own writes, else by polling). The public face is `DurableStore`:
// an operator reads a record or forgets it. Only stores made by toolgate/durable are accepted
// by an executor (a look-alike object is refused): the pipeline trusts their atomicity.
// docs/durable.md.
import { ContractErrorCode } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { describeValue } from "../contract/grammar.js";
import {
  ClearTimeout,
  MapPrototypeDelete,
  MapPrototypeGet,
  MapPrototypeSet,
  NativePromise,
  ObjectFreeze,
  PromiseReject,
  PromiseResolve,
  SetPrototypeAdd,
  SetPrototypeDelete,
  SetTimeout,
  WeakMapPrototypeGet,
  WeakMapPrototypeSet,
} from "../contract/primordials.js";
import { readOwnOption, validateObject, validateOptionKeys } from "../contract/validators.js";
import type { ClaimOrder, DurableBackend, RawRecord, Renewal } from "./backend.js";
import { durableKeyOf } from "./key.js";
import { type DurableRecord, type DurableState, readRecord, type StoredOutcome } from "./record.js";

/** A durable call's key as an operator names it. */
export interface DurableCallKey {
  readonly runId: string;
  readonly callId: string;
}

/** A record as an operator reads it (`store.read`). */
export interface DurableCallView {
  readonly state: DurableState;
  readonly toolName: string;
  readonly attempt: number;
  readonly maxAttempts: number;
  /** A done record's outcome: a result's content, or the message of a NonRecoverableToolError. */
  readonly outcome?:
    | { readonly fatal: false; readonly content: string; readonly isError: boolean; readonly attachmentCount: number }
    | { readonly fatal: true; readonly message: string };
}

/** An operator's hold on durable records: a store's, or a QueueToolExecutor's (`executor.durableCalls`). */
export interface DurableCallRecords {
  /** The record of (runId, callId), or undefined when there is none (never made, forgotten, or past retention). Rejects when the record is damaged. */
  read(key: DurableCallKey): Promise<DurableCallView | undefined>;
  /** Deletes the record of (runId, callId): the next call with that key runs. True when there was one. */
  forget(key: DurableCallKey): Promise<boolean>;
}

/**
 * Where durable calls keep their records (`memoryDurableStore`, `redisDurableStore`): give it
 * to an executor as `durable: { store }`. One store may serve many executors.
 */
export interface DurableStore extends DurableCallRecords {
  /** Closes the store's connection (a Redis store's); a memory store forgets everything. Idempotent. */
  close(): Promise<void>;
}

/** What a claim decided, read. */
export type Claim =
  | { readonly claimed: true; readonly token: string; readonly attempt: number }
  | { readonly claimed: false; readonly record: DurableRecord | undefined };

/** A record that could not be read: a damaged (or forged) one. */
export const DAMAGED = "damaged";

/** The one engine behind a store object: what the executors use. */
export class DurableEngine {
  readonly #backend: DurableBackend;
  /** Keys this process holds a claim on → the attempt held, and how to stop that execution now. */
  readonly #held = new Map<string, { readonly attempt: number; readonly stop: (why: "cancelled" | "gone") => void }>();
  /** Keys callers of this process wait on → their wake-ups. */
  readonly #waiting = new Map<string, Set<() => void>>();

  constructor(backend: DurableBackend) {
    this.#backend = backend;
  }

  get leaseMs(): number {
    return this.#backend.leaseMs;
  }

  /** The key of (runId, callId): the backend's own when it made it already, else hashed here. */
  keyOf(runId: string, callId: string): string {
    return this.#backend.keyOf?.(runId, callId) ?? durableKeyOf(runId, callId);
  }

  get maxAttachmentBytes(): number {
    return this.#backend.maxAttachmentBytes;
  }

  async claim(order: ClaimOrder): Promise<Claim | typeof DAMAGED> {
    const answer = await this.#backend.claim(order);
    if (answer.claimed) return answer;
    const record = this.#read(answer.record);
    return record === DAMAGED ? DAMAGED : { claimed: false, record };
  }

  async read(key: string): Promise<DurableRecord | undefined | typeof DAMAGED> {
    return this.#read(await this.#backend.read(key));
  }

  #read(raw: RawRecord | undefined): DurableRecord | undefined | typeof DAMAGED {
    if (raw === undefined) return undefined;
    return readRecord(raw, this.#backend.maxAttachmentBytes) ?? DAMAGED;
  }

  /**
   * Holds a claim while its tool runs: renews the lease every third of it, and calls `stop`
   * when the lease is no longer this holder's or an attached caller asked to stop (at its next
   * renewal, or at once when that caller is in this process). Gives the function that lets go.
   */
  hold(key: string, token: string, attempt: number, stop: (why: "cancelled" | "gone") => void): () => void {
    let released = false;
    let timer: ReturnType<typeof SetTimeout> | undefined;
    const stopOnce = (why: "cancelled" | "gone"): void => {
      if (released) return;
      letGo();
      stop(why);
    };
    const renew = (): void => {
      timer = undefined;
      this.#backend.renew(key, token).then(
        (renewal: Renewal) => {
          if (released) return;
          if (renewal === "held") schedule();
          else stopOnce(renewal);
        },
        () => {
          if (!released) schedule(); // Redis unreachable: try again; a lease that ran out is someone else's to observe
        },
      );
    };
    const schedule = (): void => {
      timer = SetTimeout(renew, this.#backend.leaseMs / 3);
      (timer as { unref?: () => void }).unref?.();
    };
    const letGo = (): void => {
      released = true;
      if (timer !== undefined) ClearTimeout(timer);
      if (MapPrototypeGet(this.#held, key) === holding) MapPrototypeDelete(this.#held, key);
    };
    const holding = { attempt, stop: stopOnce };
    MapPrototypeSet(this.#held, key, holding);
    schedule();
    return letGo;
  }

  start(key: string, token: string): Promise<boolean> {
    return this.#backend.start(key, token);
  }

  /** `outcome` encodes the record's outcome, asked only when there is one to write (endIfRecordedElsewhere). */
  async finish(key: string, token: string, outcome: () => string): Promise<boolean> {
    try {
      if (this.#backend.endIfRecordedElsewhere?.(key, token) === true) return true;
      return await this.#backend.finish(key, token, outcome());
    } finally {
      this.#wake(key);
    }
  }

  async end(key: string, token: string, state: "released" | "lost" | "forgotten"): Promise<void> {
    try {
      await this.#backend.end(key, token, state);
    } finally {
      this.#wake(key);
    }
  }

  /** An attached caller ends the shared execution (see DurableBackend.stop); a holder in this process stops at once. */
  async stop(key: string, attempt: number, outcome: string | undefined): Promise<void> {
    try {
      await this.#backend.stop(key, attempt, outcome);
    } finally {
      const holding = MapPrototypeGet(this.#held, key);
      if (holding !== undefined && holding.attempt === attempt) holding.stop(outcome === undefined ? "cancelled" : "gone");
      this.#wake(key);
    }
  }

  forget(key: string): Promise<boolean> {
    return this.#backend.forget(key);
  }

  ready(): Promise<void> {
    return this.#backend.ready();
  }

  /** Resolves when this process writes `key`'s record, or after the poll interval, or when `signal` aborts. */
  nextLook(key: string, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return PromiseResolve(undefined); // an abort listener added now would never fire
    return new NativePromise<void>((resolve) => {
      let waiters = MapPrototypeGet(this.#waiting, key);
      if (waiters === undefined) {
        waiters = new Set();
        MapPrototypeSet(this.#waiting, key, waiters);
      }
      const set = waiters;
      const done = (): void => {
        ClearTimeout(timer);
        signal.removeEventListener("abort", done);
        SetPrototypeDelete(set, done);
        if (set.size === 0 && MapPrototypeGet(this.#waiting, key) === set) MapPrototypeDelete(this.#waiting, key);
        resolve();
      };
      const timer = SetTimeout(done, this.#backend.pollMs);
      signal.addEventListener("abort", done, { once: true });
      SetPrototypeAdd(set, done);
    });
  }

  #wake(key: string): void {
    const waiters = MapPrototypeGet(this.#waiting, key);
    if (waiters === undefined) return;
    MapPrototypeDelete(this.#waiting, key);
    for (const wake of [...waiters]) wake();
  }

  close(): Promise<void> {
    return this.#backend.close();
  }
}

const engines = new WeakMap<object, DurableEngine>();

/** An operator's read and forget of `engine`'s records, `what` naming the object in refusals ("store", "durableCalls"). */
export function recordsOf(engine: DurableEngine, what: string): DurableCallRecords {
  return ObjectFreeze({
    read: (key: DurableCallKey) => {
      try {
        return readView(engine, keyOf(key, `${what}.read`));
      } catch (error) {
        return PromiseReject(error);
      }
    },
    forget: (key: DurableCallKey) => {
      try {
        return engine.forget(keyOf(key, `${what}.forget`));
      } catch (error) {
        return PromiseReject(error);
      }
    },
  });
}

/** The public store object of `engine`. */
export function storeOf(engine: DurableEngine): DurableStore {
  const records = recordsOf(engine, "store");
  const store: DurableStore = ObjectFreeze({
    read: records.read,
    forget: records.forget,
    close: () => engine.close(),
  });
  WeakMapPrototypeSet(engines, store, engine);
  return store;
}

/** The engine of a store made by toolgate/durable, or undefined for anything else. */
export function engineOf(value: unknown): DurableEngine | undefined {
  return typeof value === "object" && value !== null ? WeakMapPrototypeGet(engines, value) : undefined;
}

async function readView(engine: DurableEngine, key: string): Promise<DurableCallView | undefined> {
  const record = await engine.read(key);
  if (record === undefined) return undefined;
  if (record === DAMAGED)
    throw new Error("toolgate: the durable record is damaged (not one toolgate wrote); forget() it to run the call again");
  const { state, toolName, attempt, maxAttempts, outcome } = record;
  const view: DurableCallView =
    outcome === undefined ? { state, toolName, attempt, maxAttempts } : { state, toolName, attempt, maxAttempts, outcome: viewOf(outcome) };
  return ObjectFreeze(view);
}

function viewOf(outcome: StoredOutcome): NonNullable<DurableCallView["outcome"]> {
  if (outcome.fatal) return ObjectFreeze({ fatal: true, message: outcome.message });
  return ObjectFreeze({
    fatal: false,
    content: outcome.content,
    isError: outcome.isError,
    attachmentCount: outcome.attachments === undefined ? 0 : outcome.attachments.length,
  });
}

/** The hashed key of an operator's `{ runId, callId }`, checked as a call's durable option is. */
function keyOf(key: unknown, what: string): string {
  validateObject(key, what);
  validateOptionKeys(key, what, ["runId", "callId"]);
  const runId = readOwnOption(key, "runId", what);
  const callId = readOwnOption(key, "callId", what);
  checkId(runId, `${what}: runId`);
  checkId(callId, `${what}: callId`);
  return durableKeyOf(runId, callId);
}

/** The longest run id (and, for an operator, call id): a key is hashed, this only bounds the work. */
export const MAX_DURABLE_ID_LENGTH = 1024;

export function checkId(value: unknown, name: string): asserts value is string {
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_DURABLE_ID_LENGTH) {
    throw new ToolContractError(
      ContractErrorCode.INVALID_ARGUMENT,
      `${name} must be a non-empty string of at most ${MAX_DURABLE_ID_LENGTH} characters (got ${describeValue(value)})`,
    );
  }
}
