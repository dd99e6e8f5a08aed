// memoryDurableStore's bound: at most maxRecords records; past it the oldest finished record
// goes first, and when every record is still running a new claim fails without running its tool.

import type { Redis } from "ioredis";
import type { ToolExecutor } from "toolgate";
import { memoryDurableStore } from "toolgate/durable";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { call, errorOf, neverAborted } from "../support/helpers.js";
import { count, makeExecutor, redisUrl, started, testRedis, unique } from "./kit.js";

let redis: Redis;
beforeAll(() => {
  redis = testRedis();
});
afterAll(async () => {
  await redis.quit();
});

describe.runIf(redisUrl !== undefined)("memoryDurableStore({ maxRecords })", () => {
  test("past maxRecords the oldest finished record goes first: its re-issue runs again, the newer ones replay", async () => {
    const store = memoryDurableStore({ maxRecords: 2 });
    const executor: ToolExecutor = await makeExecutor("in-process", store);
    const [counter, runId] = [unique("count"), unique("run")];
    for (const id of ["a", "b", "c"])
      await executor.executeToolCall(call("charge", { counter }, id), neverAborted(), { durable: { runId } });
    expect(await store.read({ runId, callId: "a" })).toBeUndefined();
    expect((await store.read({ runId, callId: "b" }))?.state).toBe("done");
    await executor.executeToolCall(call("charge", { counter }, "c"), neverAborted(), { durable: { runId } });
    expect(await count(redis, counter)).toBe(3);
    await executor.executeToolCall(call("charge", { counter }, "a"), neverAborted(), { durable: { runId } });
    expect(await count(redis, counter)).toBe(4);
    await executor.close();
  });

  test("every record still running: a new claim fails with TOOL_EXECUTION_FAILED and its tool does not run", async () => {
    const store = memoryDurableStore({ maxRecords: 1 });
    const executor = await makeExecutor("in-process", store);
    const [counter, gate, begun, runId] = [unique("count"), unique("gate"), unique("started"), unique("run")];
    const running = executor.executeToolCall(call("charge", { counter, gate, started: begun }, "a"), neverAborted(), {
      durable: { runId },
    });
    await started(redis, begun);
    const refused = await executor.executeToolCall(call("charge", { counter }, "b"), neverAborted(), { durable: { runId } });
    expect(errorOf(refused)).toEqual({
      code: "TOOL_EXECUTION_FAILED",
      message: "the durable store is full: it holds 1 records (maxRecords), every one still running; the tool did not run",
    });
    await redis.lpush(gate, "go");
    expect((await running).isError).toBe(false);
    expect(await count(redis, counter)).toBe(1);
    await executor.close();
  });
});
