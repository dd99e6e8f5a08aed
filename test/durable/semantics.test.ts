// The semantics table of docs/durable.md, row by row, for each store × each executor that
// takes a store (in-process, worker pool). Every tool counts its executions with an INCR
// outside the record, and waits on a Redis gate when a test holds it mid-run.

import type { Redis } from "ioredis";
import {
  type CallEndEvent,
  ContractErrorCode,
  isNonRecoverableToolError,
  isToolContractError,
  type ToolExecutor,
  type ToolResultMessage,
} from "toolgate";
import type { DurableStore } from "toolgate/durable";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { call, errorOf, neverAborted, settle } from "../support/helpers.js";
import { count, type ExecutorKind, makeExecutor, makeStore, redisUrl, type StoreKind, started, testRedis, unique } from "./kit.js";

const LOST = "an earlier execution of this call was lost; the tool may have run, and it will not run again under this key";
const CASES: [StoreKind, ExecutorKind][] = [
  ["memory", "in-process"],
  ["memory", "worker"],
  ["redis", "in-process"],
  ["redis", "worker"],
];

let redis: Redis;
beforeAll(() => {
  redis = testRedis();
});
afterAll(async () => {
  await redis.quit();
});

describe.runIf(redisUrl !== undefined).each(CASES)("%s store, %s executor", (storeKind, executorKind) => {
  let store: DurableStore;
  let executor: ToolExecutor;
  let events: CallEndEvent[];
  let approvals: string[];
  const open: ToolExecutor[] = [];

  async function another(options: Parameters<typeof makeExecutor>[2] = {}): Promise<ToolExecutor> {
    const made = await makeExecutor(executorKind, store, options);
    open.push(made);
    return made;
  }

  beforeAll(async () => {
    store = makeStore(storeKind).store;
  });
  afterAll(async () => {
    await store.close();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((made) => made.close()));
  });

  async function fresh(): Promise<ToolExecutor> {
    events = [];
    approvals = [];
    executor = await another({
      hooks: {
        onCallEnd: (event) => {
          events.push(event);
        },
        beforeExecute: (toolCall) => {
          approvals.push(toolCall.id);
          return { allow: true };
        },
      },
    });
    return executor;
  }

  const durable = (runId: string) => ({ durable: { runId } });

  test("nothing recorded: the call claims the key and runs once; a re-issue is replayed without asking beforeExecute", async () => {
    await fresh();
    const counter = unique("count");
    const runId = unique("run");
    const first = await executor.executeToolCall(call("charge", { counter, amount: 5 }, "c1"), neverAborted(), durable(runId));
    const again = await executor.executeToolCall(call("charge", { counter, amount: 5 }, "c1"), neverAborted(), durable(runId));
    expect(first.isError).toBe(false);
    const content = JSON.parse(first.content) as { charged: number; attempt: number; idempotencyKey: string };
    expect(content).toMatchObject({ charged: 5, attempt: 1 });
    expect(content.idempotencyKey).toMatch(/^tg:[0-9a-f]{64}$/);
    expect(again).toEqual(first);
    expect(Object.isFrozen(again)).toBe(true);
    expect(await count(redis, counter)).toBe(1);
    expect(approvals).toEqual(["c1"]);
    expect(events.map((event) => event.durable)).toEqual(["executed", "replayed"]);
    // A fresh executor over the same store (a restarted agent) is replayed too.
    const restarted = await another();
    expect(await restarted.executeToolCall(call("charge", { counter, amount: 5 }, "c1"), neverAborted(), durable(runId))).toEqual(first);
    expect(await count(redis, counter)).toBe(1);
  });

  test("the same call id under another run id is another key: it runs", async () => {
    await fresh();
    const counter = unique("count");
    await executor.executeToolCall(call("charge", { counter }, "c1"), neverAborted(), durable(unique("run")));
    await executor.executeToolCall(call("charge", { counter }, "c1"), neverAborted(), durable(unique("run")));
    expect(await count(redis, counter)).toBe(2);
  });

  test("claimed and running, same fingerprint: a re-issue attaches and gets the same outcome, the tool runs once", async () => {
    await fresh();
    const [counter, gate, begun, runId] = [unique("count"), unique("gate"), unique("started"), unique("run")];
    const args = { counter, gate, started: begun };
    const first = executor.executeToolCall(call("charge", args, "c1"), neverAborted(), durable(runId));
    await started(redis, begun);
    const second = executor.executeToolCall(call("charge", args, "c1"), neverAborted(), durable(runId));
    const third = (await another()).executeToolCall(call("charge", args, "c1"), neverAborted(), durable(runId));
    await redis.lpush(gate, "go");
    const results = await Promise.all([first, second, third]);
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
    expect(await count(redis, counter)).toBe(1);
    expect(events.map((event) => event.durable).sort()).toEqual(["attached", "executed"]);
  });

  test("done with a stored fatal: every re-issue rejects with a genuine NonRecoverableToolError, the tool not run again", async () => {
    await fresh();
    const [counter, runId] = [unique("count"), unique("run")];
    const first = await settle(executor.executeToolCall(call("fatal", { counter }, "c1"), neverAborted(), durable(runId)));
    const again = await settle((await another()).executeToolCall(call("fatal", { counter }, "c1"), neverAborted(), durable(runId)));
    for (const outcome of [first, again]) {
      expect(outcome.ok).toBe(false);
      const reason = (outcome as { reason: Error }).reason;
      expect(isNonRecoverableToolError(reason)).toBe(true);
      expect(reason.message).toBe(`invariant broken for ${counter}`);
    }
    expect(await count(redis, counter)).toBe(1);
  });

  test("lost (aborted mid-run), at-most-once: the aborting caller gets its reason, every later caller the lost result", async () => {
    await fresh();
    const [counter, gate, begun, runId] = [unique("count"), unique("gate"), unique("started"), unique("run")];
    const controller = new AbortController();
    const first = settle(
      executor.executeToolCall(call("charge", { counter, gate, started: begun }, "c1"), controller.signal, durable(runId)),
    );
    await started(redis, begun);
    const reason = new Error("stop");
    controller.abort(reason);
    expect(await first).toEqual({ ok: false, reason });
    for (const caller of [executor, await another()]) {
      const result = await caller.executeToolCall(call("charge", { counter, gate, started: begun }, "c1"), neverAborted(), durable(runId));
      expect(result.isError).toBe(true);
      expect(errorOf(result)).toEqual({ code: "TOOL_EXECUTION_FAILED", message: LOST });
    }
    expect(await count(redis, counter)).toBe(1);
    expect(events.at(-1)?.durable).toBe("lost");
  });

  test("lost, at-least-once with attempts left: a re-issue runs attempt 2 with the same idempotencyKey; then it is replayed", async () => {
    await fresh();
    const [counter, gate, begun, runId] = [unique("count"), unique("gate"), unique("started"), unique("run")];
    const args = { counter, gate, started: begun };
    const controller = new AbortController();
    const first = settle(executor.executeToolCall(call("retryable", args, "c1"), controller.signal, durable(runId)));
    await started(redis, begun);
    controller.abort(new Error("stop"));
    await first;
    const second = await executor.executeToolCall(call("retryable", args, "c1"), neverAborted(), durable(runId));
    const content = JSON.parse(second.content) as { attempt: number; idempotencyKey: string };
    expect(content.attempt).toBe(2);
    expect(await redis.lrange(begun, 0, -1)).toEqual(["1", "2"]);
    const third = await executor.executeToolCall(call("retryable", args, "c1"), neverAborted(), durable(runId));
    expect(third).toEqual(second);
    expect(await count(redis, counter)).toBe(2);
    const view = await store.read({ runId, callId: "c1" });
    expect(view).toMatchObject({ state: "done", toolName: "retryable", attempt: 2, maxAttempts: 3 });
  });

  test("released (aborted while beforeExecute decides, before the tool started): a re-issue claims again and runs once", async () => {
    const [counter, runId] = [unique("count"), unique("run")];
    let decide: (decision: { allow: true }) => void = () => {};
    const controller = new AbortController();
    const gated = await another({
      hooks: { beforeExecute: () => new Promise((resolve) => (decide = resolve)) },
    });
    const first = settle(gated.executeToolCall(call("charge", { counter }, "c1"), controller.signal, durable(runId)));
    await vitestWaitFor(async () => (await store.read({ runId, callId: "c1" }))?.state === "claimed");
    controller.abort(new Error("stop"));
    expect((await first).ok).toBe(false);
    decide({ allow: true });
    expect((await store.read({ runId, callId: "c1" }))?.state).toBe("released");
    const again = await (await fresh()).executeToolCall(call("charge", { counter }, "c1"), neverAborted(), durable(runId));
    expect(again.isError).toBe(false);
    expect(await count(redis, counter)).toBe(1);
  });

  test("another fingerprint under the key: DURABLE_CALL_CONFLICT naming the key and the stored tool, never the arguments; nothing runs or changes", async () => {
    await fresh();
    const [counter, runId] = [unique("count"), unique("run")];
    const first = await executor.executeToolCall(
      call("charge", { counter, amount: 1, secret: "hunter2" }, "c1"),
      neverAborted(),
      durable(runId),
    );
    const conflicts = [
      call("charge", { counter, amount: 2, secret: "hunter2" }, "c1"),
      call("fatal", { counter, amount: 1, secret: "hunter2" }, "c1"),
    ];
    for (const other of conflicts) {
      const outcome = await settle(executor.executeToolCall(other, neverAborted(), durable(runId)));
      expect(outcome.ok).toBe(false);
      const reason = (outcome as { reason: Error }).reason;
      expect(isToolContractError(reason) && reason.code).toBe(ContractErrorCode.DURABLE_CALL_CONFLICT);
      expect(reason.message).toContain('"charge"');
      expect(reason.message).toMatch(/durable key [0-9a-f]{64}/);
      expect(reason.message).not.toContain("hunter2");
    }
    // The same JSON with another key order and another spelling of its numbers: no conflict, replayed.
    const reordered = JSON.parse(`{"secret":"hunter2","amount":1.0,"counter":${JSON.stringify(counter)}}`) as Record<string, string>;
    expect(await executor.executeToolCall(call("charge", reordered, "c1"), neverAborted(), durable(runId))).toEqual(first);
    expect(await count(redis, counter)).toBe(1);
  });

  test("unknown tools, invalid arguments and denials store nothing: the next valid call under the key runs", async () => {
    const [counter, runId] = [unique("count"), unique("run")];
    const denying = await another({ hooks: { beforeExecute: () => ({ allow: false, reason: "no" }) } });
    expect(errorOf(await denying.executeToolCall(call("charge", { counter }, "c1"), neverAborted(), durable(runId))).code).toBe(
      "TOOL_CALL_DENIED",
    );
    expect(await store.read({ runId, callId: "c1" })).toBeUndefined();
    await fresh();
    expect(errorOf(await executor.executeToolCall(call("nope", {}, "c1"), neverAborted(), durable(runId))).code).toBe("TOOL_NOT_FOUND");
    expect(errorOf(await executor.executeToolCall(call("charge", { counter: 1 }, "c1"), neverAborted(), durable(runId))).code).toBe(
      "TOOL_ARGUMENTS_INVALID",
    );
    expect(await store.read({ runId, callId: "c1" })).toBeUndefined();
    expect((await executor.executeToolCall(call("charge", { counter }, "c1"), neverAborted(), durable(runId))).isError).toBe(false);
    expect(await count(redis, counter)).toBe(1);
  });

  test("a caller's time limit while attached ends the shared execution: every caller, now and later, gets TOOL_EXECUTION_TIMEOUT", async () => {
    await fresh();
    const [counter, gate, begun, runId] = [unique("count"), unique("gate"), unique("started"), unique("run")];
    const args = { counter, gate, started: begun };
    const first = executor.executeToolCall(call("charge", args, "c1"), neverAborted(), durable(runId));
    await started(redis, begun);
    const attached = await executor.executeToolCall(call("charge", args, "c1"), neverAborted(), { ...durable(runId), timeoutMs: 50 });
    expect(errorOf(attached).code).toBe("TOOL_EXECUTION_TIMEOUT");
    expect(await first).toEqual(attached);
    expect(await executor.executeToolCall(call("charge", args, "c1"), neverAborted(), durable(runId))).toEqual(attached);
    expect(await count(redis, counter)).toBe(1);
  });

  test("an attached caller's abort ends the shared execution: it rejects with its reason, the holder's caller gets the lost result", async () => {
    await fresh();
    const [counter, gate, begun, runId] = [unique("count"), unique("gate"), unique("started"), unique("run")];
    const args = { counter, gate, started: begun };
    const first = executor.executeToolCall(call("charge", args, "c1"), neverAborted(), durable(runId));
    await started(redis, begun);
    const controller = new AbortController();
    const attached = settle(executor.executeToolCall(call("charge", args, "c1"), controller.signal, durable(runId)));
    const reason = new Error("gave up");
    controller.abort(reason);
    expect(await attached).toEqual({ ok: false, reason });
    expect(errorOf(await first)).toEqual({ code: "TOOL_EXECUTION_FAILED", message: LOST });
    expect(await count(redis, counter)).toBe(1);
  });

  test("an outcome over the store's attachment budget is recorded as a clear error, which every caller gets", async () => {
    const small = makeStore(storeKind, { maxAttachmentBytes: 1000 }).store;
    try {
      const made = await makeExecutor(executorKind, small);
      open.push(made);
      const [counter, runId] = [unique("count"), unique("run")];
      const first = await made.executeToolCall(call("picture", { counter, bytes: 2000 }, "c1"), neverAborted(), durable(runId));
      expect(errorOf(first).code).toBe("TOOL_OUTPUT_SERIALIZATION_FAILED");
      expect(errorOf(first).message).toContain("durable store's budget of 1000 bytes");
      expect(await made.executeToolCall(call("picture", { counter, bytes: 2000 }, "c1"), neverAborted(), durable(runId))).toEqual(first);
      const fits = await made.executeToolCall(call("picture", { counter, bytes: 500 }, "c2"), neverAborted(), durable(runId));
      const replayed = await made.executeToolCall(call("picture", { counter, bytes: 500 }, "c2"), neverAborted(), durable(runId));
      expect(replayed.attachments?.[0]?.data).toEqual(new Uint8Array(500).fill(7));
      expect(replayed.attachments?.[0]?.data).not.toBe(fits.attachments?.[0]?.data);
      expect(replayed).toEqual(fits);
      expect(await count(redis, counter)).toBe(2);
    } finally {
      await small.close();
    }
  });

  test("audio and a named file with a URI are kept and replayed as they were, each an attachment of its own", async () => {
    await fresh();
    const [counter, runId] = [unique("count"), unique("run")];
    const first = await executor.executeToolCall(call("media", { counter }, "c1"), neverAborted(), durable(runId));
    expect(
      first.attachments?.map((part) => ({
        type: part.type,
        mimeType: part.mimeType,
        ...("name" in part ? { name: part.name, uri: part.uri } : {}),
      })),
    ).toEqual([
      { type: "audio", mimeType: "audio/wav" },
      { type: "file", mimeType: "application/pdf", name: "report.pdf", uri: "https://example.test/report.pdf" },
    ]);
    const replayed = await executor.executeToolCall(call("media", { counter }, "c1"), neverAborted(), durable(runId));
    expect(replayed).toEqual(first);
    expect(replayed.attachments?.[1]?.data).not.toBe(first.attachments?.[1]?.data);
    expect(Object.isFrozen(replayed.attachments?.[1])).toBe(true);
    expect(await count(redis, counter)).toBe(1);
  });

  test("a batch: each member is keyed by its own call id; re-issued, the whole batch is replayed", async () => {
    await fresh();
    const [counter, runId] = [unique("count"), unique("run")];
    const calls = [call("charge", { counter, amount: 1 }, "a"), call("charge", { counter, amount: 2 }, "b")];
    const first = await executor.executeBatch(calls, neverAborted(), durable(runId));
    const again = await executor.executeBatch(calls, neverAborted(), durable(runId));
    expect(again).toEqual(first);
    expect(first.map((result: ToolResultMessage) => result.toolCallId)).toEqual(["a", "b"]);
    expect(await count(redis, counter)).toBe(2);
  });

  test("operators: read a record, and forget it (the next call runs)", async () => {
    await fresh();
    const [counter, runId] = [unique("count"), unique("run")];
    await executor.executeToolCall(call("charge", { counter }, "c1"), neverAborted(), durable(runId));
    expect(await store.read({ runId, callId: "c1" })).toMatchObject({
      state: "done",
      toolName: "charge",
      attempt: 1,
      maxAttempts: 1,
      outcome: { fatal: false, isError: false, attachmentCount: 0 },
    });
    expect(await store.forget({ runId, callId: "c1" })).toBe(true);
    expect(await store.forget({ runId, callId: "c1" })).toBe(false);
    expect(await store.read({ runId, callId: "c1" })).toBeUndefined();
    await executor.executeToolCall(call("charge", { counter }, "c1"), neverAborted(), durable(runId));
    expect(await count(redis, counter)).toBe(2);
  });
});

async function vitestWaitFor(check: () => Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
