// The exact cost in Redis of one call through the queue, toolgate against BullMQ's sandboxed
// processor (queue-sides.ts), on a private redis-server that no other client uses:
// - commands per call: the delta of INFO commandstats (the sum of every command's `calls`,
//   which counts the commands run inside Lua scripts too) over a block of calls;
// - bytes sent to Redis per call: the delta of INFO stats' `total_net_input_bytes`;
// both with the reading's own INFO taken out, at 1 and at 8 calls in flight, background
// polling of both sides included (a few commands a second, spread over the block's calls);
// - requests on a call's critical path: the calls go through a proxy that holds every chunk
//   a client sends for DELAY_MS before passing it on (Redis's answers pass at once), so a
//   sequential call takes one DELAY_MS per request that waits on the one before it; a
//   blocking read that wakes up (BZPOPMIN, XREAD) was sent before and adds nothing. The
//   figure is the median time per call over DELAY_MS, rounded to a whole request.
// Counts, not times: the load of the machine moves none of them (bar the background polling,
// within a tenth of a command).
//
// `node dist/bench/cases/queue-commands.js [--monitor]` prints the counts (and, with
// --monitor, the commands of one block of sequential calls by name and side).
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { type CaseOptions, median, now, round, type TargetCheck } from "../harness.js";
import { drive } from "./children.js";
import { freePort, openSides, type SandboxSides, startRedis } from "./queue-sides.js";

/** One side's cost per call at one number of calls in flight. */
export interface CallCost {
  readonly commands: number;
  readonly bytes: number;
}

export interface QueueCommandCounts {
  /** Calls counted per block. */
  readonly calls: { readonly inFlight1: number; readonly inFlight8: number };
  readonly inFlight1: { readonly ours: CallCost; readonly peer: CallCost };
  readonly inFlight8: { readonly ours: CallCost; readonly peer: CallCost };
  /** Requests on a sequential call's critical path, and the median time per call they were read from. */
  readonly criticalPath: {
    readonly ours: number;
    readonly peer: number;
    readonly delayMs: number;
    readonly oursMsPerCall: number;
    readonly peerMsPerCall: number;
  };
}

/** Issue 43's targets: at 1 in flight, commands, bytes and critical-path requests per call. */
const TARGET_COMMANDS_1 = 56;
const TARGET_BYTES_1 = 4800;
const TARGET_CRITICAL_PATH = 3;
/** How long the proxy holds what a client sends: far above a call's own work, so time / delay counts requests. */
export const DELAY_MS = 50;
/** The INFO reading itself: one command, and its bytes as RESP puts them on the wire. */
const READING_ARGS = ["INFO", "commandstats", "stats"];
const READING_BYTES = Buffer.byteLength(
  `*${READING_ARGS.length}\r\n${READING_ARGS.map((arg) => `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`).join("")}`,
);

interface ServerCounters {
  readonly commands: number;
  readonly bytes: number;
}

/** Every command the server has run (Lua's included) and every byte it has read from clients. */
async function serverCounters(client: Redis): Promise<ServerCounters> {
  const info = String(await client.call(...(READING_ARGS as [string, ...string[]])));
  let commands = 0;
  for (const match of info.matchAll(/calls=(\d+)/g)) commands += Number(match[1]);
  const bytes = Number(/total_net_input_bytes:(\d+)/.exec(info)?.[1] ?? Number.NaN);
  return { commands, bytes };
}

/** Commands and bytes per call of `one` over `calls` calls at `inFlight` (the second INFO reading taken out). */
export async function costPerCall(stats: Redis, calls: number, inFlight: number, one: (n: number) => Promise<unknown>): Promise<CallCost> {
  const before = await serverCounters(stats);
  await drive(calls, inFlight, one);
  const after = await serverCounters(stats);
  return {
    commands: round((after.commands - before.commands - 1) / calls, 2),
    bytes: round((after.bytes - before.bytes - READING_BYTES) / calls, 0),
  };
}

/** A TCP proxy to `port` that holds every chunk a client sends for `delayMs` (in order); answers pass at once. */
export async function startDelayProxy(port: number, delayMs: number): Promise<{ url: string; stop: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = tcpConnect(port, "127.0.0.1");
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on("data", (chunk) => setTimeout(() => upstream.write(chunk), delayMs));
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

/** Median ms per sequential call of `one`, after `warmup` calls. */
export async function msPerCall(one: (n: number) => Promise<unknown>, calls: number, warmup: number): Promise<number> {
  for (let n = 0; n < warmup; n += 1) await one(n);
  const times: number[] = [];
  for (let n = 0; n < calls; n += 1) {
    const start = now();
    await one(warmup + n);
    times.push(now() - start);
  }
  return median(times);
}

/** Commands of one block of sequential calls by name ("lua:" for those a script ran), most first: `--monitor`. */
async function monitorBlock(url: string, calls: number, one: (n: number) => Promise<unknown>): Promise<[string, number][]> {
  const monitorClient = new Redis(url);
  const monitor = await monitorClient.monitor();
  const byName = new Map<string, number>();
  monitor.on("monitor", (_time: string, args: string[], source: string) => {
    const name = `${source === "lua" ? "lua:" : ""}${String(args[0]).toUpperCase()}`;
    byName.set(name, (byName.get(name) ?? 0) + 1);
  });
  await drive(calls, 1, one);
  await new Promise((resolve) => setTimeout(resolve, 50));
  monitor.disconnect();
  monitorClient.disconnect();
  return [...byName].map(([name, count]): [string, number] => [name, round(count / calls, 2)]).sort((a, b) => b[1] - a[1]);
}

/** Counts both sides' cost per call (a redis-server of their own; none when there is no redis-server). */
export async function countQueueCommands(
  options: CaseOptions & { readonly monitor?: (side: string, rows: [string, number][]) => void } = {},
): Promise<QueueCommandCounts> {
  const smoke = options.smoke === true;
  const calls = { inFlight1: smoke ? 16 : 400, inFlight8: smoke ? 32 : 800 };
  const redis = await startRedis();
  const stats = new Redis(redis.url);
  let sides: SandboxSides | undefined;
  let delayed: SandboxSides | undefined;
  let proxy: Awaited<ReturnType<typeof startDelayProxy>> | undefined;
  try {
    options.log?.("queue: Redis commands and bytes per call (private redis-server)");
    sides = await openSides(redis.url);
    const { oursCall, peerCall } = sides;
    await drive(smoke ? 8 : 100, 8, oursCall);
    await drive(smoke ? 8 : 100, 8, peerCall);
    if (options.monitor !== undefined) {
      options.monitor("toolgate", await monitorBlock(redis.url, 100, oursCall));
      options.monitor("sandboxed BullMQ", await monitorBlock(redis.url, 100, peerCall));
    }
    const inFlight1 = {
      ours: await costPerCall(stats, calls.inFlight1, 1, oursCall),
      peer: await costPerCall(stats, calls.inFlight1, 1, peerCall),
    };
    const inFlight8 = {
      ours: await costPerCall(stats, calls.inFlight8, 8, oursCall),
      peer: await costPerCall(stats, calls.inFlight8, 8, peerCall),
    };
    await sides.close();
    sides = undefined;
    options.log?.(`queue: requests on a call's critical path (a proxy holding each request ${DELAY_MS} ms)`);
    proxy = await startDelayProxy(redis.port, DELAY_MS);
    delayed = await openSides(proxy.url);
    const pathCalls = smoke ? 3 : 11;
    const oursMs = await msPerCall(delayed.oursCall, pathCalls, 3);
    const peerMs = await msPerCall(delayed.peerCall, pathCalls, 3);
    return {
      calls,
      inFlight1,
      inFlight8,
      criticalPath: {
        ours: Math.round(oursMs / DELAY_MS),
        peer: Math.round(peerMs / DELAY_MS),
        delayMs: DELAY_MS,
        oursMsPerCall: round(oursMs, 1),
        peerMsPerCall: round(peerMs, 1),
      },
    };
  } finally {
    await sides?.close();
    await delayed?.close();
    await proxy?.stop();
    stats.disconnect();
    await redis.stop();
  }
}

/** Issue 43's rows: ours against its targets, the peer's beside it (informational). */
export function queueCommandTargets(counts: QueueCommandCounts): TargetCheck[] {
  const { inFlight1, inFlight8, criticalPath } = counts;
  const how1 = `INFO commandstats over ${counts.calls.inFlight1} sequential calls, Lua scripts' commands included`;
  const bytesHow = `INFO total_net_input_bytes over ${counts.calls.inFlight1} sequential calls`;
  const pathHow = `median time per sequential call with every request held ${criticalPath.delayMs} ms, over ${criticalPath.delayMs} ms (${criticalPath.oursMsPerCall} and ${criticalPath.peerMsPerCall} ms per call)`;
  const how8 = `INFO commandstats over ${counts.calls.inFlight8} calls, 8 in flight`;
  const peerRow = (id: string, what: string, value: number, note: string): TargetCheck => ({
    id,
    target: `${what}, sandboxed BullMQ (informational)`,
    value,
    pass: true,
    note,
    informational: true,
  });
  return [
    {
      id: "queue.commandsPerCall.inFlight1.ours",
      target: `Redis commands per call, 1 in flight <= ${TARGET_COMMANDS_1}`,
      value: inFlight1.ours.commands,
      pass: inFlight1.ours.commands <= TARGET_COMMANDS_1,
      note: `the sandboxed peer: ${inFlight1.peer.commands} (${how1})`,
    },
    peerRow("queue.commandsPerCall.inFlight1.peer", "Redis commands per call, 1 in flight", inFlight1.peer.commands, how1),
    {
      id: "queue.bytesPerCall.inFlight1.ours",
      target: `bytes sent to Redis per call, 1 in flight <= ${TARGET_BYTES_1}`,
      value: inFlight1.ours.bytes,
      pass: inFlight1.ours.bytes <= TARGET_BYTES_1,
      note: `the sandboxed peer: ${inFlight1.peer.bytes} (${bytesHow})`,
    },
    peerRow("queue.bytesPerCall.inFlight1.peer", "bytes sent to Redis per call, 1 in flight", inFlight1.peer.bytes, bytesHow),
    {
      id: "queue.criticalPathRequests.inFlight1.ours",
      target: `requests on a sequential call's critical path <= ${TARGET_CRITICAL_PATH}`,
      value: criticalPath.ours,
      pass: criticalPath.ours <= TARGET_CRITICAL_PATH,
      note: `the sandboxed peer: ${criticalPath.peer} (${pathHow})`,
    },
    peerRow("queue.criticalPathRequests.inFlight1.peer", "requests on a sequential call's critical path", criticalPath.peer, pathHow),
    {
      id: "queue.commandsPerCall.inFlight8.ours",
      target: "Redis commands per call, 8 in flight <= the sandboxed peer's",
      value: inFlight8.ours.commands,
      pass: inFlight8.ours.commands <= inFlight8.peer.commands,
      note: `the sandboxed peer: ${inFlight8.peer.commands} (${how8})`,
    },
    peerRow("queue.commandsPerCall.inFlight8.peer", "Redis commands per call, 8 in flight", inFlight8.peer.commands, how8),
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const monitor = process.argv.includes("--monitor");
  const counts = await countQueueCommands({
    log: (line) => process.stderr.write(`  … ${line}\n`),
    ...(monitor ? { monitor: (side: string, rows: [string, number][]) => process.stdout.write(`${side}: ${JSON.stringify(rows)}\n`) } : {}),
  });
  process.stdout.write(`${JSON.stringify(counts, null, 1)}\n`);
  process.exit(0);
}
