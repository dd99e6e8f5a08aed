// What a durable store does, as the two stores (memory, Redis) implement it: small atomic steps
// on one record, each one the same state machine (docs/durable.md — The record's states). The
// store answers with the record's raw fields; record.ts reads them (a Redis record is untrusted).
// docs/durable.md — Semantics.

/** The raw fields of a record: state, fingerprint, tool name, attempt, max attempts, outcome (or null). */
export type RawRecord = readonly unknown[];

/** What a claim gives: the key is this caller's (its token and attempt), or the record that holds it. */
export type RawClaim =
  | { readonly claimed: true; readonly token: string; readonly attempt: number }
  | { readonly claimed: false; readonly record: RawRecord };

/** A claim's inputs. */
export interface ClaimOrder {
  readonly key: string;
  readonly fingerprint: string;
  readonly toolName: string;
  /** Attempts the tool allows (1: at-most-once). */
  readonly maxAttempts: number;
  /** A random token naming this claim: only its holder may renew, start, finish, release or lose it. */
  readonly token: string;
  /**
   * "running": the tool starts as soon as the claim is answered; "claimed": something is asked
   * first (beforeExecute), and `start` follows. A claimed record whose lease lapses is released
   * (the tool never started), a running one lost (it may have run).
   */
  readonly state: "claimed" | "running";
}

/** What a renewal finds: the claim is still held, an attached caller asked to stop it, or it is no longer this holder's. */
export type Renewal = "held" | "cancelled" | "gone";

/**
 * One store's atomic steps. Every step that reads a record whose lease has run out (on the
 * store's clock) first makes a running one lost (its holder died or stopped renewing, and the
 * tool may have run) and a claimed one released (the tool never started).
 */
export interface DurableBackend {
  /**
   * Nothing (or released) → claimed, attempt 1 (or the released one's); lost with attempts
   * left → claimed, the next attempt; anything else → the record, unchanged when its
   * fingerprint is another (a conflict changes nothing, not even an expired lease).
   */
  claim(order: ClaimOrder): Promise<RawClaim>;
  /** The record (undefined: none), after the lease check. */
  read(key: string): Promise<RawRecord | undefined>;
  /** Extends the holder's lease. */
  renew(key: string, token: string): Promise<Renewal>;
  /** claimed(token) → running: the tool starts; false when the claim is no longer this holder's (then it must not start). */
  start(key: string, token: string): Promise<boolean>;
  /** running(token) → done(outcome); false when another terminal write came first. (Every step below also takes a claimed record.) */
  finish(key: string, token: string, outcome: string): Promise<boolean>;
  /**
   * True when the claim's outcome is already the record's, written by whoever ran it (a queue
   * host whose finish won): the claim ends here with nothing to write, and its outcome need
   * not be encoded. Undefined or false: finish writes it.
   */
  endIfRecordedElsewhere?(key: string, token: string): boolean;
  /** running(token) → released (the tool never started), lost (it was stopped mid-run), or no record at all (forgotten: a denial stores nothing). */
  end(key: string, token: string, state: "released" | "lost" | "forgotten"): Promise<void>;
  /**
   * An attached caller's end of the shared execution, at `attempt`: with an outcome (its time
   * limit: TOOL_EXECUTION_TIMEOUT), running → done(outcome), first terminal write wins; without
   * one (its abort), the holder is asked to stop (its next renewal says "cancelled").
   */
  stop(key: string, attempt: number, outcome: string | undefined): Promise<void>;
  /**
   * The key of (runId, callId) when this backend already made it (a queue host made it to
   * announce the job it runs); undefined: the caller hashes it (key.ts: durableKeyOf).
   */
  keyOf?(runId: string, callId: string): string | undefined;
  /** Resolves once the store can be used (a Redis store: connected, its eviction policy checked); rejects with why not. */
  ready(): Promise<void>;
  /** Deletes the record; true when there was one. */
  forget(key: string): Promise<boolean>;
  /** How often an attached caller reads the record again at most, in ms (it is also woken by this process's own writes). */
  readonly pollMs: number;
  /** A claim's lease in ms: its holder renews it every third of that. */
  readonly leaseMs: number;
  /** The attachment bytes an outcome may keep (the store's attachment budget). */
  readonly maxAttachmentBytes: number;
  close(): Promise<void>;
}

/** What a claim meets in a store whose every record is still running (memoryDurableStore's bound): the call is not run. */
export class DurableStoreFullError extends Error {}
