// Hostile inputs to durable calls: records forged in Redis (read back as untrusted, through one
// bounded reader), arguments behind getters and arguments changed after the call, 50 concurrent
// re-issues of one key, and an attached caller in another "process" (its own store object)
// that stops the shared execution through Redis.

import type { Redis } from "ioredis";
import { ContractErrorCode, isToolContractError, type ToolExecutor } from "toolgate";
import type { DurableStore } from "toolgate/durable";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { durableKeyOf, fingerprintOf } from "../../dist/src/durable/key.js";
import { call, errorOf, neverAborted, settle } from "../support/helpers.js";
import { count, type ExecutorKind, makeExecutor, makeStore, redisUrl, type StoreKind, started, testRedis, unique } from "./kit.js";

const DAMAGED =
  "the durable record of this call is damaged (not one toolgate wrote): the tool did not run, and will not run under this key until an operator forgets the record";

let redis: Redis;
const closers: (() => Promise<unknown>)[] = [];
beforeAll(() => {
  redis = testRedis();
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(async () => {
  await redis.quit();
});

async function executorOn(kind: ExecutorKind, store: DurableStore): Promise<ToolExecutor> {
  const made = await makeExecutor(kind, store);
  closers.push(() => made.close());
  return made;
}

function redisStore(options: Record<string, unknown> = {}): { store: DurableStore; prefix: string } {
  const made = makeStore("redis", options);
  closers.push(() => made.store.close());
  return made;
}

describe.runIf(redisUrl !== undefined)("records forged in Redis are read as untrusted", () => {
  const runId = "forged-run";
  const args = { counter: "never-counted" };

  async function forge(fields: Record<string, string> | string): Promise<{ executor: ToolExecutor; store: DurableStore; counter: string }> {
    const { store, prefix } = redisStore();
    const counter = unique("count");
    const name = `${prefix}:durable:${durableKeyOf(runId, "c1")}`;
    if (typeof fields === "string") await redis.set(name, fields);
    else await redis.hset(name, fields);
    return { executor: await executorOn("in-process", store), store, counter };
  }

  const outcomeWith = (attachments: unknown[]) => JSON.stringify({ k: "r", c: "x", e: 0, a: attachments });
  const good = () => ({
    v: "1",
    state: "done",
    fp: fingerprintOf("charge", args),
    tool: "charge",
    attempt: "1",
    max: "1",
    outcome: JSON.stringify({ k: "r", c: "forged but well-formed", e: 0, a: [] }),
  });

  test.each([
    ["a key of another type (a string)", "not a hash"],
    ["an outcome that is not JSON", { ...good(), outcome: "{not json" }],
    ["an outcome of another kind", { ...good(), outcome: JSON.stringify({ k: "x" }) }],
    ["non-canonical base64 in an image", { ...good(), outcome: outcomeWith([["image", "image/png", "QR==", null, null]]) }],
    ["an image of another MIME type", { ...good(), outcome: outcomeWith([["image", "text/html", "QUFB", null, null]]) }],
    ["a file of a type toolgate does not carry", { ...good(), outcome: outcomeWith([["file", "text/html", "QUFB", null, null]]) }],
    ["audio declared as a file type", { ...good(), outcome: outcomeWith([["audio", "application/pdf", "QUFB", null, null]]) }],
    ["an image with a file name", { ...good(), outcome: outcomeWith([["image", "image/png", "QUFB", "a.png", null]]) }],
    ["a file name of 256 characters", { ...good(), outcome: outcomeWith([["file", "text/plain", "QUFB", "n".repeat(256), null]]) }],
    ["an attachment of the earlier two-field form", { ...good(), outcome: outcomeWith([["image/png", "QUFB"]]) }],
    ["257 images", { ...good(), outcome: outcomeWith(Array(257).fill(["image", "image/png", "QUFB", null, null])) }],
    ["an attempt spelled 1e3", { ...good(), attempt: "1e3" }],
    ["an attempt of 0", { ...good(), attempt: "0" }],
    ["a fingerprint that is not a digest", { ...good(), fp: "zz" }],
    ["an unknown state", { ...good(), state: "finished" }],
    ["a tool name of 5000 characters", { ...good(), tool: "t".repeat(5000) }],
  ])("%s: the call gets the damaged result, the tool does not run, an operator's read rejects", async (_label, fields) => {
    const { executor, store, counter } = await forge(fields);
    const result = await executor.executeToolCall(call("charge", { ...args }, "c1"), neverAborted(), { durable: { runId } });
    expect(errorOf(result)).toEqual({ code: "TOOL_EXECUTION_FAILED", message: DAMAGED });
    expect(await count(redis, counter)).toBe(0);
    await expect(store.read({ runId, callId: "c1" })).rejects.toThrow("damaged");
    // An operator forgets it: the next call runs.
    expect(await store.forget({ runId, callId: "c1" })).toBe(true);
    const counted = await executor.executeToolCall(call("charge", { counter }, "c1"), neverAborted(), { durable: { runId } });
    expect(counted.isError).toBe(false);
    expect(await count(redis, counter)).toBe(1);
  });

  test("a well-formed forged outcome is replayed as written (write access to Redis is trust: docs/durable.md), re-linked to this call", async () => {
    const { executor } = await forge(good());
    const result = await executor.executeToolCall(call("charge", { ...args }, "c1"), neverAborted(), { durable: { runId } });
    expect(result).toMatchObject({ toolCallId: "c1", toolName: "charge", content: "forged but well-formed", isError: false });
  });

  test("a forged attachment whose bytes are not its declared type: the record decodes, the replay's adoption refuses it (OUTPUT_SERIALIZATION_FAILED)", async () => {
    // "AAA" is no WAV file: the record's reader checks shape and type names, the adopter the bytes.
    const { executor } = await forge({ ...good(), outcome: outcomeWith([["audio", "audio/wav", "QUFB", null, null]]) });
    const result = await executor.executeToolCall(call("charge", { ...args }, "c1"), neverAborted(), { durable: { runId } });
    expect(errorOf(result).code).toBe("TOOL_OUTPUT_SERIALIZATION_FAILED");
    expect(result.attachments ?? []).toEqual([]);
  });

  test("a forged record of another call: DURABLE_CALL_CONFLICT, the forged tool name cut to 128 code points", async () => {
    const { executor } = await forge({ ...good(), fp: "a".repeat(64), tool: "x".repeat(300) });
    const outcome = await settle(executor.executeToolCall(call("charge", { ...args }, "c1"), neverAborted(), { durable: { runId } }));
    const reason = (outcome as { reason: Error }).reason;
    expect(isToolContractError(reason) && reason.code).toBe(ContractErrorCode.DURABLE_CALL_CONFLICT);
    expect(reason.message).toContain(`"${"x".repeat(128)}"`);
    expect(reason.message).not.toContain("x".repeat(129));
  });

  test("a forged running record with a lease far ahead delays a call no longer than its own time limit", async () => {
    const { executor } = await forge({ ...good(), state: "running", token: "t", lease: String(Date.now() + 3_600_000), cancel: "0" });
    const result = await executor.executeToolCall(call("charge", { ...args }, "c1"), neverAborted(), {
      durable: { runId },
      timeoutMs: 200,
    });
    expect(errorOf(result).code).toBe("TOOL_EXECUTION_TIMEOUT");
  });

  test("a forged running record whose lease ran out is lost (on Redis' clock): the at-most-once call is not run", async () => {
    const { executor, counter } = await forge({ ...good(), state: "running", token: "t", lease: "1", cancel: "0" });
    const result = await executor.executeToolCall(call("charge", { ...args }, "c1"), neverAborted(), { durable: { runId } });
    expect(errorOf(result).code).toBe("TOOL_EXECUTION_FAILED");
    expect(await count(redis, counter)).toBe(0);
  });
});

describe.runIf(redisUrl !== undefined).each(["memory", "redis"] as StoreKind[])("%s store: the arguments", (storeKind) => {
  test("arguments behind a getter: refused (INVALID_TOOL_CALL) without running it, and nothing is stored", async () => {
    const { store } = makeStore(storeKind);
    closers.push(() => store.close());
    const executor = await executorOn("in-process", store);
    let reads = 0;
    const counter = unique("count");
    const hostile = {
      type: "toolCall",
      id: "c1",
      name: "charge",
      get arguments() {
        reads += 1;
        return { counter };
      },
    };
    const outcome = await settle(executor.executeToolCall(hostile, neverAborted(), { durable: { runId: "r" } }));
    expect(isToolContractError((outcome as { reason: unknown }).reason) && (outcome as { reason: { code: string } }).reason.code).toBe(
      "INVALID_TOOL_CALL",
    );
    expect(reads).toBe(0);
    expect(await store.read({ runId: "r", callId: "c1" })).toBeUndefined();
  });

  test("arguments changed by the caller while the call runs: the record keeps the snapshot's fingerprint", async () => {
    const { store } = makeStore(storeKind);
    closers.push(() => store.close());
    const executor = await executorOn("in-process", store);
    const [counter, gate, begun, runId] = [unique("count"), unique("gate"), unique("started"), unique("run")];
    const args: Record<string, unknown> = { counter, gate, started: begun, amount: 1 };
    const first = executor.executeToolCall(call("charge", args as never, "c1"), neverAborted(), { durable: { runId } });
    await started(redis, begun);
    args.amount = 2;
    await redis.lpush(gate, "go");
    const result = await first;
    expect(JSON.parse(result.content)).toMatchObject({ charged: 1 });
    const mutated = await settle(executor.executeToolCall(call("charge", args as never, "c1"), neverAborted(), { durable: { runId } }));
    expect((mutated as { reason: { code: string } }).reason.code).toBe("DURABLE_CALL_CONFLICT");
    args.amount = 1;
    expect(await executor.executeToolCall(call("charge", args as never, "c1"), neverAborted(), { durable: { runId } })).toEqual(result);
    expect(await count(redis, counter)).toBe(1);
  });
});

describe.runIf(redisUrl !== undefined).each([
  ["memory", "in-process"],
  ["redis", "in-process"],
  ["redis", "worker"],
] as [StoreKind, ExecutorKind][])("%s store, %s executor: 50 concurrent re-issues of one key", (storeKind, executorKind) => {
  test("one execution, and every caller's outcome is identical", async () => {
    const { store, prefix } = makeStore(storeKind);
    closers.push(() => store.close());
    // Two executors over the store (for Redis, two store objects on the same keys: two engines, as two processes have).
    const second = storeKind === "redis" ? redisStore({ prefix }).store : store;
    const executors = [await executorOn(executorKind, store), await executorOn(executorKind, second)];
    const [counter, gate, begun, runId] = [unique("count"), unique("gate"), unique("started"), unique("run")];
    const args = { counter, gate, started: begun };
    const calls = Array.from({ length: 50 }, (_, index) =>
      (executors[index % 2] as ToolExecutor).executeToolCall(call("charge", args, "c1"), neverAborted(), { durable: { runId } }),
    );
    await started(redis, begun);
    await redis.lpush(gate, "go");
    const results = await Promise.all(calls);
    const first = results[0];
    for (const result of results) expect(result).toEqual(first);
    expect(new Set(results.map((result) => result.content)).size).toBe(1);
    expect(await count(redis, counter)).toBe(1);
  });
});

describe.runIf(redisUrl !== undefined)("an attached caller in another process stops the shared execution through Redis", () => {
  test("its abort reaches the holder at its next renewal: the holder's caller gets the lost result, the tool ran once", async () => {
    const { store, prefix } = redisStore({ leaseMs: 1000 });
    const other = redisStore({ prefix, leaseMs: 1000 }).store; // its own engine: nothing shared in memory
    const holder = await executorOn("in-process", store);
    const attached = await executorOn("in-process", other);
    const [counter, gate, begun, runId] = [unique("count"), unique("gate"), unique("started"), unique("run")];
    const args = { counter, gate, started: begun };
    const first = holder.executeToolCall(call("charge", args, "c1"), neverAborted(), { durable: { runId } });
    await started(redis, begun);
    const controller = new AbortController();
    const waiting = settle(attached.executeToolCall(call("charge", args, "c1"), controller.signal, { durable: { runId } }));
    // Aborted at once: its claim is already on its way, finds the key running, and the attached caller then stops it.
    const reason = new Error("the attached caller gave up");
    controller.abort(reason);
    expect(await waiting).toEqual({ ok: false, reason });
    const result = await first;
    expect(errorOf(result)).toEqual({
      code: "TOOL_EXECUTION_FAILED",
      message: "an earlier execution of this call was lost; the tool may have run, and it will not run again under this key",
    });
    expect(await count(redis, counter)).toBe(1);
  });
});
