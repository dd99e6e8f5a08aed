// Options of both sides, read and validated up front through the validators every executor
// uses (own data properties only, unknown keys refused): a precise ToolContractError
// (INVALID_ARGUMENT) naming the option and the value, with upper bounds on every number.
// docs/queue.md — Options; docs/operations.md — Options.
import type { ClusterOptions, RedisOptions } from "ioredis";
import { describeValue } from "../contract/grammar.js";
import {
  ArrayIsArray,
  isProxy,
  JSONStringify,
  ObjectFreeze,
  ObjectGetOwnPropertyDescriptor,
  RegExpPrototypeExec,
} from "../contract/primordials.js";
import { integerOr, invalidArgument, MAX_DELAY_MS, readOptions } from "../contract/validators.js";
import { BULL_PREFIX, hashTagOf, keyPartProblem, MAX_PREFIX_LENGTH, MAX_QUEUE_NAME_LENGTH } from "./keys.js";

/** A node of a Redis Cluster to start from: `host:port`, or ioredis's `{ host, port }`. */
export type QueueClusterNode = string | { readonly host?: string; readonly port?: number };

/**
 * Where Redis is, and how to reach it, as an object: ioredis's options for one server or for a
 * Sentinel set (`sentinels` and the primary's `name`), or a Redis Cluster's startup nodes
 * (`cluster`), each with the credentials and TLS settings every connection uses; `url` names
 * the server as a `redis://` or `rediss://` URL, the other options adding to it (a CA, say).
 */
export type QueueConnectionOptions = RedisOptions & {
  /** A `redis://` or `rediss://` URL; the options beside it add to it (`tls: { ca }`, `username`, `password`). */
  readonly url?: string;
  /** The startup nodes of a Redis Cluster: the connection is a Cluster (its queues need a hash-tagged `prefix`). */
  readonly cluster?: readonly QueueClusterNode[];
  /** A Cluster's address lookup (ioredis's `dnsLookup`: managed clusters behind TLS need `(address, callback) => callback(null, address)`). */
  readonly dnsLookup?: ClusterOptions["dnsLookup"];
};

/** Where Redis is: a `redis://` (or `rediss://`) URL, or the options of one server, a Sentinel set or a Cluster. */
export type QueueConnection = string | QueueConnectionOptions;

const REDIS_URL = /^rediss?:\/\//;

/** Options of the object form, given to ioredis as they are: where Redis is, who connects, over what. */
const CONNECTION_KEYS: readonly string[] = ObjectFreeze([
  "url",
  "host",
  "port",
  "path",
  "family",
  "db",
  "username",
  "password",
  "tls",
  "connectTimeout",
  "keepAlive",
  "noDelay",
  "connectionName",
  "disconnectTimeout",
  "natMap",
  // Sentinel
  "sentinels",
  "name",
  "sentinelUsername",
  "sentinelPassword",
  "sentinelTLS",
  "enableTLSForSentinelMode",
  "sentinelCommandTimeout",
  "sentinelRetryStrategy",
  "updateSentinels",
  // Cluster
  "cluster",
  "dnsLookup",
]);

/** ioredis options the queue decides itself, each refused with the reason (never silently overridden). */
const OWNED_CONNECTION_KEYS: readonly (readonly [string, string])[] = ObjectFreeze([
  ["keyPrefix", "the queue's Redis names are made by toolgate and BullMQ: give options.prefix instead"],
  ["role", "the queue writes: it connects to the primary"],
  ["preferredSlaves", "the queue writes: it connects to the primary"],
  ["failoverDetector", "it can end a connection for good after a failover, which the queue's clients must survive"],
  ["lazyConnect", "toolgate/queue connects its clients itself, within connectTimeoutMs"],
  ["retryStrategy", "toolgate/queue reconnects its clients itself (redisLostMs bounds what a lost Redis costs)"],
  ["maxRetriesPerRequest", "toolgate/queue sets it (BullMQ's blocking connections need null)"],
  ["enableOfflineQueue", "toolgate/queue sets it per client"],
  ["commandTimeout", "toolgate/queue sets it per client (redisLostMs, lockDurationMs)"],
  ["enableReadyCheck", "toolgate/queue sets it"],
  ["autoResubscribe", "toolgate/queue relies on it"],
  ["autoResendUnfulfilledCommands", "toolgate/queue relies on it"],
  ["reconnectOnError", "toolgate/queue sets it"],
  ["readOnly", "the queue writes"],
]);

/**
 * `options.connection`: a redis:// URL, or an object of the options CONNECTION_KEYS lists (an
 * unknown one is refused naming the closest, one the queue sets is refused saying why); a
 * `cluster` and a server (`url`, `host`, `path`, `sentinels`) exclude each other. A frozen
 * copy, read once (own data properties only).
 */
export function readConnection(value: unknown): QueueConnection {
  if (typeof value === "string") {
    checkUrl(value, "options.connection");
    return value;
  }
  if (typeof value !== "object" || value === null || isProxy(value) || ArrayIsArray(value)) {
    invalidArgument(`options.connection must be a redis:// URL or an object of connection options (got ${describeValue(value)})`);
  }
  for (const [key, reason] of OWNED_CONNECTION_KEYS) {
    if (ObjectGetOwnPropertyDescriptor(value, key) !== undefined) invalidArgument(`options.connection.${key} is refused: ${reason}`);
  }
  const raw = readOptions(value, "options.connection", CONNECTION_KEYS);
  const copy: Record<string, unknown> = {};
  for (const key of CONNECTION_KEYS) if (raw[key] !== undefined) copy[key] = raw[key];
  const db = copy.db;
  if (db !== undefined && (typeof db !== "number" || !Number.isSafeInteger(db) || db < 0)) {
    invalidArgument(`options.connection.db must be a non-negative integer (got ${describeValue(db)})`);
  }
  if (copy.url !== undefined) {
    if (typeof copy.url !== "string")
      invalidArgument(`options.connection.url must be a redis:// or rediss:// URL (got ${describeValue(copy.url)})`);
    checkUrl(copy.url, "options.connection.url");
    for (const server of ["host", "port", "path", "sentinels"]) {
      if (copy[server] !== undefined) {
        invalidArgument(`options.connection.${server} cannot be given with options.connection.url, which says where the server is`);
      }
    }
  }
  if (copy.cluster !== undefined) {
    copy.cluster = readClusterNodes(copy.cluster);
    for (const server of ["url", "host", "port", "path", "sentinels", "name", "db"]) {
      if (copy[server] !== undefined) {
        invalidArgument(
          `options.connection.${server} cannot be given with options.connection.cluster (a Cluster's nodes are its startup nodes, and it has database 0 alone)`,
        );
      }
    }
  } else if (copy.dnsLookup !== undefined) {
    invalidArgument("options.connection.dnsLookup is a Cluster's: give it with options.connection.cluster");
  }
  if (copy.sentinels !== undefined) {
    if (!ArrayIsArray(copy.sentinels) || isProxy(copy.sentinels) || copy.sentinels.length === 0) {
      invalidArgument(`options.connection.sentinels must be a non-empty array of { host, port } (got ${describeValue(copy.sentinels)})`);
    }
    if (typeof copy.name !== "string" || copy.name.length === 0) {
      invalidArgument(`options.connection.name must name the primary the sentinels monitor (got ${describeValue(copy.name)})`);
    }
  }
  return ObjectFreeze(copy) as QueueConnection;
}

/** The cluster's startup nodes: a non-empty array of "host:port" strings or `{ host, port }` objects, copied. */
function readClusterNodes(value: unknown): readonly QueueClusterNode[] {
  if (!ArrayIsArray(value) || isProxy(value) || value.length === 0 || value.length > MAX_CLUSTER_NODES) {
    invalidArgument(
      `options.connection.cluster must be a non-empty array of at most ${MAX_CLUSTER_NODES} startup nodes ("host:port" or { host, port }) (got ${describeValue(value)})`,
    );
  }
  const nodes: QueueClusterNode[] = [];
  for (let index = 0; index < value.length; index += 1) {
    const node: unknown = ObjectGetOwnPropertyDescriptor(value, index)?.value;
    const name = `options.connection.cluster[${index}]`;
    if (typeof node === "string") {
      if (RegExpPrototypeExec(CLUSTER_NODE, node) === null)
        invalidArgument(`${name} must be "host:port" (got ${JSONStringify(node.slice(0, 64))})`);
      nodes[nodes.length] = node;
      continue;
    }
    const { host, port } = readOptions(node, name, ["host", "port"]);
    if (host !== undefined && (typeof host !== "string" || host.length === 0))
      invalidArgument(`${name}.host must be a non-empty string (got ${describeValue(host)})`);
    const portNumber = integerOr(port, `${name}.port`, { min: 1, max: 65_535, fallback: 6379 });
    nodes[nodes.length] = ObjectFreeze(host === undefined ? { port: portNumber } : { host: host as string, port: portNumber });
  }
  return ObjectFreeze(nodes);
}

const MAX_CLUSTER_NODES = 1000;
const CLUSTER_NODE = /^[^\s:]+:\d{1,5}$|^\[[0-9a-fA-F:.]+\]:\d{1,5}$/;

/** A URL's scheme, and the database it names. */
function checkUrl(value: string, name: string): void {
  if (RegExpPrototypeExec(REDIS_URL, value) === null) {
    invalidArgument(`${name} must be a redis:// or rediss:// URL (got ${JSONStringify(value.slice(0, 64))})`);
  }
  checkUrlDatabase(value);
}

/**
 * The database a URL names (its path, or a `db` query parameter) must be a number: ioredis
 * sends whatever it finds to SELECT, and a refused SELECT is an unhandled rejection inside
 * ioredis that would crash the process after the option check.
 */
function checkUrlDatabase(value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    invalidArgument("options.connection must be a parsable redis:// URL");
  }
  const path = url.pathname;
  const query = url.searchParams.get("db");
  if (!/^\/?(\d{1,9})?$/.test(path) || (query !== null && !/^\d{1,9}$/.test(query))) {
    invalidArgument(
      `options.connection must name its database as a number, redis://host:port/<db> (got the path ${JSON.stringify(path)}${query === null ? "" : ` and db=${JSON.stringify(query)}`})`,
    );
  }
}

const QUEUE_NAME_RULE = `options.queue must be a non-empty string of at most ${MAX_QUEUE_NAME_LENGTH} characters without ":", control characters or lone surrogates`;

/**
 * A BullMQ queue name: a part of every key of the queue, so it must pass the one check of key
 * parts (keys.ts: well-formed text that BullMQ and ioredis encode alike, no control characters,
 * no ":"), and be at most MAX_QUEUE_NAME_LENGTH characters.
 */
export function readQueueName(value: unknown): string {
  if (typeof value !== "string") invalidArgument(`${QUEUE_NAME_RULE} (got ${describeValue(value)})`);
  const problem = keyPartProblem(value, MAX_QUEUE_NAME_LENGTH);
  if (problem !== undefined) invalidArgument(`${QUEUE_NAME_RULE} (got ${JSONStringify(value.slice(0, 64))}, which ${problem})`);
  return value;
}

/** A millisecond option in [minimum, MAX_DELAY_MS] (the bound every executor uses), or its fallback when absent. */
export function durationOption(name: string, value: unknown, minimum: number, fallback: number): number {
  return integerOr(value, `options.${name}`, { min: minimum, max: MAX_DELAY_MS, fallback: fallback });
}

/** True when `connection` is a Redis Cluster's. */
export function isClusterConnection(
  connection: QueueConnection,
): connection is QueueConnectionOptions & { cluster: readonly QueueClusterNode[] } {
  return typeof connection === "object" && connection.cluster !== undefined;
}

const PREFIX_RULE = `options.prefix must be a non-empty string of at most ${MAX_PREFIX_LENGTH} characters without ":", control characters or lone surrogates`;

/**
 * `options.prefix`, the first part of every Redis name of the queue (BullMQ's and toolgate's):
 * a key part (keys.ts), "bull" when absent. On a Cluster it must be given, with a hash tag
 * (`{tools}`): each script of a queue touches several of its keys, which a Cluster runs only
 * when they share a slot, and BullMQ's Worker spins on CROSSSLOT errors otherwise.
 */
export function readPrefix(value: unknown, connection: QueueConnection): string {
  const cluster = isClusterConnection(connection);
  if (value === undefined) {
    if (cluster) {
      invalidArgument(
        'options.prefix must be given, with a hash tag such as "{tools}", when options.connection is a Redis Cluster: every script of a queue touches several of its keys, which a Cluster runs only when one hash tag puts them on one slot',
      );
    }
    return BULL_PREFIX;
  }
  if (typeof value !== "string") invalidArgument(`${PREFIX_RULE} (got ${describeValue(value)})`);
  const problem = keyPartProblem(value, MAX_PREFIX_LENGTH);
  if (problem !== undefined) invalidArgument(`${PREFIX_RULE} (got ${JSONStringify(value.slice(0, 64))}, which ${problem})`);
  if (cluster && hashTagOf(value) === undefined) {
    invalidArgument(
      `options.prefix must be hash-tagged, such as "{${value.replace(/[{}]/g, "") || "tools"}}", when options.connection is a Redis Cluster (got ${JSONStringify(value)}, which has no "{…}" with text inside): every script of a queue touches several of its keys, which a Cluster runs only on one slot`,
    );
  }
  return value;
}
