// Durable calls on a Redis Cluster of three primaries (issue 44 with issue 42): the record lives
// under the queue's hash-tagged prefix, so it shares the queue's slot (every script of the queue
// and every durable script touch one slot), and a durable call runs once and is replayed. The
// tools count their executions on the test's own (non-cluster) Redis.
import { Redis } from "ioredis";
import { QueueToolExecutor, runToolWorkerHost } from "toolgate/queue";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { durableKeyOf } from "../../dist/src/durable/key.js";
import { call, neverAborted } from "../support/helpers.js";
import { findRedis, hasRedisServerBinary, uniqueQueue } from "../support/redis.js";
import { primaryForKey, type RedisCluster, startRedisCluster } from "../support/redis-topologies.js";

const TOOLS = new URL("../durable/fixtures/durable-tools.mjs", import.meta.url);
const found = await findRedis();
const url = "url" in found ? found.url : "";
process.env.DURABLE_TEST_REDIS = url;

describe.runIf(url !== "" && hasRedisServerBinary())("durable calls on a 3-primary Redis Cluster", () => {
  let cluster: RedisCluster | undefined;
  let counters: Redis;
  beforeAll(async () => {
    counters = new Redis(url);
    cluster = await startRedisCluster({ withinMs: 30_000 });
  }, 40_000);
  afterAll(async () => {
    counters.disconnect();
    await cluster?.stop();
  });
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  });

  test("a durable call runs once, is replayed, and its record sits on the queue's slot", async () => {
    const live = cluster as RedisCluster;
    const connection = { cluster: live.startupNodes.map((node) => ({ ...node })) };
    const prefix = "{durable}";
    const host = await runToolWorkerHost({ connection, queue: "q", prefix, modules: [TOOLS], threads: 2 });
    cleanups.push(() => host.close());
    const executor = await QueueToolExecutor.create({ connection, queue: "q", prefix, modules: [TOOLS], durable: { leaseMs: 1000 } });
    cleanups.push(() => executor.close());
    const [counter, runId] = [uniqueQueue("count"), uniqueQueue("run")];
    const first = await executor.executeToolCall(call("charge", { counter }, "k1"), neverAborted(), { durable: { runId } });
    const again = await executor.executeToolCall(call("charge", { counter }, "k1"), neverAborted(), { durable: { runId } });
    expect(again.content).toBe(first.content);
    expect(JSON.parse(first.content)).toMatchObject({ attempt: 1 });
    expect(Number(await counters.get(counter))).toBe(1);
    const record = `${prefix}:q:toolgate:durable:${durableKeyOf(runId, "k1")}`;
    const [recordSlot, waitSlot] = await Promise.all([
      primaryForKey({ cluster: live, key: record }),
      primaryForKey({ cluster: live, key: `${prefix}:q:wait` }),
    ]);
    expect(recordSlot.slot).toBe(waitSlot.slot);
    const owner = new Redis({ host: "127.0.0.1", port: recordSlot.primary.port });
    try {
      expect(await owner.hget(record, "state")).toBe("done");
    } finally {
      owner.disconnect();
    }
  });
});
