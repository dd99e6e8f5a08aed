// redisDurableStore: durable records in Redis, one hash per key, written only by the small Lua
// scripts below (each one atomic, each reading the time from Redis' own clock with TIME, so no
// host's clock decides a lease or a retention). The record survives the process: a restarted
// agent that issues the call again gets the outcome, attaches, or is told the earlier run was
// lost. What Redis gives back is read by record.ts (untrusted). A Redis whose
// maxmemory-policy may evict keys is refused: an evicted record silently turns a replay into a
// second execution.
// docs/durable.md — redisDurableStore, Redis caveats.
import type { Redis, RedisOptions } from "ioredis";
import { ContractErrorCode } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { ArrayIsArray, ObjectFreeze } from "../contract/primordials.js";
import { describeFailure } from "../contract/untrusted.js";
import { integerOr, invalidArgument, readOptions, validateBoolean } from "../contract/validators.js";
import { keyPartProblem, redisName } from "../queue/keys.js";
import { type QueueScript, runScript } from "../queue/scripts.js";
import type { ClaimOrder, DurableBackend, RawClaim, RawRecord, Renewal } from "./backend.js";
import { DEFAULT_LEASE_MS, readMaxAttachmentBytes, readRetentionMs, readWriteConcern, type WriteConcern } from "./options.js";
import { DURABLE_SCRIPTS } from "./scripts.js";
import { DurableEngine, type DurableStore, storeOf } from "./store.js";

/** Options of `redisDurableStore`. */
export interface RedisDurableStoreOptions {
  /** The Redis server: a `redis://` URL or ioredis options (the store opens a client of its own). */
  readonly connection: string | RedisOptions;
  /** First part of every key: `<prefix>:durable:<key>` (default "toolgate"; no ":" or control characters). */
  readonly prefix?: string;
  /** How long a record is kept after its last write, in ms (1 minute to 30 days; default 24 hours), on Redis' clock. */
  readonly retentionMs?: number;
  /** A claim's lease in ms (1000 to 60000; default 15000): a holder that stops renewing it for that long has lost its execution. */
  readonly leaseMs?: number;
  /** Attachment bytes a stored outcome may keep (default 8 MiB, at most 64 MiB): a larger result is recorded as a clear error. */
  readonly maxAttachmentBytes?: number;
  /**
   * Skips the `maxmemory-policy` check, for a managed Redis that hides `CONFIG`: you assert the
   * server never evicts keys (`noeviction`). Default false: any other policy is refused.
   */
  readonly assumeNoEviction?: boolean;
  /** How long the first connection (and the policy check) may take, in ms (default 5000). */
  readonly connectTimeoutMs?: number;
  /**
   * After a claim and after an outcome is recorded, `WAIT` for this many replicas, at most
   * `timeoutMs`: a claim fewer replicas acknowledged is given up (the call fails, the tool did
   * not run); an outcome is answered anyway (the tool ran). `WAITAOF` is not offered.
   */
  readonly writeConcern?: { readonly replicas: number; readonly timeoutMs: number };
}

const REDIS_OPTION_KEYS = [
  "connection",
  "prefix",
  "retentionMs",
  "leaseMs",
  "maxAttachmentBytes",
  "assumeNoEviction",
  "connectTimeoutMs",
  "writeConcern",
] as const;

/** The policy a durable Redis must have. */
const SAFE_POLICY = "noeviction";

class RedisBackend implements DurableBackend {
  readonly pollMs = 100;
  readonly leaseMs: number;
  readonly maxAttachmentBytes: number;
  readonly #connection: string | RedisOptions;
  /** `<prefix>:durable:`, made once: every key after it is a SHA-256 in hex (key.ts), safe as a key part. */
  readonly #keyPrefix: string;
  /** The numbers the scripts take, as the strings ioredis would send: converted once per store, not per call. */
  readonly #retentionMs: string;
  readonly #leaseMs: string;
  readonly #assumeNoEviction: boolean;
  readonly #connectTimeoutMs: number;
  readonly #writeConcern: WriteConcern | undefined;
  #client: Promise<Redis> | undefined;
  /** The client once connected and checked: a call's script is sent without waiting on a promise first. */
  #connected: Redis | undefined;
  #closed = false;

  constructor(settings: {
    connection: string | RedisOptions;
    prefix: string;
    retentionMs: number;
    leaseMs: number;
    maxAttachmentBytes: number;
    assumeNoEviction: boolean;
    connectTimeoutMs: number;
    writeConcern: WriteConcern | undefined;
  }) {
    this.#writeConcern = settings.writeConcern;
    this.#connection = settings.connection;
    this.#keyPrefix = `${redisName(settings.prefix, "durable")}:`;
    this.#retentionMs = `${settings.retentionMs}`;
    this.#leaseMs = `${settings.leaseMs}`;
    this.leaseMs = settings.leaseMs;
    this.maxAttachmentBytes = settings.maxAttachmentBytes;
    this.#assumeNoEviction = settings.assumeNoEviction;
    this.#connectTimeoutMs = settings.connectTimeoutMs;
  }

  #name(key: string): string {
    return this.#keyPrefix + key;
  }

  /** The connected client, once: connected, and its eviction policy checked. A failure is tried again at the next use. */
  #redis(): Promise<Redis> {
    if (this.#closed) return Promise.reject(new ToolContractError(ContractErrorCode.EXECUTOR_CLOSED, "the durable store is closed"));
    this.#client ??= this.#connect().then(
      (client) => {
        if (!this.#closed) this.#connected = client;
        return client;
      },
      (error: unknown) => {
        this.#client = undefined;
        throw error;
      },
    );
    return this.#client;
  }

  async #connect(): Promise<Redis> {
    let RedisClient: typeof Redis;
    try {
      RedisClient = (await import("ioredis")).Redis;
    } catch (error) {
      throw new ToolContractError(
        ContractErrorCode.MISSING_PEER_DEPENDENCY,
        "redisDurableStore needs the optional peer dependency ioredis: add it beside toolgate (npm install ioredis@~5.11.1)",
        { cause: error },
      );
    }
    const options: RedisOptions = {
      lazyConnect: true,
      maxRetriesPerRequest: 2,
      connectTimeout: this.#connectTimeoutMs,
      retryStrategy: (times) => Math.min(50 * times, 1000),
    };
    const connection = this.#connection;
    const client = typeof connection === "string" ? new RedisClient(connection, options) : new RedisClient({ ...connection, ...options });
    client.on("error", ignore); // reconnects are ioredis's; a failed step is the call's failure
    try {
      await within(client.connect(), this.#connectTimeoutMs, "connecting to Redis");
      if (!this.#assumeNoEviction) await checkEvictionPolicy(client, this.#connectTimeoutMs, "redisDurableStore", "assumeNoEviction: true");
    } catch (error) {
      client.disconnect();
      throw error;
    }
    return client;
  }

  async #eval(script: QueueScript, key: string, args: readonly (string | number)[]): Promise<unknown> {
    return runScript(this.#connected ?? (await this.#redis()), script, [this.#name(key)], args);
  }

  async claim(order: ClaimOrder): Promise<RawClaim> {
    const reply = await this.#eval(DURABLE_SCRIPTS.claim, order.key, [
      order.fingerprint,
      order.toolName,
      order.maxAttempts,
      order.token,
      this.#leaseMs,
      this.#retentionMs,
      order.state,
    ]);
    if (ArrayIsArray(reply) && reply.length === 2 && reply[0] === "claimed") {
      const attempt = +reply[1];
      const concern = this.#writeConcern;
      if (concern !== undefined && !(await this.#replicated(concern))) {
        await this.#eval(DURABLE_SCRIPTS.settle, order.key, [order.token, "released", "", this.#retentionMs]);
        throw new Error(`the claim was not acknowledged by ${concern?.replicas} replicas within ${concern?.timeoutMs} ms (writeConcern)`);
      }
      return { claimed: true, token: order.token, attempt };
    }
    return { claimed: false, record: recordOf(reply) ?? DAMAGED_RECORD };
  }

  async read(key: string): Promise<RawRecord | undefined> {
    const reply = await this.#eval(DURABLE_SCRIPTS.read, key, []);
    if (ArrayIsArray(reply) && reply.length === 0) return undefined;
    return recordOf(reply) ?? DAMAGED_RECORD;
  }

  async renew(key: string, token: string): Promise<Renewal> {
    const reply = await this.#eval(DURABLE_SCRIPTS.renew, key, [token, this.#leaseMs, this.#retentionMs]);
    return reply === "held" || reply === "cancelled" ? reply : "gone";
  }

  async start(key: string, token: string): Promise<boolean> {
    return (await this.#eval(DURABLE_SCRIPTS.start, key, [token])) === 1;
  }

  async finish(key: string, token: string, outcome: string): Promise<boolean> {
    const won = (await this.#eval(DURABLE_SCRIPTS.settle, key, [token, "done", outcome, this.#retentionMs])) === 1;
    const concern = this.#writeConcern;
    if (won && concern !== undefined) await this.#replicated(concern);
    return won;
  }

  /** Whether `concern`'s replicas acknowledged the writes so far (called only with a write concern: without one there is nothing to wait for, not even a promise). */
  async #replicated(concern: WriteConcern): Promise<boolean> {
    const client = await this.#redis();
    return (await client.wait(concern.replicas, concern.timeoutMs)) >= concern.replicas;
  }

  async end(key: string, token: string, state: "released" | "lost" | "forgotten"): Promise<void> {
    await this.#eval(DURABLE_SCRIPTS.settle, key, [token, state, "", this.#retentionMs]);
  }

  async stop(key: string, attempt: number, outcome: string | undefined): Promise<void> {
    await this.#eval(DURABLE_SCRIPTS.stop, key, [attempt, outcome ?? "", this.#retentionMs]);
  }

  async ready(): Promise<void> {
    await this.#redis();
  }

  async forget(key: string): Promise<boolean> {
    const client = await this.#redis();
    return (await client.del(this.#name(key))) > 0;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const pending = this.#client;
    this.#client = undefined;
    this.#connected = undefined;
    if (pending === undefined) return;
    let client: Redis;
    try {
      client = await pending;
    } catch {
      return;
    }
    try {
      await within(client.quit(), 500, "QUIT");
    } catch {
      // a server that does not answer is let go below
    } finally {
      client.disconnect();
    }
  }
}

/**
 * Refuses (INVALID_ARGUMENT) a Redis whose maxmemory-policy may evict keys, or that hides it:
 * an evicted record silently turns a replay into a second execution. `who` names the refuser,
 * `override` the option that skips the check.
 */
export async function checkEvictionPolicy(client: Pick<Redis, "config">, timeoutMs: number, who: string, override: string): Promise<void> {
  let reply: unknown;
  try {
    reply = await within(client.config("GET", "maxmemory-policy") as Promise<unknown>, timeoutMs, "CONFIG GET maxmemory-policy");
  } catch (error) {
    invalidArgument(
      `${who} cannot read the server's maxmemory-policy (${describeFailure(error).text}): durable records need "noeviction"; if the server is managed and hides CONFIG, set ${override} once you know it never evicts`,
    );
  }
  const policy = ArrayIsArray(reply) && reply.length === 2 ? reply[1] : undefined;
  if (policy !== SAFE_POLICY) {
    invalidArgument(
      `${who} refuses a Redis whose maxmemory-policy is ${typeof policy === "string" ? JSON.stringify(policy) : "unknown"}: it may evict durable records, and an evicted record runs its call again; set maxmemory-policy to "noeviction" (or ${override}, if you know better)`,
    );
  }
}

/** A reply that is not a record's fields: record.ts reads it as damaged. */
const DAMAGED_RECORD: RawRecord = ObjectFreeze(["damaged"]);

/** The six fields of a `{"record", …}` reply, or undefined. */
function recordOf(reply: unknown): RawRecord | undefined {
  if (!ArrayIsArray(reply) || reply.length !== 7 || reply[0] !== "record") return undefined;
  return reply.slice(1);
}

function within<T>(pending: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    pending,
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

function ignore(): void {}

/**
 * A store in Redis: the record of each durable call is one hash, `<prefix>:durable:<key>`,
 * kept `retentionMs` after its last write. Connects at its first use (a WorkerToolExecutor
 * given it checks it in `create()`): a Redis whose `maxmemory-policy` is not `noeviction` is
 * refused with a ToolContractError(INVALID_ARGUMENT), unless `assumeNoEviction`.
 */
export function redisDurableStore(options: RedisDurableStoreOptions): DurableStore {
  const read = readOptions(options, "options", REDIS_OPTION_KEYS);
  const connection = read.connection;
  if (typeof connection !== "string" && (typeof connection !== "object" || connection === null)) {
    invalidArgument("options.connection must be a redis:// URL or ioredis options");
  }
  const prefix = read.prefix === undefined ? "toolgate" : read.prefix;
  const problem = typeof prefix === "string" ? keyPartProblem(prefix, 128) : "is not a string";
  if (problem !== undefined) invalidArgument(`options.prefix ${problem}`);
  if (read.assumeNoEviction !== undefined) validateBoolean(read.assumeNoEviction, "options.assumeNoEviction");
  const backend = new RedisBackend({
    connection: connection as string | RedisOptions,
    prefix: prefix as string,
    retentionMs: readRetentionMs(read.retentionMs),
    leaseMs: integerOr(read.leaseMs, "options.leaseMs", { min: 1000, max: 60_000, fallback: DEFAULT_LEASE_MS }),
    maxAttachmentBytes: readMaxAttachmentBytes(read.maxAttachmentBytes),
    assumeNoEviction: read.assumeNoEviction === true,
    connectTimeoutMs: integerOr(read.connectTimeoutMs, "options.connectTimeoutMs", { min: 1, max: 60_000, fallback: 5000 }),
    writeConcern: readWriteConcern(read.writeConcern, "options.writeConcern"),
  });
  return storeOf(new DurableEngine(backend));
}
