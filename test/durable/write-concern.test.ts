// redisDurableStore's write concern: after a claim, WAIT for `replicas` at most `timeoutMs`; a
// claim fewer replicas acknowledged is given up (released: the tool did not run), and one a
// replica acknowledged runs. A replica of the test's own (REPLICAOF) makes the second case; the
// first asks for one replica more than the server has. Both servers run in directories of their
// own (a replica's full sync writes an RDB file there).
import { Redis } from "ioredis";
import { InProcessToolExecutor, type ToolDefinition, ToolRegistry } from "toolgate";
import { redisDurableStore } from "toolgate/durable";
import { afterEach, describe, expect, test } from "vitest";
import { durableKeyOf } from "../../dist/src/durable/key.js";
import { call, errorOf, neverAborted } from "../support/helpers.js";
import { hasRedisServerBinary, uniqueQueue } from "../support/redis.js";
import { startRedisNode } from "../support/redis-topologies.js";
import { TOOLS } from "./kit.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

async function executorOn(url: string, replicas: number) {
  const prefix = uniqueQueue("durable");
  const store = redisDurableStore({ connection: url, prefix, leaseMs: 1000, writeConcern: { replicas, timeoutMs: 1000 } });
  const { default: definitions } = (await import(TOOLS.href)) as { default: ToolDefinition[] };
  const executor = new InProcessToolExecutor(new ToolRegistry(definitions), { durable: { store } });
  cleanups.push(async () => {
    await executor.close();
    await store.close();
  });
  return { executor, prefix };
}

describe.runIf(hasRedisServerBinary())("redisDurableStore's writeConcern", () => {
  test("a claim no replica acknowledged is released and the tool does not run; with a replica in sync it runs once", async () => {
    const primaryNode = await startRedisNode({ name: "primary" });
    cleanups.push(() => primaryNode.stop());
    const primary = { url: `redis://127.0.0.1:${primaryNode.node.port}`, port: primaryNode.node.port };
    process.env.DURABLE_TEST_REDIS = primary.url; // the tools count on this server
    const redis = new Redis(primary.url);
    cleanups.push(async () => redis.disconnect());
    const [counter, runId] = [uniqueQueue("count"), uniqueQueue("run")];
    const lonely = await executorOn(primary.url, 1);
    const refused = await lonely.executor.executeToolCall(call("charge", { counter }, "w1"), neverAborted(), { durable: { runId } });
    expect(errorOf(refused)).toEqual({
      code: "TOOL_EXECUTION_FAILED",
      message:
        "the durable store could not be used (the claim was not acknowledged by 1 replicas within 1000 ms (writeConcern)): the tool did not run",
    });
    expect(await redis.hget(`${lonely.prefix}:durable:${durableKeyOf(runId, "w1")}`, "state")).toBe("released");
    expect(Number(await redis.get(counter))).toBe(0);

    const replica = await startRedisNode({ name: "replica" });
    cleanups.push(() => replica.stop());
    const follower = new Redis(`redis://127.0.0.1:${replica.node.port}`);
    cleanups.push(async () => follower.disconnect());
    await follower.replicaof("127.0.0.1", String(primary.port));
    const deadline = Date.now() + 10_000;
    while (!/master_link_status:up/.test(await follower.info("replication"))) {
      if (Date.now() > deadline) throw new Error("the replica never synced");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const replicated = await executorOn(primary.url, 1);
    const ran = await replicated.executor.executeToolCall(call("charge", { counter }, "w2"), neverAborted(), { durable: { runId } });
    expect(JSON.parse(ran.content)).toMatchObject({ attempt: 1 });
    expect(Number(await redis.get(counter))).toBe(1);
    // The record reached the replica before the call was answered.
    expect(await follower.hget(`${replicated.prefix}:durable:${durableKeyOf(runId, "w2")}`, "state")).toBe("done");
  });
});
