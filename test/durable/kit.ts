// What the durable-call tests share: the fixture tools, executors over them with a store, the
// stores themselves (memory, and Redis under a key prefix of the test's own), and a Redis
// client to count executions and open gates.

import { Redis } from "ioredis";
import {
  type ExecutorOptions,
  InProcessToolExecutor,
  type ToolDefinition,
  type ToolExecutor,
  type ToolExecutorHooks,
  ToolRegistry,
} from "toolgate";
import { type DurableStore, memoryDurableStore, redisDurableStore } from "toolgate/durable";
import { WorkerToolExecutor } from "toolgate/worker";
import { findRedis, uniqueQueue } from "../support/redis.js";

export const TOOLS = new URL("./fixtures/durable-tools.mjs", import.meta.url);

const found = await findRedis();
/** The Redis the tests use (the shared one, or one started for this process). */
export const redisUrl = "url" in found ? found.url : undefined;
if (redisUrl !== undefined) process.env.DURABLE_TEST_REDIS = redisUrl;

export type StoreKind = "memory" | "redis";
export type ExecutorKind = "in-process" | "worker";

/** A store of `kind`; a Redis one under a prefix no other test uses. */
export function makeStore(kind: StoreKind, options: Record<string, unknown> = {}): { store: DurableStore; prefix: string } {
  const prefix = uniqueQueue("durable");
  if (kind === "memory") return { store: memoryDurableStore(options), prefix };
  if (redisUrl === undefined) throw new Error("no Redis for the durable tests");
  return { store: redisDurableStore({ connection: redisUrl, prefix, leaseMs: 1000, ...options }), prefix };
}

export async function makeExecutor(
  kind: ExecutorKind,
  store: DurableStore,
  options: Omit<ExecutorOptions, "durable"> & { hooks?: ToolExecutorHooks } = {},
): Promise<ToolExecutor> {
  if (kind === "worker") {
    return WorkerToolExecutor.create({ modules: [TOOLS], maxThreads: 2, abortGraceMs: 500, ...options, durable: { store } });
  }
  const { default: definitions } = (await import(TOOLS.href)) as { default: ToolDefinition[] };
  return new InProcessToolExecutor(new ToolRegistry(definitions), { ...options, durable: { store } });
}

/** The test's own Redis client. */
export function testRedis(): Redis {
  if (redisUrl === undefined) throw new Error("no Redis for the durable tests");
  return new Redis(redisUrl);
}

/** A name no other test uses (a counter, a gate). */
export const unique = (label: string): string => uniqueQueue(label);

/** Resolves once `list` has `count` entries (a tool reported it started), polling Redis. */
export async function started(redis: Redis, list: string, count = 1, ms = 10_000): Promise<string[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const entries = await redis.lrange(list, 0, -1);
    if (entries.length >= count) return entries;
    if (Date.now() > deadline) throw new Error(`${list} has ${entries.length} entries after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export async function count(redis: Redis, counter: string): Promise<number> {
  return Number((await redis.get(counter)) ?? 0);
}
