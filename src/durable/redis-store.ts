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
import type { ClaimOrder, DurableBackend, RawClaim, RawRecord, Renewal } from "./backend.js";
import { DEFAULT_LEASE_MS, readMaxAttachmentBytes, readRetentionMs } from "./options.js";
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
}

const REDIS_OPTION_KEYS = [
  "connection",
  "prefix",
  "retentionMs",
  "leaseMs",
  "maxAttachmentBytes",
  "assumeNoEviction",
  "connectTimeoutMs",
] as const;

// Shared by every script: Redis' clock in ms, and the lease rule (a running record whose lease
// ran out is lost: its holder stopped renewing, and the tool may have run). A key that is not a
// hash (not toolgate's) answers "damaged" rather than failing the script.
const PRELUDE = `
local time = redis.call("TIME")
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local function ms(value) return string.format("%.0f", value) end
local function fields()
  local r = redis.pcall("HMGET", KEYS[1], "state", "fp", "tool", "attempt", "max", "outcome", "token", "lease", "cancel")
  if type(r) ~= "table" or r.err then return nil end
  return r
end
local function held(r) return r[1] == "running" or r[1] == "claimed" end
local function expire_lease(r)
  if held(r) and (tonumber(r[8]) or 0) < now then
    local state = "released"
    if r[1] == "running" then state = "lost" end
    redis.call("HSET", KEYS[1], "state", state)
    redis.call("HDEL", KEYS[1], "token", "lease", "cancel")
    r[1] = state
  end
end
local function record(r) return {"record", r[1], r[2], r[3], r[4], r[5], r[6]} end
`;

// KEYS: the record. ARGV: fingerprint, tool name, max attempts, token, lease ms, retention ms, state ("claimed" or "running").
const CLAIM = `${PRELUDE}
local function claim(attempt, max)
  redis.call("DEL", KEYS[1])
  redis.call("HSET", KEYS[1], "v", "1", "state", ARGV[7], "fp", ARGV[1], "tool", ARGV[2], "attempt", tostring(attempt),
    "max", tostring(max), "token", ARGV[4], "lease", ms(now + tonumber(ARGV[5])), "cancel", "0")
  redis.call("PEXPIRE", KEYS[1], ARGV[6])
  return {"claimed", tostring(attempt)}
end
if redis.call("EXISTS", KEYS[1]) == 0 then return claim(1, ARGV[3]) end
local r = fields()
if r == nil then return {"damaged"} end
if r[2] ~= ARGV[1] then return record(r) end
expire_lease(r)
if r[1] == "released" then return claim(tonumber(r[4]) or 1, ARGV[3]) end
if r[1] == "lost" then
  local attempt, max = tonumber(r[4]), tonumber(r[5])
  if attempt and max and attempt < max and max <= 100 then return claim(attempt + 1, max) end
end
return record(r)
`;

// KEYS: the record.
const READ = `${PRELUDE}
if redis.call("EXISTS", KEYS[1]) == 0 then return {} end
local r = fields()
if r == nil then return {"damaged"} end
expire_lease(r)
return record(r)
`;

// KEYS: the record. ARGV: token, lease ms, retention ms.
const RENEW = `${PRELUDE}
local r = fields()
if r == nil or not held(r) or r[7] ~= ARGV[1] then return "gone" end
if r[9] == "1" then return "cancelled" end
redis.call("HSET", KEYS[1], "lease", ms(now + tonumber(ARGV[2])))
redis.call("PEXPIRE", KEYS[1], ARGV[3])
return "held"
`;

// KEYS: the record. ARGV: token. A claim whose tool starts now; not if its lease lapsed or a stop was asked.
const START = `${PRELUDE}
local r = fields()
if r == nil then return 0 end
expire_lease(r)
if r[1] ~= "claimed" or r[7] ~= ARGV[1] or r[9] == "1" then return 0 end
redis.call("HSET", KEYS[1], "state", "running")
return 1
`;

// KEYS: the record. ARGV: token, the state to write ("done", "released", "lost", or "forgotten": no record),
// outcome ("" unless done), retention ms. First terminal write wins: only the holder of a running record writes it.
const SETTLE = `${PRELUDE}
local r = fields()
if r == nil or not held(r) or r[7] ~= ARGV[1] then return 0 end
if ARGV[2] == "forgotten" then
  redis.call("DEL", KEYS[1])
  return 1
end
redis.call("HDEL", KEYS[1], "token", "lease", "cancel", "outcome")
redis.call("HSET", KEYS[1], "state", ARGV[2])
if ARGV[2] == "done" then redis.call("HSET", KEYS[1], "outcome", ARGV[3]) end
redis.call("PEXPIRE", KEYS[1], ARGV[4])
return 1
`;

// KEYS: the record. ARGV: attempt, outcome ("" asks the holder to stop), retention ms.
const STOP = `${PRELUDE}
local r = fields()
if r == nil or not held(r) or r[4] ~= ARGV[1] then return 0 end
if ARGV[2] == "" then
  redis.call("HSET", KEYS[1], "cancel", "1")
else
  redis.call("HDEL", KEYS[1], "token", "lease", "cancel")
  redis.call("HSET", KEYS[1], "state", "done", "outcome", ARGV[2])
  redis.call("PEXPIRE", KEYS[1], ARGV[3])
end
return 1
`;

/** The policy a durable Redis must have. */
const SAFE_POLICY = "noeviction";

class RedisBackend implements DurableBackend {
  readonly pollMs = 100;
  readonly leaseMs: number;
  readonly maxAttachmentBytes: number;
  readonly #connection: string | RedisOptions;
  readonly #prefix: string;
  readonly #retentionMs: number;
  readonly #assumeNoEviction: boolean;
  readonly #connectTimeoutMs: number;
  #client: Promise<Redis> | undefined;
  #closed = false;

  constructor(settings: {
    connection: string | RedisOptions;
    prefix: string;
    retentionMs: number;
    leaseMs: number;
    maxAttachmentBytes: number;
    assumeNoEviction: boolean;
    connectTimeoutMs: number;
  }) {
    this.#connection = settings.connection;
    this.#prefix = settings.prefix;
    this.#retentionMs = settings.retentionMs;
    this.leaseMs = settings.leaseMs;
    this.maxAttachmentBytes = settings.maxAttachmentBytes;
    this.#assumeNoEviction = settings.assumeNoEviction;
    this.#connectTimeoutMs = settings.connectTimeoutMs;
  }

  #name(key: string): string {
    return redisName(this.#prefix, "durable", key);
  }

  /** The connected client, once: connected, and its eviction policy checked. A failure is tried again at the next use. */
  #redis(): Promise<Redis> {
    if (this.#closed) return Promise.reject(new ToolContractError(ContractErrorCode.EXECUTOR_CLOSED, "the durable store is closed"));
    this.#client ??= this.#connect().catch((error: unknown) => {
      this.#client = undefined;
      throw error;
    });
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
      if (!this.#assumeNoEviction) await this.#checkPolicy(client);
    } catch (error) {
      client.disconnect();
      throw error;
    }
    return client;
  }

  async #checkPolicy(client: Redis): Promise<void> {
    let reply: unknown;
    try {
      reply = await within(client.config("GET", "maxmemory-policy"), this.#connectTimeoutMs, "CONFIG GET maxmemory-policy");
    } catch (error) {
      invalidArgument(
        `redisDurableStore cannot read the server's maxmemory-policy (${describeFailure(error).text}): durable records need "noeviction"; if the server is managed and hides CONFIG, set assumeNoEviction: true once you know it never evicts`,
      );
    }
    const policy = ArrayIsArray(reply) && reply.length === 2 ? reply[1] : undefined;
    if (policy !== SAFE_POLICY) {
      invalidArgument(
        `redisDurableStore refuses a Redis whose maxmemory-policy is ${typeof policy === "string" ? JSON.stringify(policy) : "unknown"}: it may evict durable records, and an evicted record runs its call again; set maxmemory-policy to "noeviction" (or assumeNoEviction: true, if you know better)`,
      );
    }
  }

  async #eval(script: string, key: string, args: readonly (string | number)[]): Promise<unknown> {
    const client = await this.#redis();
    return client.eval(script, 1, this.#name(key), ...args);
  }

  async claim(order: ClaimOrder): Promise<RawClaim> {
    const reply = await this.#eval(CLAIM, order.key, [
      order.fingerprint,
      order.toolName,
      order.maxAttempts,
      order.token,
      this.leaseMs,
      this.#retentionMs,
      order.state,
    ]);
    if (ArrayIsArray(reply) && reply.length === 2 && reply[0] === "claimed") {
      const attempt = +reply[1];
      return { claimed: true, token: order.token, attempt };
    }
    return { claimed: false, record: recordOf(reply) ?? DAMAGED_RECORD };
  }

  async read(key: string): Promise<RawRecord | undefined> {
    const reply = await this.#eval(READ, key, []);
    if (ArrayIsArray(reply) && reply.length === 0) return undefined;
    return recordOf(reply) ?? DAMAGED_RECORD;
  }

  async renew(key: string, token: string): Promise<Renewal> {
    const reply = await this.#eval(RENEW, key, [token, this.leaseMs, this.#retentionMs]);
    return reply === "held" || reply === "cancelled" ? reply : "gone";
  }

  async start(key: string, token: string): Promise<boolean> {
    return (await this.#eval(START, key, [token])) === 1;
  }

  async finish(key: string, token: string, outcome: string): Promise<boolean> {
    return (await this.#eval(SETTLE, key, [token, "done", outcome, this.#retentionMs])) === 1;
  }

  async end(key: string, token: string, state: "released" | "lost" | "forgotten"): Promise<void> {
    await this.#eval(SETTLE, key, [token, state, "", this.#retentionMs]);
  }

  async stop(key: string, attempt: number, outcome: string | undefined): Promise<void> {
    await this.#eval(STOP, key, [attempt, outcome ?? "", this.#retentionMs]);
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
  });
  return storeOf(new DurableEngine(backend));
}
