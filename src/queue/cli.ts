#!/usr/bin/env node
// toolgate-worker: a worker host as a command.
//   toolgate-worker --redis redis://127.0.0.1:6379 --queue tools [--prefix P] [--threads N]
//                   [--timeout MS] [--abort-grace MS] [--lock-duration MS] [--metrics-port N] [--fetch-stall MS]
//                   [--redis-ca ca.pem] [--cluster | --sentinel NAME] tools.js [more-tools.js ...]
// --redis may carry an ACL user and password (rediss://user:password@host:port); --redis-ca is
// the PEM file of the CA a rediss:// server's certificate must be signed by; --cluster makes the
// --redis URL one startup node of a Redis Cluster, --sentinel NAME a sentinel of the primary NAME;
// with either, --redis may be given more than once (more startup nodes, more sentinels).
// Prints one "ready" line on stdout once it consumes the queue; SIGINT or SIGTERM closes it
// gracefully (running jobs finish), a second signal exits at once.
// docs/queue.md — Topology (a worker host as a command), Options.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { describeValue } from "../contract/grammar.js";
import { describeFailure } from "../contract/untrusted.js";
import { closestKey, invalidArgument } from "../contract/validators.js";
import { describeServer } from "./connection.js";
import { runToolWorkerHost, type ToolWorkerHostOptions } from "./host.js";
import type { QueueConnection } from "./options.js";

const USAGE =
  "usage: toolgate-worker --redis redis[s]://[user:password@]host:port --queue NAME [--prefix P] [--threads N] [--timeout MS] [--abort-grace MS] [--lock-duration MS] [--metrics-port N] [--fetch-stall MS] [--redis-ca FILE] [--cluster | --sentinel NAME] tools.js [...]";

/** `--help`: every flag with its default, what the command reads besides its flags, an example. */
const HELP = `${USAGE}

Runs a toolgate worker host: consumes the queue NAME on Redis and runs each job's tool call in a
pool of worker threads, with the tools of the given modules (ES modules default-exporting tool
definitions; the agents' QueueToolExecutor must know the same tools).

  --redis URL            Redis to connect to, a redis:// or rediss:// URL, which may carry an ACL
                         user and password (rediss://user:password@host:port) (required)
  --queue NAME           the BullMQ queue of the agents' QueueToolExecutor, no ":" in it (required)
  --prefix P             the first part of every Redis name of the queue, shared with BullMQ; on a
                         Cluster hash-tagged, as {tools} (default: bull)
  --redis-ca FILE        the PEM file of the CA a rediss:// server's certificate must be signed by
                         (default: the system's CAs)
  --cluster              each --redis URL is a startup node of a Redis Cluster; --redis may be
                         given once per node (default: off)
  --sentinel NAME        each --redis URL is a sentinel of the primary NAME; --redis may be given
                         once per sentinel; excludes --cluster (default: none)
  --threads N            worker threads, 1 to 256 (default: the machine's available parallelism)
  --timeout MS           this host's default limit of a call in ms, 1 to 2147483647; a tool's own
                         and the limit a job carries override it (default: none)
  --abort-grace MS       after an abort or a timeout, how long a tool may run on before its thread
                         is terminated, 0 to 600000 (default: 1000)
  --lock-duration MS     lock of a running job, renewed at half of it; a host killed mid-job is
                         noticed once it expires, 500 to 600000 (default: 30000)
  --metrics-port N       serve GET /metrics (Prometheus text), /healthz and /readyz on this TCP port,
                         all interfaces, 0 to 65535 (0: a free port, printed on the ready line;
                         default: no server)
  --fetch-stall MS       a host with a thread free that takes no job this long while jobs wait in
                         its queue (or whose check of the queue Redis does not answer this long)
                         counts itself stuck: /readyz says why, and it makes its connections to
                         Redis again, 1000 to 600000 (default: 15000)
  --help                 this text

Environment: none of its own (Node's own, such as NODE_OPTIONS and NODE_EXTRA_CA_CERTS, apply).
Prints one "toolgate-worker ready" line on stdout once it consumes the queue; SIGINT or SIGTERM
closes it gracefully (running jobs finish), a second signal exits at once. Exit codes: 0 after a
graceful close or --help, 1 when it cannot start (Redis unreachable, a bad module), 2 for a bad
command line.

Example:
  toolgate-worker --redis redis://127.0.0.1:6379 --queue tools --threads 4 --timeout 30000 \\
    --metrics-port 9464 ./dist/tools.js
`;

const FLAGS = {
  redis: { type: "string", multiple: true },
  queue: { type: "string" },
  prefix: { type: "string" },
  "redis-ca": { type: "string" },
  cluster: { type: "boolean" },
  sentinel: { type: "string" },
  threads: { type: "string" },
  timeout: { type: "string" },
  "abort-grace": { type: "string" },
  "lock-duration": { type: "string" },
  "metrics-port": { type: "string" },
  "fetch-stall": { type: "string" },
  help: { type: "boolean" },
} as const;
const FLAG_NAMES: readonly string[] = Object.keys(FLAGS);

/** A number flag as the host's option (the host checks its range); anything but decimal digits is refused here. */
function numberFlag(values: Record<string, unknown>, flag: string): number | undefined {
  const value = values[flag];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !/^[0-9]{1,16}$/.test(value)) {
    invalidArgument(
      `--${flag} must be a whole number of decimal digits (got ${describeValue(value)}${typeof value === "string" ? ` ${JSON.stringify(value.slice(0, 32))}` : ""})`,
    );
  }
  return Number(value);
}

/**
 * The command line, strictly: an unknown flag is a ToolContractError(INVALID_ARGUMENT) naming
 * it and the flag it is closest to (`--timout`: did you mean `--timeout`?), never ignored.
 */
function parseCommandLine(): { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] } {
  const { values, positionals, tokens } = parseArgs({ allowPositionals: true, strict: false, tokens: true, options: FLAGS });
  for (const token of tokens) {
    if (token.kind !== "option") continue;
    if (!FLAG_NAMES.includes(token.name)) {
      const meant = closestKey(token.name, FLAG_NAMES);
      invalidArgument(
        `unknown option ${JSON.stringify(token.rawName)}${meant === undefined ? "" : ` (did you mean "--${meant}"?)`}; ${USAGE}`,
      );
    }
    const type = FLAGS[token.name as keyof typeof FLAGS].type;
    if (type === "string" && token.value === undefined) invalidArgument(`${token.rawName} needs a value; ${USAGE}`);
    if (type === "boolean" && token.value !== undefined) invalidArgument(`${token.rawName} takes no value; ${USAGE}`);
  }
  return { values: values as Record<string, string | boolean | string[] | undefined>, positionals };
}

/** "first", "second", "third", then "4th": which --redis a refusal is about. */
const ordinal = (index: number): string => ["first", "second", "third"][index] ?? `${index + 1}th`;

/**
 * The host's connection from the flags: the --redis URL as it is, or, with --redis-ca,
 * --cluster or --sentinel, the connection object they make of it (the URL's user and password
 * are every connection's; the host's option check reads the result).
 */
function connectionOf(urls: readonly string[], values: Record<string, unknown>): QueueConnection {
  const caFile = values["redis-ca"];
  const sentinel = values.sentinel;
  if (values.cluster === true && sentinel !== undefined) invalidArgument(`--cluster and --sentinel exclude each other; ${USAGE}`);
  const redis = urls[0] as string;
  if (urls.length > 1 && values.cluster !== true && sentinel === undefined) {
    invalidArgument(
      `--redis is given ${urls.length} times: more than one only with --cluster (startup nodes) or --sentinel (sentinels); ${USAGE}`,
    );
  }
  if (caFile === undefined && values.cluster !== true && sentinel === undefined) return redis;
  let ca: string | undefined;
  if (typeof caFile === "string") {
    if (!redis.startsWith("rediss://"))
      invalidArgument(`--redis-ca is the CA of a TLS server: give a rediss:// URL (got ${describeServer(redis)}); ${USAGE}`);
    try {
      ca = readFileSync(caFile, "utf8");
    } catch (error) {
      invalidArgument(`--redis-ca ${JSON.stringify(caFile)} cannot be read: ${describeFailure(error).text}`);
    }
  }
  if (values.cluster !== true && sentinel === undefined) return { url: redis, tls: { ca } };
  const parsed = urls.map((text, index) => {
    const url = URL.canParse(text) ? new URL(text) : undefined;
    if (url === undefined)
      invalidArgument(`--redis must be a parsable redis:// or rediss:// URL (the ${ordinal(index)} --redis); ${USAGE}`);
    return url;
  });
  const url = parsed[0] as URL;
  // One connection object holds one scheme and one user for every node: URLs that disagree would have some ignored.
  for (const [index, other] of parsed.entries()) {
    if (other.protocol !== url.protocol || other.username !== url.username || other.password !== url.password) {
      invalidArgument(
        `every --redis must have the scheme, user and password of the first (the ${ordinal(index)} has ${describeServer(urls[index] as string)}, the first ${describeServer(redis)}); ${USAGE}`,
      );
    }
  }
  const tls = url.protocol === "rediss:" ? { tls: ca === undefined ? {} : { ca } } : {};
  const credentials = {
    ...(url.username === "" ? {} : { username: decodeURIComponent(url.username) }),
    ...(url.password === "" ? {} : { password: decodeURIComponent(url.password) }),
  };
  if (values.cluster === true) return { cluster: parsed.map((node) => `${node.hostname}:${node.port || "6379"}`), ...credentials, ...tls };
  // The sentinels are reached as the primary is (TLS and the user); a sentinel of its own user is the options object's to say.
  return {
    sentinels: parsed.map((node) => ({ host: node.hostname, port: Number(node.port || "26379") })),
    name: String(sentinel),
    ...credentials,
    ...tls,
    ...(url.protocol === "rediss:" ? { enableTLSForSentinelMode: true, sentinelTLS: ca === undefined ? {} : { ca } } : {}),
  };
}

async function main(): Promise<void> {
  let parsed: ReturnType<typeof parseCommandLine>;
  let numbers: Record<string, number | undefined>;
  try {
    parsed = parseCommandLine();
    numbers = {
      threads: numberFlag(parsed.values, "threads"),
      timeoutMs: numberFlag(parsed.values, "timeout"),
      abortGraceMs: numberFlag(parsed.values, "abort-grace"),
      lockDurationMs: numberFlag(parsed.values, "lock-duration"),
      metricsPort: numberFlag(parsed.values, "metrics-port"),
      fetchStallMs: numberFlag(parsed.values, "fetch-stall"),
    };
  } catch (error) {
    process.stderr.write(`toolgate-worker: ${describeFailure(error).text}\n`);
    process.exitCode = 2;
    return;
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    process.stdout.write(HELP);
    return;
  }
  const redisUrls = Array.isArray(values.redis) ? values.redis.filter((url): url is string => typeof url === "string") : [];
  if (redisUrls.length === 0 || typeof values.queue !== "string" || positionals.length === 0) {
    const missing = redisUrls.length === 0 ? "--redis" : typeof values.queue !== "string" ? "--queue" : "a tool module";
    process.stderr.write(`toolgate-worker: ${missing} is required\n${USAGE}\n(--help describes every flag)\n`);
    process.exitCode = 2;
    return;
  }
  let connection: QueueConnection;
  try {
    connection = connectionOf(redisUrls, values);
  } catch (error) {
    process.stderr.write(`toolgate-worker: ${describeFailure(error).text}\n`);
    process.exitCode = 2;
    return;
  }
  const options: ToolWorkerHostOptions = {
    connection,
    queue: values.queue,
    ...(typeof values.prefix === "string" ? { prefix: values.prefix } : {}),
    modules: positionals,
    onError: (error) => process.stderr.write(`toolgate-worker: ${describeFailure(error).text}\n`),
    ...Object.fromEntries(Object.entries(numbers).filter(([, value]) => value !== undefined)),
  };
  const host = await runToolWorkerHost(options);
  const metrics = host.metricsPort === undefined ? "" : `, metrics on port ${host.metricsPort}`;
  process.stdout.write(
    `toolgate-worker ready: queue ${host.queue}, tools ${host.registry.names().join(", ")}, pid ${process.pid}${metrics}\n`,
  );
  let stopping = false;
  const stop = (): void => {
    if (stopping) process.exit(1);
    stopping = true;
    void host.close().then(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`toolgate-worker: ${describeFailure(error).text}\n`);
  process.exitCode = 1;
});
