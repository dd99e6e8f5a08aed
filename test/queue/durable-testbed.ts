// What the queue's durable-call tests share (queue-durable*.test.ts): the shared Redis (its url is
// "" when there is none: those files' tests then do not run) and a client on it, the durable
// fixture tools, the cleanups run after each test (last made, first closed), and an agent and a
// host with the short heartbeat, lease and lock the tests need (each closed after its test).
import { Redis } from "ioredis";
import type { CallEndEvent, ToolExecutorHooks } from "toolgate";
import {
  QueueToolExecutor,
  type QueueToolExecutorOptions,
  runToolWorkerHost,
  type ToolWorkerHost,
  type ToolWorkerHostOptions,
} from "toolgate/queue";
import { afterAll, afterEach } from "vitest";
import { findRedis, uniqueQueue } from "../support/redis.js";

export const DURABLE_TOOLS = new URL("../durable/fixtures/durable-tools.mjs", import.meta.url);

/** An agent's options in these tests: the executor's, plus the onCallEnd events to collect. */
export type TestAgentOptions = Partial<QueueToolExecutorOptions> & {
  readonly events?: CallEndEvent[] | undefined;
  readonly hooks?: ToolExecutorHooks;
};

/** Registers the file's hooks: call it once, at the top of a test file. */
export async function durableTestbed() {
  const found = await findRedis();
  const url = "url" in found ? found.url : "";
  process.env.DURABLE_TEST_REDIS = url; // the fixture tools' own client (their counters and gates)
  // Made only when there is a Redis; the files' tests run only then.
  const redis = (url === "" ? undefined : new Redis(url)) as Redis;
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  });
  afterAll(() => {
    redis?.disconnect();
  });

  async function agent(queue: string, { events, hooks = {}, ...options }: TestAgentOptions = {}): Promise<QueueToolExecutor> {
    const executor = await QueueToolExecutor.create({
      connection: url,
      queue,
      modules: [DURABLE_TOOLS],
      heartbeatMs: 100,
      redisLostMs: 2000,
      durable: { leaseMs: 1000 },
      hooks: events === undefined ? hooks : { ...hooks, onCallEnd: (event) => void events.push(event) },
      ...options,
    });
    cleanups.push(() => executor.close());
    return executor;
  }

  async function host(queue: string, options: Partial<ToolWorkerHostOptions> = {}): Promise<ToolWorkerHost> {
    const started = await runToolWorkerHost({
      connection: url,
      queue,
      modules: [DURABLE_TOOLS],
      threads: 2,
      lockDurationMs: 1000,
      closeTimeoutMs: 500,
      ...options,
    });
    cleanups.push(() => started.close());
    return started;
  }

  return {
    url,
    redis,
    cleanups,
    agent,
    host,
    unique: (label: string): string => uniqueQueue(label),
    count: async (counter: string): Promise<number> => Number((await redis.get(counter)) ?? 0),
  };
}
