// Redis connections: every client is our own ioredis instance (BullMQ is handed instances,
// so both sides decide how connections retry and when they give up). Reaching Redis, and the
// database the connection names, are checked once at startup, with a bound, so an unreachable
// server or a database it does not have is a clear error.
// docs/queue.md — Failure scenarios (Redis unreachable at startup, or lost later).
import type { Redis, RedisOptions } from "ioredis";
import { ContractErrorCode } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { describeFailure } from "../contract/untrusted.js";
import type { QueueConnection } from "./options.js";
import { queuePeers } from "./peers.js";

/** Reconnects back off up to this; a restarted Redis is found again within it. */
const MAX_RECONNECT_DELAY_MS = 1000;

/**
 * A new client, not yet connected. `maxRetriesPerRequest: null` as BullMQ requires of the
 * connections it blocks on; `overrides` tighten that for control clients.
 */
export function openRedis(connection: QueueConnection, overrides: RedisOptions = {}): Redis {
  const options: RedisOptions = {
    lazyConnect: true,
    maxRetriesPerRequest: null,
    retryStrategy: (times) => Math.min(50 * times, MAX_RECONNECT_DELAY_MS),
    ...overrides,
  };
  const { Redis } = queuePeers(); // loaded by create() and runToolWorkerHost() before any client
  const client = typeof connection === "string" ? new Redis(connection, options) : new Redis({ ...connection, ...options });
  client.on("error", ignore); // reconnects are ioredis's job; callers see failures as outcomes
  return client;
}

/**
 * Connects and pings within `timeoutMs`, then selects the database the connection names (ioredis
 * ignores a refused SELECT and goes on in database 0, where another deployment's hosts may take
 * the calls). On failure disconnects the client and throws a ToolContractError(INVALID_ARGUMENT)
 * naming the server (without credentials).
 */
export async function connectOrFail(client: Redis, timeoutMs: number, connection: QueueConnection): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  const database = client.options.db ?? 0;
  let reached = false;
  try {
    await Promise.race([
      client
        .connect()
        .then(() => client.ping())
        .then(() => {
          reached = true;
          return database === 0 ? undefined : client.select(database);
        }),
      timeout,
    ]);
  } catch (error) {
    client.disconnect();
    const server = describeServer(connection);
    const message = reached
      ? `options.connection names database ${database}, which the Redis at ${server} does not have${await databaseCount(connection)}: ${describeFailure(error).text}`
      : `cannot reach Redis at ${server}: ${describeFailure(error).text}`;
    throw new ToolContractError(ContractErrorCode.INVALID_ARGUMENT, message, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

/** " (it has N: 0 to N-1)", read with a client of its own in database 0; "" when the server does not say. */
async function databaseCount(connection: QueueConnection): Promise<string> {
  const probe = openRedis(connection, { db: 0, enableOfflineQueue: false, retryStrategy: () => null });
  try {
    await settlesWithin(probe.connect(), QUIT_WAIT_MS);
    const reply: unknown = await Promise.race([
      probe.config("GET", "databases"),
      new Promise((resolve) => setTimeout(resolve, QUIT_WAIT_MS)),
    ]);
    const count = Array.isArray(reply) ? Number(reply[1]) : Number.NaN;
    return Number.isSafeInteger(count) && count > 0 ? ` (it has ${count}: 0 to ${count - 1})` : "";
  } catch {
    return "";
  } finally {
    probe.disconnect();
  }
}

/** host:port of the server, never its password. */
export function describeServer(connection: QueueConnection): string {
  if (typeof connection === "string") {
    try {
      const url = new URL(connection);
      return `${url.protocol}//${url.hostname}:${url.port || "6379"}`;
    } catch {
      return "an unparsable URL";
    }
  }
  return `${connection.host ?? "127.0.0.1"}:${connection.port ?? 6379}`;
}

/**
 * How long a close waits for Redis to answer QUIT. A silently partitioned link (no RST, no
 * FIN) still reads as "ready" and never answers: then the connection is dropped instead.
 */
const QUIT_WAIT_MS = 500;

/** Closes a client whatever its state, without throwing, within QUIT_WAIT_MS. */
export async function closeRedis(client: Redis): Promise<void> {
  try {
    if (client.status === "ready") await settlesWithin(client.quit(), QUIT_WAIT_MS);
  } finally {
    // After a QUIT that was answered this is a no-op; after one that was not, it ends the socket.
    client.disconnect();
  }
}

/** How long a close waits for BullMQ to let go of Redis before the clients are disconnected. */
export const BULLMQ_CLOSE_MS = 2000;

/** True when `pending` settles within `ms` (either way). */
export async function settlesWithin(pending: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const settled = pending.then(
    () => true,
    () => true,
  );
  try {
    return await Promise.race([settled, expired]);
  } finally {
    clearTimeout(timer);
  }
}

function ignore(): void {}
