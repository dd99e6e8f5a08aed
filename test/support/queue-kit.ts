// What the queue test files build the same way: hosts and agents on a queue of the test's own
// (closed after each test, whatever it did), a plain client of the test's own (a third party
// writing into Redis), and a bound on a promise so a hang fails the test instead of stalling it.
import { Redis } from "ioredis";
import { QueueToolExecutor, runToolWorkerHost, type ToolWorkerHost } from "toolgate/queue";
import { afterEach } from "vitest";

export type HostOptions = Partial<Parameters<typeof runToolWorkerHost>[0]>;
export type AgentOptions = Partial<Parameters<typeof QueueToolExecutor.create>[0]>;

export interface QueueKit {
  /** Run after the current test, last added first. */
  readonly cleanups: (() => Promise<unknown>)[];
  /** A host over the kit's modules: 2 threads, abortGraceMs 200, unless `options` say otherwise. */
  host(queue: string, options?: HostOptions): Promise<ToolWorkerHost>;
  /** An agent over the kit's modules: heartbeatMs 100, unless `options` say otherwise. */
  agent(queue: string, options?: AgentOptions): Promise<QueueToolExecutor>;
  client(): Redis;
}

/** The kit for one test file: Redis at `url`, tools from `modules`. Registers its own afterEach. */
export function queueKit(url: string, modules: readonly URL[]): QueueKit {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  });
  return {
    cleanups,
    async host(queue, options = {}) {
      const started = await runToolWorkerHost({ connection: url, queue, modules, threads: 2, abortGraceMs: 200, ...options });
      cleanups.push(() => started.close());
      return started;
    },
    async agent(queue, options = {}) {
      const executor = await QueueToolExecutor.create({ connection: url, queue, modules, heartbeatMs: 100, ...options });
      cleanups.push(() => executor.close());
      return executor;
    },
    client() {
      const connection = new Redis(url, { maxRetriesPerRequest: null });
      cleanups.push(async () => connection.disconnect());
      return connection;
    },
  };
}

/** `pending`, or a rejection naming `what` after `ms`. */
export function within<T>(pending: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    pending,
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
