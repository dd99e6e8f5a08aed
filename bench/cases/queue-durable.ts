// A durable queue call beside a plain one (issue 42, Performance), on a private redis-server
// that no other client uses, through one QueueToolExecutor and one host process:
// - commands per call: the delta of INFO commandstats (Lua's own commands included) over a
//   block of calls, the reading's own INFO taken out, at 1 and at 8 calls in flight;
// - requests on a call's critical path: the calls go through a proxy that holds every chunk a
//   client sends for DELAY_MS (answers pass at once), so a sequential call takes one DELAY_MS
//   per request that waits on the one before it; the median time per call over DELAY_MS,
//   rounded to a whole request (the method of queue-commands.ts);
// - wall time per call at 1 and 8 in flight (this machine's load moves it; the counts above do not).
// Each durable call has a key of its own (a fresh run id): every one claims, runs and records.
//
// `node dist/bench/cases/queue-durable.js [--smoke]` prints the figures as JSON.
import { randomUUID } from "node:crypto";
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import type { ToolCall } from "toolgate";
import { QueueToolExecutor } from "toolgate/queue";
import { median, neverAborted, now, round } from "../harness.js";
import { TOOLS_MODULE } from "../paths.js";
import { drive, startChild, stopChildren } from "./children.js";
import { freePort, startRedis } from "./queue-sides.js";

const CLI = fileURLToPath(new URL("../../src/queue/cli.js", import.meta.url));
const DELAY_MS = 50;

/** One kind of call's figures. */
export interface DurableCallCost {
  readonly commands1: number;
  readonly commands8: number;
  readonly criticalPath: number;
  readonly usPerCall1: number;
  readonly usPerCall8: number;
}

const pingCall = (n: number): ToolCall => ({ type: "toolCall", id: `call-${n}`, name: "ping", arguments: { n } });

/** Every command the server has run, Lua's included. */
async function commandsRun(client: Redis): Promise<number> {
  const info = String(await client.call("INFO", "commandstats"));
  let commands = 0;
  for (const match of info.matchAll(/calls=(\d+)/g)) commands += Number(match[1]);
  return commands;
}

/** Commands per call of `one` over `calls` calls at `inFlight` (the second reading taken out), and µs per call. */
async function cost(stats: Redis, calls: number, inFlight: number, one: (n: number) => Promise<unknown>): Promise<[number, number]> {
  const before = await commandsRun(stats);
  const us = await drive(calls, inFlight, one);
  const after = await commandsRun(stats);
  return [round((after - before - 1) / calls, 2), round(us, 0)];
}

/** A TCP proxy to `port` that holds every chunk a client sends for DELAY_MS, in order; answers pass at once. */
async function delayProxy(port: number): Promise<{ url: string; stop: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = tcpConnect(port, "127.0.0.1");
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on("data", (chunk) => setTimeout(() => upstream.write(chunk), DELAY_MS));
    upstream.on("data", (chunk) => client.write(chunk));
  });
  const proxyPort = await freePort();
  await new Promise<void>((resolve) => server.listen(proxyPort, "127.0.0.1", resolve));
  return {
    url: `redis://127.0.0.1:${proxyPort}`,
    stop: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** An agent and a one-thread host process on `url`, and the two kinds of call. */
async function openSide(url: string) {
  const queue = `toolgate-bench-durable-${randomUUID()}`;
  const host = await startChild([CLI, "--redis", url, "--queue", queue, "--threads", "1", fileURLToPath(TOOLS_MODULE)], "ready");
  const executor = await QueueToolExecutor.create({ connection: url, queue, modules: [TOOLS_MODULE], durable: {} });
  const signal = neverAborted();
  const run = randomUUID();
  return {
    plain: (n: number) => executor.executeToolCall(pingCall(n), signal),
    durable: (n: number) => executor.executeToolCall(pingCall(n), signal, { durable: { runId: `${run}-${n}` } }),
    close: async () => {
      await executor.close();
      await stopChildren([host]);
    },
  };
}

/** Median ms per sequential call of `one` (after 3 warm-up calls). */
async function msPerCall(one: (n: number) => Promise<unknown>, calls: number, from: number): Promise<number> {
  for (let n = 0; n < 3; n += 1) await one(from + n);
  const times: number[] = [];
  for (let n = 0; n < calls; n += 1) {
    const start = now();
    await one(from + 3 + n);
    times.push(now() - start);
  }
  return median(times);
}

export async function measureDurableQueueCalls(smoke = false): Promise<{ plain: DurableCallCost; durable: DurableCallCost }> {
  const [calls1, calls8] = smoke ? [16, 32] : [300, 600];
  const redis = await startRedis();
  const stats = new Redis(redis.url);
  try {
    const side = await openSide(redis.url);
    const figures: Record<"plain" | "durable", [number, number, number, number]> = { plain: [0, 0, 0, 0], durable: [0, 0, 0, 0] };
    try {
      for (const kind of ["plain", "durable"] as const) {
        const one = side[kind];
        await drive(smoke ? 8 : 100, 8, (n) => one(1_000_000 + n)); // warm-up
        const [c1, us1] = await cost(stats, calls1, 1, one);
        const [c8, us8] = await cost(stats, calls8, 8, (n) => one(2_000_000 + n));
        figures[kind] = [c1, c8, us1, us8];
      }
    } finally {
      await side.close();
    }
    const proxy = await delayProxy(redis.port);
    const delayed = await openSide(proxy.url);
    const paths: Record<"plain" | "durable", number> = { plain: 0, durable: 0 };
    try {
      for (const kind of ["plain", "durable"] as const) paths[kind] = await msPerCall(delayed[kind], smoke ? 3 : 11, 3_000_000);
    } finally {
      await delayed.close();
      await proxy.stop();
    }
    const of = (kind: "plain" | "durable"): DurableCallCost => {
      const [commands1, commands8, usPerCall1, usPerCall8] = figures[kind];
      return { commands1, commands8, criticalPath: Math.round(paths[kind] / DELAY_MS), usPerCall1, usPerCall8 };
    };
    return { plain: of("plain"), durable: of("durable") };
  } finally {
    stats.disconnect();
    await redis.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${JSON.stringify(await measureDurableQueueCalls(process.argv.includes("--smoke")), null, 1)}\n`);
  process.exit(0);
}
