// Case 7: tool calls through Redis. A QueueToolExecutor with 1 and 2 `toolgate-worker`
// host processes (one thread each) against the peer, raw BullMQ doing the same no-op job
// (Queue.add + job.waitUntilFinished(QueueEvents), workers of concurrency 1 in as many
// processes), interleaved in one run. Sequential calls give the per-call latency; a window
// of calls in flight gives the throughput. Runs only when Redis answers at REDIS_URL
// (default redis://127.0.0.1:6379).
//
// This module is also the peer's worker process: `node queue.js --raw-bullmq-worker URL QUEUE`.
import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { Queue, QueueEvents, Worker } from "bullmq";
import { Redis } from "ioredis";
import type { ToolCall } from "toolgate";
import { QueueToolExecutor } from "toolgate/queue";
import { type CaseOptions, interleave, median, neverAborted, pairedRatios, round, type TargetCheck } from "../harness.js";
import { TOOLS_MODULE } from "../paths.js";
import { drive, startChild, stopChildren } from "./children.js";
import { benchDurable, type DurableResult, durableTargets } from "./durable-calls.js";
import { benchQueueSandbox, type SandboxResult, sandboxTargets } from "./queue-sandbox.js";

export interface QueueVariant {
  readonly hosts: number;
  readonly inFlight: number;
  readonly callsPerRound: number;
  readonly oursUsPerCall: number;
  readonly bullmqUsPerCall: number;
  readonly oursCallsPerSec: number;
  readonly bullmqCallsPerSec: number;
  /** Time per call, ours / raw BullMQ (median of per-round ratios). */
  readonly ratio: number;
}

export type QueueResult =
  | {
      readonly ran: true;
      readonly rounds: number;
      readonly variants: QueueVariant[];
      /** Side by side with BullMQ's sandboxed processor, on a private redis-server (queue-sandbox.ts). */
      readonly sandbox: SandboxResult;
      /** Durable calls beside plain ones, in-process (redisDurableStore) and on the queue (durable-calls.ts). */
      readonly durable: DurableResult;
      readonly targets: TargetCheck[];
    }
  | { readonly ran: false; readonly reason: string; readonly targets: TargetCheck[] };

const RAW_WORKER_FLAG = "--raw-bullmq-worker";
const SELF = fileURLToPath(import.meta.url);
const CLI = fileURLToPath(new URL("../../src/queue/cli.js", import.meta.url));
const WINDOW = 8;
/** The retention toolgate's jobs have (waitUntilFinished needs the finished job to still be there). */
const RAW_JOB_OPTIONS = { attempts: 1, removeOnComplete: { age: 600, count: 10_000 }, removeOnFail: { age: 600, count: 10_000 } };

const pingCall = (n: number): ToolCall => ({ type: "toolCall", id: `call-${n}`, name: "ping", arguments: { n } });

/** The peer's worker process: a bare BullMQ worker answering what toolgate's ping answers. */
async function runRawWorker(url: string, queue: string): Promise<void> {
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  const worker = new Worker(queue, async (job) => ({ pong: (job.data as { n?: unknown }).n ?? null }), { connection, concurrency: 1 });
  await worker.waitUntilReady();
  process.stdout.write("ready\n");
  process.once("SIGTERM", () => void worker.close().then(() => process.exit(0)));
}

if (process.argv[2] === RAW_WORKER_FLAG) await runRawWorker(process.argv[3] as string, process.argv[4] as string);

async function measureHosts(url: string, hosts: number, calls: number, rounds: number, warmupRounds: number): Promise<QueueVariant[]> {
  const oursQueue = `toolgate-bench-${randomUUID()}`;
  const rawQueue = `toolgate-bench-raw-${randomUUID()}`;
  const children: ChildProcess[] = [];
  const rawConnections = [new Redis(url, { maxRetriesPerRequest: null }), new Redis(url, { maxRetriesPerRequest: null })];
  const raw = new Queue(rawQueue, { connection: rawConnections[0] as Redis });
  const rawEvents = new QueueEvents(rawQueue, { connection: rawConnections[1] as Redis });
  let executor: QueueToolExecutor | undefined;
  try {
    for (let index = 0; index < hosts; index += 1) {
      children.push(await startChild([CLI, "--redis", url, "--queue", oursQueue, "--threads", "1", fileURLToPath(TOOLS_MODULE)], "ready"));
      children.push(await startChild([SELF, RAW_WORKER_FLAG, url, rawQueue], "ready"));
    }
    executor = await QueueToolExecutor.create({ connection: url, queue: oursQueue, modules: [TOOLS_MODULE] });
    await rawEvents.waitUntilReady();
    const signal = neverAborted();
    const ours = executor;
    const first = await ours.executeToolCall(pingCall(7), signal);
    const rawFirst = await (await raw.add("ping", { n: 7 }, RAW_JOB_OPTIONS)).waitUntilFinished(rawEvents);
    if (first.isError || first.content !== JSON.stringify(rawFirst)) throw new Error("queue benchmark: the two sides disagree");
    const oursCall = (n: number) => ours.executeToolCall(pingCall(n), signal);
    const rawCall = async (n: number) => (await raw.add("ping", { n }, RAW_JOB_OPTIONS)).waitUntilFinished(rawEvents);
    const variants: QueueVariant[] = [];
    for (const inFlight of [1, WINDOW]) {
      const us = await interleave(
        { ours: () => drive(calls, inFlight, oursCall), bullmq: () => drive(calls, inFlight, rawCall) },
        rounds,
        warmupRounds,
      );
      const oursUs = median(us.ours);
      const bullmqUs = median(us.bullmq);
      variants.push({
        hosts,
        inFlight,
        callsPerRound: calls,
        oursUsPerCall: round(oursUs, 1),
        bullmqUsPerCall: round(bullmqUs, 1),
        oursCallsPerSec: Math.round(1e6 / oursUs),
        bullmqCallsPerSec: Math.round(1e6 / bullmqUs),
        ratio: round(median(pairedRatios(us.ours, us.bullmq))),
      });
    }
    return variants;
  } finally {
    await executor?.close();
    await rawEvents.close();
    await raw.obliterate({ force: true }).catch(() => {});
    await raw.close();
    for (const connection of rawConnections) connection.disconnect();
    await stopChildren(children);
  }
}

async function answers(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 1000 });
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

export async function benchQueue(options: CaseOptions = {}): Promise<QueueResult> {
  const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  if (!(await answers(url))) return { ran: false, reason: `no Redis answers at ${url}`, targets: [] };
  const smoke = options.smoke === true;
  const rounds = smoke ? 1 : 7;
  const warmupRounds = smoke ? 0 : 1;
  const calls = smoke ? 16 : 400;
  const variants: QueueVariant[] = [];
  for (const hosts of [1, 2]) {
    options.log?.(`queue: ${hosts} host process${hosts === 1 ? "" : "es"}`);
    variants.push(...(await measureHosts(url, hosts, calls, rounds, warmupRounds)));
  }
  const sandbox = await benchQueueSandbox(options);
  const durable = await benchDurable(options);
  return {
    ran: true,
    rounds,
    variants,
    sandbox,
    durable,
    targets: [
      ...sandboxTargets(sandbox),
      ...durableTargets(durable),
      ...variants.map((variant) => ({
        id: `queue.hosts${variant.hosts}.inFlight${variant.inFlight}.ratio`,
        target: `ours/BullMQ (time per call, ${variant.hosts} host${variant.hosts === 1 ? "" : "s"}, ${variant.inFlight} in flight) (informational)`,
        value: variant.ratio,
        pass: true,
        note: "informational: no target is set; the peer is raw BullMQ without the boundary (no snapshot, validation, budgets or result linking)",
        informational: true,
      })),
    ],
  };
}
