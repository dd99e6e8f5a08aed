// Durable calls on the QueueToolExecutor (docs/durable.md — On the queue): the semantics table
// row by row, with real Redis and worker hosts in this process. The records live in the
// queue's own Redis under its prefix; every tool counts its executions with an INCR outside
// the record and waits on a Redis gate when a test holds it mid-run.
import { Redis } from "ioredis";
import { type CallEndEvent, isNonRecoverableToolError, isToolContractError, type ToolResultMessage } from "toolgate";
import { QueueToolExecutor } from "toolgate/queue";
import { describe, expect, test } from "vitest";
import { durableKeyOf } from "../../dist/src/durable/key.js";
import { call, errorOf, neverAborted, settle } from "../support/helpers.js";
import { hasRedisServerBinary, startRedisServer } from "../support/redis.js";
import { DURABLE_TOOLS, durableTestbed } from "./durable-testbed.js";
import { monitorOf } from "./monitor.js";

const { url, redis, cleanups, unique, count, agent, host } = await durableTestbed();
const content = (result: ToolResultMessage): unknown => JSON.parse(result.content);

/** Resolves once `condition` holds (polled), or rejects after 10 s. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("the condition never held");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Resolves once `list` has `entries` entries (a tool reported it started). */
async function started(list: string, entries = 1): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await redis.llen(list)) < entries) {
    if (Date.now() > deadline) throw new Error(`${list} never reached ${entries} entries`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The record's fields as the test reads them straight from Redis (the default prefix: `toolgate:<queue>:durable:<key>`). */
async function recordState(queue: string, runId: string, callId: string): Promise<string | null> {
  return redis.hget(`toolgate:${queue}:durable:${durableKeyOf(runId, callId)}`, "state");
}

describe.runIf(url !== "")("durable calls on the queue: the semantics table", () => {
  test("nothing recorded → executed once (idempotencyKey and attempt reach the tool on its host); a re-issue → replayed, beforeExecute not asked", async () => {
    const queue = unique("durable");
    await host(queue);
    const events: CallEndEvent[] = [];
    const approvals: string[] = [];
    const executor = await agent(queue, {
      events,
      hooks: {
        beforeExecute: (toolCall) => {
          approvals.push(toolCall.id);
          return { allow: true };
        },
      },
    });
    const [counter, runId] = [unique("count"), unique("run")];
    const first = await executor.executeToolCall(call("charge", { counter, amount: 5 }, "c1"), neverAborted(), { durable: { runId } });
    expect(content(first)).toEqual({ charged: 5, attempt: 1, idempotencyKey: `tg:${durableKeyOf(runId, "c1")}` });
    // The same JSON with another key order: the same call.
    const again = await executor.executeToolCall(call("charge", { amount: 5, counter }, "c1"), neverAborted(), { durable: { runId } });
    expect(again.content).toBe(first.content);
    expect(Object.isFrozen(again)).toBe(true);
    expect(events.map((event) => event.durable)).toEqual(["executed", "replayed"]);
    expect(approvals).toEqual(["c1"]);
    expect(await count(counter)).toBe(1);
    expect(await recordState(queue, runId, "c1")).toBe("done");
  });

  test("operators: executor.durableCalls reads a record and forgets it (the next call runs); a bad key is refused", async () => {
    const queue = unique("durable");
    await host(queue);
    const executor = await agent(queue);
    const [counter, runId] = [unique("count"), unique("run")];
    expect(await executor.durableCalls.read({ runId, callId: "o1" })).toBeUndefined();
    const first = await executor.executeToolCall(call("charge", { counter, amount: 2 }, "o1"), neverAborted(), { durable: { runId } });
    const view = await executor.durableCalls.read({ runId, callId: "o1" });
    expect(view).toEqual({
      state: "done",
      toolName: "charge",
      attempt: 1,
      maxAttempts: 1,
      outcome: { fatal: false, content: first.content, isError: false, attachmentCount: 0 },
    });
    expect(Object.isFrozen(view)).toBe(true);
    expect(await executor.durableCalls.forget({ runId, callId: "o1" })).toBe(true);
    expect(await executor.durableCalls.forget({ runId, callId: "o1" })).toBe(false);
    await executor.executeToolCall(call("charge", { counter, amount: 2 }, "o1"), neverAborted(), { durable: { runId } });
    expect(await count(counter)).toBe(2);
    const refused = await executor.durableCalls.read({ runId, callId: "o1", extra: 1 } as never).catch((error: unknown) => error);
    expect(isToolContractError(refused) && refused.code).toBe("INVALID_ARGUMENT");
    expect(isToolContractError(refused) && refused.message).toContain("durableCalls.read");
  });

  test("a plain call on the same executor stores nothing and runs each time", async () => {
    const queue = unique("durable");
    await host(queue);
    const executor = await agent(queue);
    const counter = unique("count");
    await executor.executeToolCall(call("charge", { counter }, "p1"), neverAborted());
    await executor.executeToolCall(call("charge", { counter }, "p1"), neverAborted());
    expect(await count(counter)).toBe(2);
    expect(await redis.keys(`toolgate:${queue}:durable:*`)).toEqual([]);
  });

  test("a stored fatal rejects again with a genuine NonRecoverableToolError, without running", async () => {
    const queue = unique("durable");
    await host(queue);
    const executor = await agent(queue);
    const [counter, runId] = [unique("count"), unique("run")];
    const options = { durable: { runId } };
    const first = await settle(executor.executeToolCall(call("fatal", { counter }, "f1"), neverAborted(), options));
    const second = await settle(executor.executeToolCall(call("fatal", { counter }, "f1"), neverAborted(), options));
    for (const outcome of [first, second]) {
      expect(outcome.ok).toBe(false);
      const reason = (outcome as { reason: unknown }).reason;
      expect(isNonRecoverableToolError(reason)).toBe(true);
      expect((reason as Error).message).toBe(`invariant broken for ${counter}`);
    }
    expect(await count(counter)).toBe(1);
  });

  test("claimed or running, same fingerprint → attached: two agents, one execution, the same outcome", async () => {
    const queue = unique("durable");
    await host(queue);
    const eventsA: CallEndEvent[] = [];
    const eventsB: CallEndEvent[] = [];
    const a = await agent(queue, { events: eventsA });
    const b = await agent(queue, { events: eventsB });
    const [counter, gate, begun, runId] = [unique("count"), unique("gate"), unique("started"), unique("run")];
    const toolCall = call("charge", { counter, gate, started: begun }, "a1");
    const seen = await monitorOf(url, queue, cleanups);
    const first = a.executeToolCall(toolCall, neverAborted(), { durable: { runId } });
    await started(begun);
    const second = b.executeToolCall(toolCall, neverAborted(), { durable: { runId } });
    // b's claim found a's execution running (b's first claim goes out with its job: a second one follows): b attaches, then the gate opens.
    await until(() => seen.filter((command) => command.args.at(-1) === "claimed").length >= 2);
    expect(await recordState(queue, runId, "a1")).toBe("running");
    await redis.rpush(gate, "go");
    const [one, two] = await Promise.all([first, second]);
    expect(two.content).toBe(one.content);
    expect(eventsA.map((event) => event.durable)).toEqual(["executed"]);
    expect(eventsB.map((event) => event.durable)).toEqual(["attached"]);
    expect(await count(counter)).toBe(1);
  });

  test("any state, other fingerprint → DURABLE_CALL_CONFLICT naming the key and the stored tool; nothing runs, nothing changes", async () => {
    const queue = unique("durable");
    await host(queue);
    const executor = await agent(queue);
    const [counter, runId] = [unique("count"), unique("run")];
    await executor.executeToolCall(call("charge", { counter, amount: 1 }, "x1"), neverAborted(), { durable: { runId } });
    const conflict = await settle(
      executor.executeToolCall(call("charge", { counter, amount: 2 }, "x1"), neverAborted(), { durable: { runId } }),
    );
    const reason = (conflict as { reason: unknown }).reason;
    expect(isToolContractError(reason) && reason.code).toBe("DURABLE_CALL_CONFLICT");
    expect((reason as Error).message).toContain(durableKeyOf(runId, "x1"));
    expect((reason as Error).message).toContain('tool "charge"');
    expect((reason as Error).message).not.toContain("amount");
    expect(await count(counter)).toBe(1);
    expect(await recordState(queue, runId, "x1")).toBe("done");
  });

  test("unknown tools, invalid arguments and denials store nothing", async () => {
    const queue = unique("durable");
    await host(queue);
    const executor = await agent(queue, { hooks: { beforeExecute: () => ({ allow: false, reason: "no" }) } });
    const runId = unique("run");
    const options = { durable: { runId } };
    expect(errorOf(await executor.executeToolCall(call("nope", {}, "u1"), neverAborted(), options)).code).toBe("TOOL_NOT_FOUND");
    expect(errorOf(await executor.executeToolCall(call("charge", { counter: 1 }, "u2"), neverAborted(), options)).code).toBe(
      "TOOL_ARGUMENTS_INVALID",
    );
    const counter = unique("count");
    expect(errorOf(await executor.executeToolCall(call("charge", { counter }, "u3"), neverAborted(), options)).code).toBe(
      "TOOL_CALL_DENIED",
    );
    expect(await count(counter)).toBe(0);
    expect(await redis.keys(`toolgate:${queue}:durable:*`)).toEqual([]);
  });

  test("aborted before any host started it → released (the job never runs); a re-issue with a host up runs once", async () => {
    const queue = unique("durable");
    const executor = await agent(queue);
    const [counter, runId] = [unique("count"), unique("run")];
    const controller = new AbortController();
    const pending = settle(executor.executeToolCall(call("charge", { counter }, "r1"), controller.signal, { durable: { runId } }));
    // The claim is written before the job is enqueued: once the job waits, abort.
    const deadline = Date.now() + 5000;
    while ((await redis.llen(`bull:${queue}:wait`)) === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await recordState(queue, runId, "r1")).toBe("claimed");
    controller.abort(new Error("stop"));
    expect(await pending).toEqual({ ok: false, reason: new Error("stop") });
    expect(await recordState(queue, runId, "r1")).toBe("released");
    await host(queue);
    const events: CallEndEvent[] = [];
    const again = await (await agent(queue, { events })).executeToolCall(call("charge", { counter }, "r1"), neverAborted(), {
      durable: { runId },
    });
    expect(content(again)).toMatchObject({ attempt: 1 });
    expect(events.map((event) => event.durable)).toEqual(["executed"]);
    expect(await count(counter)).toBe(1);
  });

  test("aborted mid-run → lost (at-most-once): a re-issue gets the lost result, nothing runs again", async () => {
    const queue = unique("durable");
    await host(queue);
    const executor = await agent(queue);
    const [counter, gate, begun, runId] = [unique("count"), unique("gate"), unique("started"), unique("run")];
    const controller = new AbortController();
    const pending = settle(
      executor.executeToolCall(call("charge", { counter, gate, started: begun }, "m1"), controller.signal, { durable: { runId } }),
    );
    await started(begun);
    controller.abort(new Error("stop"));
    expect(await pending).toEqual({ ok: false, reason: new Error("stop") });
    const events: CallEndEvent[] = [];
    const later = await (await agent(queue, { events })).executeToolCall(
      call("charge", { counter, gate, started: begun }, "m1"),
      neverAborted(),
      {
        durable: { runId },
      },
    );
    expect(errorOf(later)).toEqual({
      code: "TOOL_EXECUTION_FAILED",
      message: "an earlier execution of this call was lost; the tool may have run, and it will not run again under this key",
    });
    expect(events.map((event) => event.durable)).toEqual(["lost"]);
    expect(await count(counter)).toBe(1);
  });

  test("a batch's members are durable under (runId, their own call id)", async () => {
    const queue = unique("durable");
    await host(queue);
    const executor = await agent(queue);
    const [counter, runId] = [unique("count"), unique("run")];
    const calls = [call("charge", { counter, amount: 1 }, "b1"), call("charge", { counter, amount: 2 }, "b2")];
    const first = await executor.executeBatch(calls, neverAborted(), { durable: { runId } });
    const second = await executor.executeBatch(calls, neverAborted(), { durable: { runId } });
    expect(second.map((result) => result.content)).toEqual(first.map((result) => result.content));
    expect(await count(counter)).toBe(2);
  });

  test("writeConcern: a claim fewer replicas acknowledged in time is given up (released), the tool did not run", async () => {
    const queue = unique("durable");
    await host(queue);
    const replicas = Number(/connected_slaves:(\d+)/.exec(await redis.info("replication"))?.[1] ?? 0);
    const executor = await agent(queue, { durable: { leaseMs: 1000, writeConcern: { replicas: replicas + 1, timeoutMs: 50 } } });
    const [counter, runId] = [unique("count"), unique("run")];
    const result = await executor.executeToolCall(call("charge", { counter }, "w1"), neverAborted(), { durable: { runId } });
    expect(errorOf(result)).toEqual({
      code: "TOOL_EXECUTION_FAILED",
      message: `the durable store could not be used (the claim was not acknowledged by ${replicas + 1} replicas within 50 ms (writeConcern)): the tool did not run`,
    });
    expect(await count(counter)).toBe(0);
    expect(await recordState(queue, runId, "w1")).toBe("released");
  });

  test("the executor option durable is validated: unknown keys, bounds, aof refused", async () => {
    const queue = unique("durable");
    const cases: [unknown, string][] = [
      [{ lease: 1 }, 'unknown option "lease"'],
      [{ retentionMs: 1 }, "options.durable.retentionMs must be an integer from 60000 to 2592000000 (got the number 1)"],
      [{ writeConcern: { replicas: 1, timeoutMs: 10, aof: true } }, "options.durable.writeConcern.aof is not offered"],
      [{ assumeNoEviction: "yes" }, "options.durable.assumeNoEviction must be a boolean"],
    ];
    for (const [durable, message] of cases) {
      const refused = await settle(QueueToolExecutor.create({ connection: url, queue, modules: [DURABLE_TOOLS], durable } as never));
      const reason = (refused as { reason: unknown }).reason;
      expect(isToolContractError(reason) && reason.code).toBe("INVALID_ARGUMENT");
      expect((reason as Error).message).toContain(message);
    }
  });
});

describe.runIf(url !== "" && hasRedisServerBinary())("durable calls on the queue: a Redis that may evict records", () => {
  test("maxmemory-policy allkeys-lru: create() refuses durable settings; without them the first durable call is refused; assumeNoEviction overrides", async () => {
    const server = await startRedisServer();
    cleanups.push(() => server.kill());
    const admin = new Redis(server.url);
    await admin.config("SET", "maxmemory-policy", "allkeys-lru");
    admin.disconnect();
    const queue = unique("durable");
    const refused = await settle(QueueToolExecutor.create({ connection: server.url, queue, modules: [DURABLE_TOOLS], durable: {} }));
    const reason = (refused as { reason: unknown }).reason;
    expect(isToolContractError(reason) && reason.code).toBe("INVALID_ARGUMENT");
    expect((reason as Error).message).toContain('maxmemory-policy is "allkeys-lru"');
    const plain = await QueueToolExecutor.create({ connection: server.url, queue, modules: [DURABLE_TOOLS] });
    cleanups.push(() => plain.close());
    const first = await settle(plain.executeToolCall(call("charge", { counter: "c" }, "e1"), neverAborted(), { durable: { runId: "r" } }));
    expect(isToolContractError((first as { reason: unknown }).reason)).toBe(true);
    const trusting = await QueueToolExecutor.create({
      connection: server.url,
      queue,
      modules: [DURABLE_TOOLS],
      durable: { assumeNoEviction: true },
    });
    await trusting.close();
  });
});
