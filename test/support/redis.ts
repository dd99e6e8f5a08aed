// Redis for the queue tests: the server at REDIS_URL (default redis://127.0.0.1:6379), or
// a `redis-server` from PATH started on a free loopback port for this test process. When
// neither exists the queue suites say so and do not run, unless TOOLGATE_REQUIRE_REDIS=1
// (set by .ci/run), where a missing Redis fails the run.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { Redis } from "ioredis";

/** A redis-server this test process started (and stops). */
export interface RedisServer {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** Kills the server at once (SIGKILL: nothing is saved, as in a crash, unless `appendOnlyDir` was given). */
  kill(): Promise<void>;
}

/** How `startRedisServer` runs the server. */
export interface RedisServerOptions {
  /** Addresses to listen on besides 127.0.0.1 (the root end of a test's network namespace link). */
  readonly bind?: readonly string[];
  /** Keep the data in an append-only file there, written at every command: a restart finds it. */
  readonly appendOnlyDir?: string;
}

export type RedisAvailability = { readonly url: string } | { readonly unavailable: string };

const DEFAULT_URL = "redis://127.0.0.1:6379";

/** True when a server answers PING at `url` within `ms`. */
export async function answersPing(url: string, ms = 1000): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, retryStrategy: () => null, connectTimeout: ms, maxRetriesPerRequest: 0 });
  client.on("error", () => {});
  try {
    await client.connect();
    return (await client.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** A loopback port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}

export const hasRedisServerBinary = (): boolean => spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status === 0;

/**
 * Starts `redis-server` on `port` (a free one by default), keeping nothing on disk unless
 * told to, and resolves once it answers. Killed when this process exits.
 */
export async function startRedisServer(port?: number, options: RedisServerOptions = {}): Promise<RedisServer> {
  const chosen = port ?? (await freePort());
  const persistence =
    options.appendOnlyDir === undefined
      ? ["--appendonly", "no"]
      : ["--appendonly", "yes", "--appendfsync", "always", "--dir", options.appendOnlyDir];
  const child: ChildProcess = spawn(
    "redis-server",
    [
      "--port",
      String(chosen),
      "--bind",
      ["127.0.0.1", ...(options.bind ?? [])].join(" "),
      "--protected-mode",
      "no",
      "--save",
      "",
      ...persistence,
      "--daemonize",
      "no",
    ],
    { stdio: "ignore" },
  );
  const killAtExit = (): void => {
    child.kill("SIGKILL");
  };
  process.once("exit", killAtExit);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `redis://127.0.0.1:${chosen}`;
  const deadline = Date.now() + 10_000;
  while (!(await answersPing(url, 200))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`redis-server did not start on port ${chosen}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    url,
    port: chosen,
    pid: child.pid as number,
    async kill() {
      process.removeListener("exit", killAtExit);
      if (child.exitCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

let availability: Promise<RedisAvailability> | undefined;

/** The Redis the queue tests use, found once per test process. */
export function findRedis(): Promise<RedisAvailability> {
  availability ??= (async (): Promise<RedisAvailability> => {
    const url = process.env.REDIS_URL ?? DEFAULT_URL;
    if (await answersPing(url)) return { url };
    if (hasRedisServerBinary()) return { url: (await startRedisServer()).url };
    const unavailable = `no Redis answers at ${url} and no redis-server is on PATH`;
    if (process.env.TOOLGATE_REQUIRE_REDIS === "1") throw new Error(`TOOLGATE_REQUIRE_REDIS=1: ${unavailable}`);
    process.stderr.write(`\n*** toolgate queue tests DID NOT RUN: ${unavailable} (set REDIS_URL, or install redis-server) ***\n\n`);
    return { unavailable };
  })();
  return availability;
}

/** A queue name no other test (or test process) uses. */
export const uniqueQueue = (label: string): string => `toolgate-test-${label}-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
