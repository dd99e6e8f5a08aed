// Every ToolExecutor the contract must hold for, as factories over one tool module, for
// `describe.each(EXECUTORS)`: a test written once runs against each implementation.
// A new executor is one more entry here; nothing else in the suites changes.
import { type ExecutorOptions, InProcessToolExecutor, type ToolDefinition, type ToolExecutor, ToolRegistry } from "toolgate";
import { QueueToolExecutor, runToolWorkerHost } from "toolgate/queue";
import { WorkerToolExecutor } from "toolgate/worker";
import { findRedis, uniqueQueue } from "./redis.js";

/** Makes an executor over the tool module at `modules[0]` (and the others, if any), with the shared executor options. */
export type ExecutorFactory = (modules: readonly URL[], options?: ExecutorOptions) => Promise<ToolExecutor>;

export async function inProcessExecutor(modules: readonly URL[], options?: ExecutorOptions): Promise<ToolExecutor> {
  const registry = new ToolRegistry();
  for (const url of modules) {
    const { default: definitions } = (await import(url.href)) as { default: ToolDefinition[] };
    registry.registerMany(definitions);
  }
  return new InProcessToolExecutor(registry, options);
}

export const workerPoolExecutor: ExecutorFactory = (modules, options) =>
  WorkerToolExecutor.create({ modules, maxThreads: 2, abortGraceMs: 500, ...options });

const redis = await findRedis();

/**
 * A worker host over the modules on a queue of its own, and a QueueToolExecutor on it with the
 * shared executor options (those it refuses are refused: docs/queue.md); close() closes both.
 * The executor is created first, so a refused option or a bad module starts no host.
 */
export async function queueExecutor(modules: readonly URL[], options?: ExecutorOptions): Promise<ToolExecutor> {
  if (!("url" in redis)) throw new Error(redis.unavailable);
  const queue = uniqueQueue("contract");
  // The shared executor options: the queue's own `durable` holds its settings, not a store (a store given is refused as unknown).
  const shared = options as Omit<ExecutorOptions, "durable"> | undefined;
  const executor = await QueueToolExecutor.create({ connection: redis.url, queue, modules, heartbeatMs: 200, ...shared });
  const host = await runToolWorkerHost({ connection: redis.url, queue, modules, threads: 2, abortGraceMs: 500 }).catch(
    async (error: unknown) => {
      await executor.close();
      throw error;
    },
  );
  return {
    get registry() {
      return executor.registry;
    },
    executeToolCall: (call, signal, options) => executor.executeToolCall(call, signal, options),
    executeBatch: (calls, signal, options) => executor.executeBatch(calls, signal, options),
    close: async () => {
      await executor.close();
      await host.close();
    },
  };
}

/** `[label, factory]` rows for `describe.each`: the executors that run in this process's realm. */
export const EXECUTORS: ReadonlyArray<readonly [string, ExecutorFactory]> = [
  ["in-process", inProcessExecutor],
  ["worker pool", workerPoolExecutor],
];

/**
 * The rows of the shared contract suite: every executor, the queue executor included when
 * Redis is reachable (see ./redis.ts). The queue executor does not yet run the suites that
 * patch this realm's built-ins or take per-executor options (BullMQ and ioredis run in it).
 */
export const CONTRACT_EXECUTORS: ReadonlyArray<readonly [string, ExecutorFactory]> = [
  ...EXECUTORS,
  ...("url" in redis ? [["queue (BullMQ on Redis)", queueExecutor] as const] : []),
];
