// The adapters' `durable` option over every executor that takes a store (in-process, worker
// pool) and both stores (memory, Redis): the same call, issued through an adapter by two
// executors sharing one store (as an agent before and after a restart would), runs once, and
// both get the one outcome. The tool counts its executions with an INCR outside the record
// (test/durable/fixtures/durable-tools.mjs, tools without a JSON Schema: shown as any object). docs/durable.md — Durable calls with your framework.
import { RunContext } from "@openai/agents";
import type { Redis } from "ioredis";
import type { ToolExecutor } from "toolgate";
import { toAiSdkTools } from "toolgate/ai-sdk";
import type { DurableStore } from "toolgate/durable";
import { toLangChainTools } from "toolgate/langchain";
import { toOpenAiAgentsTools } from "toolgate/openai-agents";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { count, type ExecutorKind, makeExecutor, makeStore, redisUrl, type StoreKind, testRedis, unique } from "../durable/kit.js";

/** One call through one adapter over `executor`, under run `runId`: the model-visible output. */
type Issue = (executor: ToolExecutor, runId: string, callId: string, args: Record<string, unknown>) => Promise<unknown>;

const ADAPTERS: [string, Issue][] = [
  [
    "toLangChainTools",
    async (executor, runId, callId, args) => {
      const tools = toLangChainTools(executor, { withoutSchema: "any-object", durable: ({ threadId }) => ({ runId: threadId as string }) });
      const charge = tools.find((tool) => tool.name === "charge");
      const message = await charge?.invoke({ type: "tool_call", id: callId, name: "charge", args }, { configurable: { thread_id: runId } });
      return message?.content;
    },
  ],
  [
    "toAiSdkTools",
    async (executor, runId, callId, args) => {
      const tools = toAiSdkTools(executor, {
        withoutSchema: "any-object",
        durable: ({ context }) => ({ runId: (context as { runId: string }).runId }),
      });
      const outputs = tools.charge?.execute?.(args, { toolCallId: callId, messages: [], context: { runId } } as never);
      let last: unknown;
      for await (const output of outputs as AsyncIterable<unknown>) last = output;
      return last;
    },
  ],
  [
    "toOpenAiAgentsTools",
    async (executor, runId, callId, args) => {
      const tools = toOpenAiAgentsTools<{ runId: string }>(executor, {
        withoutSchema: "any-object",
        durable: ({ context }) => ({ runId: (context as { runId: string }).runId }),
      });
      const charge = tools.find((tool) => tool.name === "charge");
      const details = { toolCall: { type: "function_call", callId, name: "charge", arguments: JSON.stringify(args) } };
      return charge?.invoke(new RunContext({ runId }), JSON.stringify(args), details as never);
    },
  ],
];

const CASES: [StoreKind, ExecutorKind, ExecutorKind][] = [
  ["memory", "in-process", "in-process"],
  ["memory", "worker", "in-process"],
  ["redis", "in-process", "worker"],
  ["redis", "worker", "worker"],
];

let redis: Redis;
beforeAll(() => {
  redis = testRedis();
});
afterAll(async () => {
  await redis.quit();
});

describe.runIf(redisUrl !== undefined).each(CASES)(
  "%s store: a call through an adapter on a %s executor, re-issued on a %s one",
  (storeKind, firstKind, secondKind) => {
    let store: DurableStore;
    const open: ToolExecutor[] = [];
    beforeAll(() => {
      store = makeStore(storeKind).store;
    });
    afterAll(async () => {
      await store.close();
    });
    afterEach(async () => {
      await Promise.all(open.splice(0).map((executor) => executor.close()));
    });

    it.each(ADAPTERS)("%s: one execution, the same output for both; another runId runs again", async (_adapter, issue) => {
      const [first, second] = await Promise.all([makeExecutor(firstKind, store), makeExecutor(secondKind, store)]);
      open.push(first, second);
      const counter = unique("durable-adapter");
      const runId = unique("run");
      const args = { counter, amount: 500 };
      const before = await issue(first, runId, "call-1", args);
      const again = await issue(second, runId, "call-1", args);
      expect(await count(redis, counter)).toBe(1);
      expect(again).toEqual(before);
      expect(JSON.parse(before as string)).toEqual({
        charged: 500,
        attempt: 1,
        idempotencyKey: expect.stringMatching(/^tg:[0-9a-f]{64}$/),
      });
      await issue(second, `${runId}-other`, "call-1", args);
      expect(await count(redis, counter)).toBe(2);
    });
  },
);
