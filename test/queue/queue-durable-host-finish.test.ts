import type { CallEndEvent } from "toolgate";
import { describe, expect, test } from "vitest";
import { durableKeyOf } from "../../dist/src/durable/key.js";
import { HOST_RECORDED_FIELD } from "../../dist/src/durable/scripts.js";
import { call, errorOf, neverAborted } from "../support/helpers.js";
import { durableTestbed } from "./durable-testbed.js";
import { monitorOf } from "./monitor.js";

const { url, redis, cleanups, unique, count, agent, host } = await durableTestbed();
const recordKey = (queue: string, runId: string, callId: string): string => `toolgate:${queue}:durable:${durableKeyOf(runId, callId)}`;

/** An agent and a host; the lease long enough (60 s) that no renewal comes between a test's steps. */
async function sides(queue: string, events?: CallEndEvent[]) {
  await host(queue, { threads: 1, lockDurationMs: 5000 });
  return agent(queue, { events, durable: { leaseMs: 60_000 } });
}

async function started(list: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await redis.llen(list)) === 0) {
    if (Date.now() > deadline) throw new Error(`${list} never started`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.runIf(url !== "")("durable queue calls: the host's outcome recorded beside the job's completion", () => {
  test("the host's write wins: the job's hash is marked with its id, and the agent writes nothing itself (one outcome write)", async () => {
    const queue = unique("finish");
    const executor = await sides(queue);
    const [counter, runId] = [unique("count"), unique("run")];
    const seen = await monitorOf(url, queue, cleanups);
    const result = await executor.executeToolCall(call("charge", { counter, amount: 4 }, "h1"), neverAborted(), { durable: { runId } });
    expect(JSON.parse(result.content)).toMatchObject({ charged: 4 });
    const record = recordKey(queue, runId, "h1");
    expect(await redis.hget(record, "state")).toBe("done");
    const jobId = (await redis.keys(`bull:${queue}:tg-*.durable`))[0] as string;
    expect(await redis.hget(jobId, HOST_RECORDED_FIELD)).toBe(jobId.slice(`bull:${queue}:`.length));
    // Only the host's write carries the outcome (MONITOR shows its JSON escaped): the agent's settle never went out.
    const writes = seen.filter((command) => command.args.includes(record) && command.args.some((arg) => arg.includes('\\"k\\":\\"r\\"')));
    expect(writes).toHaveLength(1);
    expect(await count(counter)).toBe(1);
  });

  test("a confirmation with two calls in flight: each durable job's mark is read in its HMGET, no HGET of its own", async () => {
    const queue = unique("finish");
    const events: CallEndEvent[] = [];
    // The heartbeat's own look (a script, no HMGET) would confirm a finished job first on a slow machine: it waits a minute here.
    await host(queue, { threads: 1, lockDurationMs: 5000 });
    const executor = await agent(queue, { events, durable: { leaseMs: 60_000 }, heartbeatMs: 60_000 });
    const [counter, gate, begun] = [unique("count"), unique("gate"), unique("started")];
    const seen = await monitorOf(url, queue, cleanups);
    const first = executor.executeToolCall(call("charge", { counter, gate, started: begun, amount: 1 }, "c1"), neverAborted(), {
      durable: { runId: unique("run") },
    });
    await started(begun);
    const second = executor.executeToolCall(call("charge", { counter, amount: 2 }, "c2"), neverAborted(), {
      durable: { runId: unique("run") },
    });
    // Both jobs exist before the first finishes: its confirmation is the usual one (two in flight), not the read behind XREAD.
    const deadline = Date.now() + 10_000;
    while ((await redis.keys(`bull:${queue}:tg-*.durable`)).length < 2) {
      if (Date.now() > deadline) throw new Error("the second job was never added");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await redis.rpush(gate, "go");
    const results = await Promise.all([first, second]);
    expect(results.map((result) => JSON.parse(result.content))).toMatchObject([{ charged: 1 }, { charged: 2 }]);
    expect(events.map((event) => event.durable)).toEqual(["executed", "executed"]);
    // The agent's commands, up to a marker of the test's own (MONITOR has caught up with everything before it).
    const marker = `bull:${queue}:test-caught-up`;
    await redis.exists(marker);
    while (!seen.some((command) => command.args.includes(marker))) await new Promise((resolve) => setTimeout(resolve, 10));
    const sent = seen.slice(
      0,
      seen.findIndex((command) => command.args.includes(marker)),
    );
    const jobs = (await redis.keys(`bull:${queue}:tg-*.durable`)).sort();
    for (const job of jobs) expect(await redis.hget(job, HOST_RECORDED_FIELD)).toBe(job.slice(`bull:${queue}:`.length));
    const named = (verb: string) =>
      sent.filter((command) => command.args[0]?.toLowerCase() === verb && command.args.includes(HOST_RECORDED_FIELD));
    expect([...new Set(named("hmget").map((command) => command.args[1]))].sort()).toEqual(jobs);
    expect(named("hget")).toEqual([]);
    expect(await count(counter)).toBe(2);
  });

  test("the record ended first (lost) while the tool ran: the host's write loses, no mark, the caller gets the record's lost answer, not the host's outcome", async () => {
    const queue = unique("finish");
    const events: CallEndEvent[] = [];
    const executor = await sides(queue, events);
    const [counter, gate, begun, runId] = [unique("count"), unique("gate"), unique("started"), unique("run")];
    const pending = executor.executeToolCall(call("charge", { counter, gate, started: begun, amount: 9 }, "l1"), neverAborted(), {
      durable: { runId },
    });
    await started(begun);
    const record = recordKey(queue, runId, "l1");
    expect(await redis.hget(record, "state")).toBe("running");
    // As an agent that saw the host's lease lapse would leave it; the gate opens in the same step, so the tool finishes next.
    await redis.multi().hset(record, "state", "lost").hdel(record, "token", "lease", "cancel").rpush(gate, "go").exec();
    const result = await pending;
    expect(errorOf(result)).toEqual({
      code: "TOOL_EXECUTION_FAILED",
      message: "an earlier execution of this call was lost; the tool may have run, and it will not run again under this key",
    });
    expect(events.map((event) => event.durable)).toEqual(["executed"]);
    // The host did answer with its outcome (the job completed with it), unmarked: the caller did not take it.
    const [jobKey] = await redis.keys(`bull:${queue}:tg-*.durable`);
    expect(await redis.hget(jobKey as string, "returnvalue")).toContain('\\"charged\\":9');
    expect(await redis.hget(jobKey as string, HOST_RECORDED_FIELD)).toBeNull();
    expect(await redis.hget(record, "state")).toBe("lost");
    const again = await executor.executeToolCall(call("charge", { counter, gate, started: begun, amount: 9 }, "l1"), neverAborted(), {
      durable: { runId },
    });
    expect(again.content).toBe(result.content);
    expect(await count(counter)).toBe(1);
  });
});
