// The two sides of the queue comparison with BullMQ's sandboxed processor, shared by the timed
// rounds (queue-sandbox.ts) and the exact Redis counts (queue-commands.ts): a private
// `redis-server` on a free loopback port, one `toolgate-worker` host with one thread and its
// agent, and BullMQ with a sandboxed processor (`useWorkerThreads: true`, concurrency 1) doing
// the same no-op as toolgate's `ping`, each side's worker in a process of its own.
//
// This module is also the peer's worker process: `node queue-sides.js --sandboxed-bullmq-worker URL QUEUE`.
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import { Queue, QueueEvents, Worker } from "bullmq";
import { Redis } from "ioredis";
import type { ToolCall } from "toolgate";
import { QueueToolExecutor } from "toolgate/queue";
import { neverAborted } from "../harness.js";
import { TOOLS_MODULE } from "../paths.js";
import { startChild, stopChildren } from "./children.js";

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

/** A private redis-server on a free port (nothing saved), once it answers PING. */
export async function startRedis(): Promise<{ url: string; port: number; stop: () => Promise<void> }> {
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
    port,
    stop: async () => {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/** Both sides ready on one server: a call of each, by number. */
export interface SandboxSides {
  readonly oursCall: (n: number) => Promise<unknown>;
  readonly peerCall: (n: number) => Promise<unknown>;
  /** A call on toolgate's side with `durable: { runId }` (durable-calls.ts). */
  readonly oursDurable: (call: ToolCall, runId: string) => Promise<{ isError: boolean; content: string }>;
  close(): Promise<void>;
}

/** Starts both sides' workers and clients on `url` (queues of their own), checked to answer alike. */
export async function openSides(url: string): Promise<SandboxSides> {
  const children: ChildProcess[] = [];
  const connections = [0, 1].map(() => new Redis(url, { maxRetriesPerRequest: null }));
  const [queueConnection, eventsConnection] = connections as [Redis, Redis];
  const oursQueue = `toolgate-bench-${randomUUID()}`;
  const peerQueue = `toolgate-bench-sandbox-${randomUUID()}`;
  const peer = new Queue(peerQueue, { connection: queueConnection });
  const peerEvents = new QueueEvents(peerQueue, { connection: eventsConnection });
  let executor: QueueToolExecutor | undefined;
  const close = async (): Promise<void> => {
    await executor?.close();
    await peerEvents.close();
    await peer.close();
    await stopChildren(children);
    for (const connection of connections) connection.disconnect();
  };
  try {
    children.push(await startChild([CLI, "--redis", url, "--queue", oursQueue, "--threads", "1", fileURLToPath(TOOLS_MODULE)], "ready"));
    children.push(await startChild([SELF, PEER_FLAG, url, peerQueue], "ready"));
    executor = await QueueToolExecutor.create({ connection: url, queue: oursQueue, modules: [TOOLS_MODULE] });
    await peerEvents.waitUntilReady();
    const ours = executor;
    const signal = neverAborted();
    const oursCall = (n: number) => ours.executeToolCall(pingCall(n), signal);
    const peerCall = async (n: number) => (await peer.add("ping", { n }, JOB_OPTIONS)).waitUntilFinished(peerEvents);
    const first = await oursCall(7);
    if (first.isError || first.content !== JSON.stringify(await peerCall(7))) throw new Error("queue benchmark: the two sides disagree");
    const oursDurable = (call: ToolCall, runId: string) => ours.executeToolCall(call, signal, { durable: { runId } });
    return { oursCall, peerCall, oursDurable, close };
  } catch (error) {
    await close();
    throw error;
  }
}
