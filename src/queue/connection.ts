// Redis connections: every client is our own ioredis instance (BullMQ is handed instances,
// so both sides decide how connections retry and when they give up): one server, a Sentinel
// set's primary, or a Redis Cluster. Reaching Redis, and the database the connection names, are
// checked once at startup, with a bound, so an unreachable server or a database it does not
// have is a clear error; so is a refusal (a wrong password, an untrusted TLS certificate, an ACL
// user without a permission), which ioredis reports only as an 'error' event while it retries:
// it is caught during the connect and named.
// docs/queue.md — Failure scenarios (Redis unreachable at startup, or lost later); docs/operations.md — Running Redis for toolgate.
import type { ClusterOptions, Redis, RedisOptions } from "ioredis";
import { ContractErrorCode } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { ArrayPrototypeIncludes, ArrayPrototypeJoin } from "../contract/primordials.js";
import { describeFailure, readOwnDataProperty } from "../contract/untrusted.js";
import { isClusterConnection, type QueueClusterNode, type QueueConnection, type QueueConnectionOptions } from "./options.js";
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
  let client: Redis;
  if (typeof connection === "string") client = new Redis(connection, options);
  else if (isClusterConnection(connection)) client = openCluster(connection, options);
  else {
    const { url, ...rest } = connection;
    client = url === undefined ? new Redis({ ...rest, ...options }) : new Redis(url, { ...rest, ...options });
  }
  client.on("error", ignore); // reconnects are ioredis's job; callers see failures as outcomes
  return client;
}

/**
 * How a Cluster client rides out a failover: a command that meets a moved slot, a node being
 * failed over or a cluster that says it is down is tried again after this long, up to
 * MAX_REDIRECTIONS times (with these, a primary SIGKILLed under load cost no failed command in
 * the study of issue 44: docs/operations.md).
 */
const CLUSTER_RETRY_DELAY_MS = 300;
const MAX_REDIRECTIONS = 64;

/**
 * A Cluster client over the connection's startup nodes. Every node gets the connection's
 * credentials and TLS settings and the client's own options; the client's reconnects and its
 * offline queue are the Cluster's. Typed as a Redis: the queue runs only commands a Cluster
 * client runs alike (each on the one slot of its queue's keys), and BullMQ takes either.
 */
function openCluster(connection: QueueConnectionOptions & { cluster: readonly QueueClusterNode[] }, options: RedisOptions): Redis {
  const { cluster, natMap, dnsLookup, ...nodeOptions } = connection;
  const { retryStrategy, enableOfflineQueue, lazyConnect, ...perNode } = options;
  const clusterOptions: ClusterOptions = {
    lazyConnect: lazyConnect ?? true,
    enableOfflineQueue: enableOfflineQueue ?? true,
    clusterRetryStrategy: retryStrategy ?? null,
    retryDelayOnFailover: CLUSTER_RETRY_DELAY_MS,
    retryDelayOnClusterDown: CLUSTER_RETRY_DELAY_MS,
    retryDelayOnTryAgain: CLUSTER_RETRY_DELAY_MS,
    maxRedirections: MAX_REDIRECTIONS,
    redisOptions: { ...nodeOptions, ...perNode },
    ...(natMap === undefined ? {} : { natMap }),
    ...(dnsLookup === undefined ? {} : { dnsLookup }),
  };
  const { Cluster } = queuePeers();
  const client = new Cluster([...cluster] as never[], clusterOptions);
  client.on("node error", ignore);
  return client as unknown as Redis;
}

/**
 * Connects and pings within `timeoutMs`, then selects the database the connection names (ioredis
 * ignores a refused SELECT and goes on in database 0, where another deployment's hosts may take
 * the calls). On failure disconnects the client and throws a ToolContractError(INVALID_ARGUMENT)
 * naming the server (without credentials).
 */
export async function connectOrFail(client: Redis, timeoutMs: number, connection: QueueConnection): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  // ioredis retries a refused connection (a wrong password, an untrusted certificate) and says
  // why only in 'error' events: the last one is kept, and a refusal ends the wait at once.
  let lastError: unknown;
  let refused: (error: unknown) => void = ignore;
  const failure = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    refused = reject;
  });
  const heard = (error: unknown): void => {
    lastError = error;
    if (refusalOf(error) !== undefined) refused(error);
  };
  client.on("error", heard);
  client.on("node error", heard); // a Cluster's: each node's own refusal
  const database = (isClusterConnection(connection) ? undefined : client.options.db) ?? 0;
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
      failure,
    ]);
  } catch (error) {
    client.disconnect();
    const server = describeServer(connection);
    const refusal = refusalOf(error) ?? refusalOf(lastError);
    const why = describeFailure(refusalOf(error) === undefined && lastError !== undefined ? lastError : error).text;
    const message =
      refusal !== undefined
        ? `the Redis at ${server} refused the connection: ${refusal}: ${why}`
        : reached
          ? `options.connection names database ${database}, which the Redis at ${server} does not have${await databaseCount(connection)}: ${describeFailure(error).text}`
          : `cannot reach Redis at ${server}: ${describeFailure(error).text}${lastError === undefined || lastError === error ? "" : ` (last error: ${why})`}`;
    throw new ToolContractError(ContractErrorCode.INVALID_ARGUMENT, message, { cause: error });
  } finally {
    clearTimeout(timer);
    client.off("error", heard);
    client.off("node error", heard);
  }
}

/** Node's codes for a server certificate its client does not trust. */
const UNTRUSTED_CERTIFICATE: readonly string[] = [
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_UNTRUSTED",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "ERR_TLS_CERT_ALTNAME_INVALID",
];

/**
 * What a connect error says was refused, in words, or undefined when it is not a refusal (a
 * server not reached yet may still come). Read from the error's own data properties alone.
 */
export function refusalOf(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const code = readOwnDataProperty(error, "code");
  if (typeof code === "string") {
    if (ArrayPrototypeIncludes(UNTRUSTED_CERTIFICATE, code)) {
      return `its TLS certificate is not trusted (${code}): give the CA that signed it as options.connection.tls.ca`;
    }
    if (code === "ERR_SSL_WRONG_VERSION_NUMBER" || code === "ERR_SSL_PACKET_LENGTH_TOO_LONG") {
      return `the TLS handshake failed (${code}): does the server speak TLS on that port?`;
    }
  }
  const message = readOwnDataProperty(error, "message");
  if (typeof message !== "string") return undefined;
  if (message.startsWith("WRONGPASS")) return "the user name or password is wrong, or the user is disabled (WRONGPASS)";
  if (message.startsWith("NOAUTH")) return "it needs a user name and password (NOAUTH): give options.connection.username and password";
  if (message.startsWith("NOPERM")) return "its ACL forbids the user a command the connection needs (NOPERM)";
  return undefined;
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

/** Where the server is (its URL's scheme and host:port, a Cluster's or Sentinel set's nodes), never its password. */
export function describeServer(connection: QueueConnection): string {
  if (typeof connection === "string") return describeUrl(connection);
  if (isClusterConnection(connection)) return `the Redis Cluster of ${describeNodes(connection.cluster)}`;
  if (connection.sentinels !== undefined) {
    return `the primary "${String(connection.name)}" of the sentinels ${describeNodes(connection.sentinels as readonly QueueClusterNode[])}`;
  }
  if (connection.url !== undefined) return describeUrl(connection.url);
  if (connection.path !== undefined) return `the socket ${String(connection.path)}`;
  return `${connection.tls === undefined ? "" : "rediss://"}${connection.host ?? "127.0.0.1"}:${connection.port ?? 6379}`;
}

function describeUrl(text: string): string {
  try {
    const url = new URL(text);
    return `${url.protocol}//${url.hostname}:${url.port || "6379"}`;
  } catch {
    return "an unparsable URL";
  }
}

/** At most the first three "host:port"s, and how many more. */
function describeNodes(nodes: readonly QueueClusterNode[]): string {
  const shown = nodes.slice(0, 3).map((node) => (typeof node === "string" ? node : `${node.host ?? "127.0.0.1"}:${node.port ?? 6379}`));
  return `${ArrayPrototypeJoin(shown, ", ")}${nodes.length > 3 ? ` and ${nodes.length - 3} more` : ""}`;
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
