// The public names of issue 42, validated like their neighbours: the tool field `durability`,
// the call and batch option `durable: { runId }`, the executor option `durable: { store }`, the
// stores' options, and the queue executor's own durable option (its records live in its Redis).
import { ContractErrorCode, defineTool, InProcessToolExecutor, isToolContractError, type ToolDefinition, ToolRegistry } from "toolgate";
import { memoryDurableStore, redisDurableStore } from "toolgate/durable";
import { QueueToolExecutor, runToolWorkerHost } from "toolgate/queue";
import { afterAll, describe, expect, test } from "vitest";
import { call, fixture, neverAborted, settle } from "../support/helpers.js";
import { uniqueQueue } from "../support/redis.js";
import { redisUrl } from "./kit.js";

const base = { name: "t", description: "d", validate: (args: unknown) => ({ ok: true as const, value: args }), execute: () => "ok" };

function contractFailure(run: () => unknown): { code: string; message: string } {
  try {
    run();
  } catch (error) {
    if (isToolContractError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error("did not throw");
}

async function rejection(pending: Promise<unknown>): Promise<{ code: string; message: string }> {
  const outcome = await settle(pending);
  if (outcome.ok || !isToolContractError(outcome.reason))
    throw new Error(`not a contract error: ${String((outcome as { reason?: unknown }).reason)}`);
  return { code: outcome.reason.code, message: outcome.reason.message };
}

describe("ContractErrorCode.DURABLE_CALL_CONFLICT", () => {
  test("is a ToolContractError code, not a recoverable one", async () => {
    expect(ContractErrorCode.DURABLE_CALL_CONFLICT).toBe("DURABLE_CALL_CONFLICT");
    const { ToolErrorCode } = await import("toolgate");
    expect(Object.values(ToolErrorCode)).not.toContain("DURABLE_CALL_CONFLICT");
  });
});

describe("a tool's durability", () => {
  test("absent, at-most-once, or { atLeastOnce: { maxAttempts } }: snapshotted frozen", () => {
    expect(defineTool(base).durability).toBeUndefined();
    expect(defineTool({ ...base, durability: "at-most-once" }).durability).toBe("at-most-once");
    const given = { atLeastOnce: { maxAttempts: 3 } };
    const tool = defineTool({ ...base, durability: given });
    given.atLeastOnce.maxAttempts = 50;
    expect(tool.durability).toEqual({ atLeastOnce: { maxAttempts: 3 } });
    expect(Object.isFrozen(tool.durability)).toBe(true);
  });

  test.each([
    ["at-least-once", 'tool "t": durability must be "at-most-once" or { atLeastOnce: { maxAttempts } }'],
    [{ atLeastOnce: {} }, 'tool "t": durability must be "at-most-once" or { atLeastOnce: { maxAttempts } }'],
    [{ atLeastOnce: { maxAttempts: 3, extra: 1 } }, 'tool "t": durability must be "at-most-once" or { atLeastOnce: { maxAttempts } }'],
    [{ atLeastOnce: { maxAttempts: 0 } }, 'tool "t": durability.atLeastOnce.maxAttempts must be an integer from 1 to 100'],
    [{ atLeastOnce: { maxAttempts: 101 } }, 'tool "t": durability.atLeastOnce.maxAttempts must be an integer from 1 to 100'],
    [{ atLeastOnce: { maxAttempts: 1.5 } }, 'tool "t": durability.atLeastOnce.maxAttempts must be an integer from 1 to 100'],
    [new Proxy({ atLeastOnce: { maxAttempts: 3 } }, {}), 'tool "t": durability must be "at-most-once" or { atLeastOnce: { maxAttempts } }'],
  ])("refuses %j with INVALID_TOOL_DEFINITION", (durability, message) => {
    expect(contractFailure(() => defineTool({ ...base, durability } as unknown as ToolDefinition))).toEqual({
      code: "INVALID_TOOL_DEFINITION",
      message,
    });
  });

  test("a getter on maxAttempts is refused, never run", () => {
    let reads = 0;
    const inner = {
      get maxAttempts() {
        reads += 1;
        return 3;
      },
    };
    expect(contractFailure(() => defineTool({ ...base, durability: { atLeastOnce: inner } })).code).toBe("INVALID_TOOL_DEFINITION");
    expect(reads).toBe(0);
  });
});

describe("options.durable of a call, a batch and an executor", () => {
  const registry = new ToolRegistry([base]);

  test("a call or batch with durable on an executor without a store: INVALID_ARGUMENT, nothing runs", async () => {
    const executor = new InProcessToolExecutor(registry);
    const message =
      "options.durable needs an executor made with durable: { store } (a store from toolgate/durable: memoryDurableStore or redisDurableStore)";
    expect(await rejection(executor.executeToolCall(call("t"), neverAborted(), { durable: { runId: "r" } }))).toEqual({
      code: "INVALID_ARGUMENT",
      message,
    });
    expect(await rejection(executor.executeBatch([call("t")], neverAborted(), { durable: { runId: "r" } }))).toEqual({
      code: "INVALID_ARGUMENT",
      message,
    });
  });

  test.each([
    [{ runId: "" }, "options.durable.runId must be a non-empty string of at most 1024 characters"],
    [{ runId: "x".repeat(1025) }, "options.durable.runId must be a non-empty string of at most 1024 characters"],
    [{ runId: 7 }, "options.durable.runId must be a non-empty string of at most 1024 characters"],
    [{ runID: "r" }, 'options.durable has an unknown option "runID" (did you mean "runId"?)'],
    ["r", "options.durable must be an object"],
  ])("durable: %j is refused with INVALID_ARGUMENT", async (durable, message) => {
    const executor = new InProcessToolExecutor(registry, { durable: { store: memoryDurableStore() } });
    const refused = await rejection(executor.executeToolCall(call("t"), neverAborted(), { durable } as never));
    expect(refused.code).toBe("INVALID_ARGUMENT");
    expect(refused.message).toContain(message);
  });

  test("an executor's durable must hold a store made by toolgate/durable", () => {
    for (const durable of [
      {},
      { store: {} },
      { store: { read() {}, forget() {}, close() {} } },
      { store: memoryDurableStore(), extra: 1 },
    ]) {
      expect(contractFailure(() => new InProcessToolExecutor(registry, { durable } as never)).code).toBe("INVALID_ARGUMENT");
    }
  });
});

describe("onCallEnd's durable", () => {
  test("absent from the events of calls that are not durable, on an executor that has a store", async () => {
    const events: object[] = [];
    const executor = new InProcessToolExecutor(new ToolRegistry([base]), {
      durable: { store: memoryDurableStore() },
      hooks: { onCallEnd: (event) => void events.push(event) },
    });
    await executor.executeToolCall(call("t"), neverAborted());
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toHaveLength(1);
    expect(Object.hasOwn(events[0] as object, "durable")).toBe(false);
  });
});

describe("the stores' options", () => {
  test.each([
    [() => memoryDurableStore({ maxRecords: 0 }), "options.maxRecords must be an integer from 1 to 1000000"],
    [() => memoryDurableStore({ retentionMs: 59_999 }), "options.retentionMs must be an integer from 60000 to 2592000000"],
    [() => memoryDurableStore({ retentionMs: 2_592_000_001 }), "options.retentionMs must be an integer from 60000 to 2592000000"],
    [
      () => memoryDurableStore({ maxAttachmentBytes: 64 * 1024 * 1024 + 1 }),
      "options.maxAttachmentBytes must be an integer from 0 to 67108864",
    ],
    [() => memoryDurableStore({ maxRecord: 3 } as never), 'options has an unknown option "maxRecord" (did you mean "maxRecords"?)'],
    [() => redisDurableStore({} as never), "options.connection must be a redis:// URL or ioredis options"],
    [() => redisDurableStore({ connection: "redis://x", prefix: "a:b" }), 'options.prefix contains ":" (the key separator)'],
    [() => redisDurableStore({ connection: "redis://x", leaseMs: 999 }), "options.leaseMs must be an integer from 1000 to 60000"],
    [() => redisDurableStore({ connection: "redis://x", assumeNoEviction: "yes" } as never), "options.assumeNoEviction must be a boolean"],
    [
      () => redisDurableStore({ connection: "redis://x", writeConcern: { replicas: 0, timeoutMs: 10 } }),
      "options.writeConcern.replicas must be an integer from 1 to 64",
    ],
    [
      () => redisDurableStore({ connection: "redis://x", writeConcern: { replicas: 1, timeoutMs: 10, aof: 1 } as never }),
      "options.writeConcern.aof is not offered: WAITAOF needs Redis 7.2",
    ],
  ])("%#: refused with INVALID_ARGUMENT", (make, message) => {
    const refused = contractFailure(make);
    expect(refused.code).toBe("INVALID_ARGUMENT");
    expect(refused.message).toContain(message);
  });
});

describe.runIf(redisUrl !== undefined)("the QueueToolExecutor takes durable calls with nothing more (records in its own Redis)", () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const close of closers) await close();
  });

  test("a call or batch with durable runs once and is replayed; durable: undefined runs as usual", async () => {
    const queue = uniqueQueue("durable-names");
    const modules = [fixture("queue-tools")];
    const executor = await QueueToolExecutor.create({ connection: redisUrl as string, queue, modules });
    closers.push(() => executor.close());
    const host = await runToolWorkerHost({ connection: redisUrl as string, queue, modules, threads: 1 });
    closers.push(() => host.close());
    const runId = uniqueQueue("run");
    const first = await executor.executeToolCall(call("count", { n: 1 }), neverAborted(), { durable: { runId } });
    const [batched] = await executor.executeBatch([call("count", { n: 1 })], neverAborted(), { durable: { runId } });
    expect(first.isError).toBe(false);
    expect(batched?.content).toBe(first.content); // the same key (runId, call id): replayed
    // durable: undefined is no durable option: the call runs.
    expect((await executor.executeToolCall(call("count", { n: 1 }), neverAborted(), { durable: undefined } as never)).isError).toBe(false);
  });

  test("the executor option durable takes the queue's settings: a store is refused as unknown", async () => {
    const refused = await rejection(
      QueueToolExecutor.create({
        connection: redisUrl as string,
        queue: uniqueQueue("durable-names"),
        modules: [fixture("queue-tools")],
        durable: { store: memoryDurableStore() },
      } as never),
    );
    expect(refused.code).toBe("INVALID_ARGUMENT");
    expect(refused.message).toContain('unknown option "store"');
  });
});
