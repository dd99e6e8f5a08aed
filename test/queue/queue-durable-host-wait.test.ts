// The write concern on the queue covers the host's start too (src/queue/durable.ts,
// QueueHostDurable.claim): a start no replica acknowledged is given up (released) before the
// tool runs. And the host's record: an outcome is answered only once a replica holds it. Without that, a failover that lost the start but kept the claim let the job,
// redelivered, start the at-most-once tool a second time (issue 44's failover trials found it).
// The race is forced by a hook: the agent's beforeExecute, which runs after the claim was
// acknowledged and before the job is enqueued, detaches the only replica.
import { Redis } from "ioredis";
import { QueueToolExecutor, runToolWorkerHost } from "toolgate/queue";
import { afterEach, describe, expect, test } from "vitest";
import { call, errorOf, neverAborted } from "../support/helpers.js";
import { hasRedisServerBinary } from "../support/redis.js";
import { startRedisNode } from "../support/redis-topologies.js";

const TOOLS = new URL("../durable/fixtures/durable-tools.mjs", import.meta.url);
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

describe.runIf(hasRedisServerBinary())("the queue's writeConcern at the host's start", () => {
  test("a start no replica acknowledged is released and the tool does not run; a re-issue with the replica back runs it once", async () => {
    const primaryNode = await startRedisNode({ name: "primary" });
    cleanups.push(() => primaryNode.stop());
    const replicaNode = await startRedisNode({ name: "replica" });
    cleanups.push(() => replicaNode.stop());
    const url = `redis://127.0.0.1:${primaryNode.node.port}`;
    process.env.DURABLE_TEST_REDIS = url; // the tools count on this server
    const redis = new Redis(url);
    const replica = new Redis(`redis://127.0.0.1:${replicaNode.node.port}`);
    cleanups.push(async () => {
      redis.disconnect();
      replica.disconnect();
    });
    const follow = async (): Promise<void> => {
      await replica.replicaof("127.0.0.1", String(primaryNode.node.port));
      const deadline = Date.now() + 10_000;
      while (!/master_link_status:up/.test(await replica.info("replication"))) {
        if (Date.now() > deadline) throw new Error("the replica never synced");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    await redis.config("SET", "repl-diskless-sync-delay", "0");
    await follow();
    const host = await runToolWorkerHost({
      connection: url,
      queue: "w",
      modules: [TOOLS],
      threads: 1,
      lockDurationMs: 1000,
      closeTimeoutMs: 500,
    });
    cleanups.push(() => host.close());
    let detach = true;
    let starts = 0;
    const executor = await QueueToolExecutor.create({
      connection: url,
      queue: "w",
      modules: [TOOLS],
      heartbeatMs: 100,
      redisLostMs: 2000,
      // timeoutMs: room for a loaded machine's replica to acknowledge, below the host's lockDurationMs.
      durable: { leaseMs: 10_000, writeConcern: { replicas: 1, timeoutMs: 800 } },
      hooks: {
        // The claim was acknowledged; the host's start will not be.
        beforeExecute: async () => {
          starts += 1;
          if (detach) await replica.replicaof("NO", "ONE");
          return { allow: true };
        },
      },
    });
    cleanups.push(() => executor.close());
    const [counter, runId] = ["count", "run"];
    const refused = await executor.executeToolCall(call("charge", { counter }, "s1"), neverAborted(), { durable: { runId } });
    // The host gave its start up and answered "not started"; the call claimed again, and that
    // claim, with the replica still gone, was not acknowledged.
    expect(errorOf(refused)).toEqual({
      code: "TOOL_EXECUTION_FAILED",
      message:
        "the durable store could not be used (the claim was not acknowledged by 1 replicas within 800 ms (writeConcern)): the tool did not run",
    });
    // Asked once: the first claim was acknowledged (the approval comes under it), the second was not.
    expect(starts).toBe(1);
    expect(Number(await redis.get(counter))).toBe(0);
    expect((await executor.durableCalls.read({ runId, callId: "s1" }))?.state).toBe("released");

    detach = false;
    await follow();
    const ran = await executor.executeToolCall(call("charge", { counter }, "s1"), neverAborted(), { durable: { runId } });
    expect(JSON.parse(ran.content)).toMatchObject({ attempt: 1 });
    expect(Number(await redis.get(counter))).toBe(1);

    // The record: the tool held on a gate, the replica detached meanwhile. The host records the
    // outcome; its WAIT falls short, so it writes and waits again (WAIT after WAIT on the
    // primary) and the call stays unanswered; once the replica follows again, the answer comes,
    // and the replica already holds the outcome (a failover now would keep it).
    const waits = async (): Promise<number> => Number(/cmdstat_wait:calls=(\d+)/.exec(await redis.info("commandstats"))?.[1] ?? 0);
    const [gate, begun] = ["gate", "begun"];
    let settled = false;
    const pending = executor
      .executeToolCall(call("charge", { counter, gate, started: begun }, "s2"), neverAborted(), { durable: { runId } })
      .finally(() => {
        settled = true;
      });
    while ((await redis.llen(begun)) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await replica.replicaof("NO", "ONE");
    const before = await waits();
    await redis.rpush(gate, "go");
    const deadline = Date.now() + 10_000;
    while ((await waits()) < before + 3) {
      if (Date.now() > deadline) throw new Error("the host never waited for its record a second time");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(settled).toBe(false);
    await follow();
    const answered = await pending;
    expect(JSON.parse(answered.content)).toMatchObject({ attempt: 1 });
    expect((await executor.durableCalls.read({ runId, callId: "s2" }))?.state).toBe("done");
    const replicated = await replica.keys("toolgate:w:durable:*"); // the records (BullMQ's job keys name durable jobs too)
    const states = await Promise.all(replicated.map((key) => replica.hget(key, "state")));
    expect(states.filter((state) => state === "done")).toHaveLength(2);
  });
});
