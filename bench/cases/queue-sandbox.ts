// The queue case, side by side with the fair peer: BullMQ with a sandboxed processor
// (`useWorkerThreads: true`: the job runs in a worker thread, BullMQ's own isolation), doing
// the same no-op as toolgate's `ping`, against one `toolgate-worker` host with one thread.
// Both run through a private `redis-server` on a free loopback port (no other client shares
// it), one worker process each, concurrency 1, interleaved in rotated rounds; the figure is
// the median of the per-round ratios of time per call, at 1 and at 8 calls in flight. Then
// Redis commands per call on each side: the INFO commandstats delta over a block of calls
// (commands run inside Lua scripts are counted there too), background polling included.
//
// This module is also the peer's worker process: `node queue-sandbox.js --sandboxed-bullmq-worker URL QUEUE`.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { Queue, QueueEvents, Worker } from "bullmq";
import { Redis } from "ioredis";
import type { ToolCall } from "toolgate";
import { QueueToolExecutor } from "toolgate/queue";
import { type CaseOptions, interleave, median, neverAborted, pairedRatios, round, type TargetCheck } from "../harness.js";
import { TOOLS_MODULE } from "../paths.js";
import { drive, startChild, stopChildren } from "./children.js";

export interface SandboxVariant {
  readonly inFlight: number;
  readonly callsPerRound: number;
  readonly oursUsPerCall: number;
  readonly peerUsPerCall: number;
  /** Time per call, ours / the sandboxed peer (median of per-round ratios). */
  readonly ratio: number;
}

export type SandboxResult =
  | {
      readonly ran: true;
      readonly rounds: number;
      readonly variants: SandboxVariant[];
      /** Redis commands per call (INFO commandstats delta, Lua scripts' own commands included). */
      readonly commandsPerCall: { readonly ours: number; readonly peer: number; readonly calls: number };
    }
  | { readonly ran: false; readonly reason: string };

/** Targets of issue 29: ours / the sandboxed peer, time per call. */
const TARGETS: Readonly<Record<number, number>> = { 1: 1.15, 8: 1.05 };
const PEER_FLAG = "--sandboxed-bullmq-worker";
const SELF = fileURLToPath(import.meta.url);
const PROCESSOR = fileURLToPath(new URL("../peers/bullmq-sandbox.js", import.meta.url));
const CLI = fileURLToPath(new URL("../../src/queue/cli.js", import.meta.url));
const JOB_OPTIONS = { attempts: 1, removeOnComplete: { age: 600, count: 10_000 }, removeOnFail: { age: 600, count: 10_000 } };

const pingCall = (n: number): ToolCall => ({ type: "toolCall", id: `call-${n}`, name: "ping", arguments: { n } });

async function runPeerWorker(url: string, queue: string): Promise<void> {
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  const worker = new Worker(queue, PROCESSOR, { connection, concurrency: 1, useWorkerThreads: true });
  await worker.waitUntilReady();
  process.stdout.write("ready\n");
  process.once("SIGTERM", () => void worker.close().then(() => process.exit(0)));
}

if (process.argv[2] === PEER_FLAG) await runPeerWorker(process.argv[3] as string, process.argv[4] as string);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}

/** A private redis-server on a free port (nothing saved), once it answers PING. */
async function startRedis(): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
    stdio: "ignore",
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 200 });
    probe.on("error", () => {});
    const up = await probe.connect().then(
      () => probe.ping(),
      () => undefined,
    );
    probe.disconnect();
    if (up === "PONG") break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`redis-server did not start on port ${port}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    url,
    stop: async () => {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/** Every command Redis has run so far (INFO commandstats: the sum of `calls=`). */
async function commandsSoFar(client: Redis): Promise<number> {
  const info = await client.info("commandstats");
  let total = 0;
  for (const match of info.matchAll(/calls=(\d+)/g)) total += Number(match[1]);
  return total;
}

/** Redis commands per call of `one`, over `calls` sequential calls (the INFO reads themselves taken out). */
async function commandsPerCall(client: Redis, calls: number, one: (n: number) => Promise<unknown>): Promise<number> {
  const before = await commandsSoFar(client);
  await drive(calls, 1, one);
  const after = await commandsSoFar(client);
  return (after - before - 1) / calls;
}

export async function benchQueueSandbox(options: CaseOptions = {}): Promise<SandboxResult> {
  if (spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status !== 0) {
    return { ran: false, reason: "no redis-server on PATH (the comparison runs on a private one)" };
  }
  const smoke = options.smoke === true;
  const rounds = smoke ? 1 : 9;
  const warmupRounds = smoke ? 0 : 1;
  const calls = smoke ? 16 : 300;
  const redis = await startRedis();
  const children: ChildProcess[] = [];
  const connections = [0, 1, 2].map(() => new Redis(redis.url, { maxRetriesPerRequest: null }));
  const [queueConnection, eventsConnection, statsConnection] = connections as [Redis, Redis, Redis];
  const oursQueue = `toolgate-bench-${randomUUID()}`;
  const peerQueue = `toolgate-bench-sandbox-${randomUUID()}`;
  const peer = new Queue(peerQueue, { connection: queueConnection });
  const peerEvents = new QueueEvents(peerQueue, { connection: eventsConnection });
  let executor: QueueToolExecutor | undefined;
  try {
    options.log?.("queue: vs BullMQ sandboxed (private redis-server)");
    children.push(
      await startChild([CLI, "--redis", redis.url, "--queue", oursQueue, "--threads", "1", fileURLToPath(TOOLS_MODULE)], "ready"),
    );
    children.push(await startChild([SELF, PEER_FLAG, redis.url, peerQueue], "ready"));
    executor = await QueueToolExecutor.create({ connection: redis.url, queue: oursQueue, modules: [TOOLS_MODULE] });
    await peerEvents.waitUntilReady();
    const ours = executor;
    const signal = neverAborted();
    const oursCall = (n: number) => ours.executeToolCall(pingCall(n), signal);
    const peerCall = async (n: number) => (await peer.add("ping", { n }, JOB_OPTIONS)).waitUntilFinished(peerEvents);
    const first = await oursCall(7);
    if (first.isError || first.content !== JSON.stringify(await peerCall(7))) throw new Error("queue benchmark: the two sides disagree");
    const variants: SandboxVariant[] = [];
    for (const inFlight of [1, 8]) {
      const us = await interleave(
        { ours: () => drive(calls, inFlight, oursCall), peer: () => drive(calls, inFlight, peerCall) },
        rounds,
        warmupRounds,
      );
      variants.push({
        inFlight,
        callsPerRound: calls,
        oursUsPerCall: round(median(us.ours), 1),
        peerUsPerCall: round(median(us.peer), 1),
        ratio: round(median(pairedRatios(us.ours, us.peer))),
      });
    }
    const counted = smoke ? 16 : 200;
    const commands = {
      ours: round(await commandsPerCall(statsConnection, counted, oursCall), 1),
      peer: round(await commandsPerCall(statsConnection, counted, peerCall), 1),
      calls: counted,
    };
    return { ran: true, rounds, variants, commandsPerCall: commands };
  } finally {
    await executor?.close();
    await peerEvents.close();
    await peer.close();
    await stopChildren(children);
    for (const connection of connections) connection.disconnect();
    await redis.stop();
  }
}

/** The section's target rows: the two ratios against issue 29's targets, and the command counts (informational). */
export function sandboxTargets(result: SandboxResult): TargetCheck[] {
  if (!result.ran) return [];
  return [
    ...result.variants.map((variant) => {
      const target = TARGETS[variant.inFlight] as number;
      const pass = variant.ratio <= target;
      return {
        id: `queue.vsSandbox${variant.inFlight}`,
        target: `ours/BullMQ sandboxed (time per call, 1 host thread, ${variant.inFlight} in flight) <= ${target}`,
        value: variant.ratio,
        pass,
        ...(pass ? {} : { note: `${variant.oursUsPerCall} µs vs ${variant.peerUsPerCall} µs per call` }),
      };
    }),
    {
      id: "queue.commandsPerCall.ours",
      target: "Redis commands per call, toolgate (informational)",
      value: result.commandsPerCall.ours,
      pass: true,
      note: `the sandboxed peer: ${result.commandsPerCall.peer} (INFO commandstats over ${result.commandsPerCall.calls} sequential calls, Lua scripts' commands included)`,
      informational: true,
    },
  ];
}
