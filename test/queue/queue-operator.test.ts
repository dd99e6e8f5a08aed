// The queue executor and the operator's options: a call's and a tool's `timeoutMs` are
// honoured (on the agent, and by the host from the job), `hooks` and `argumentBudgets` apply
// on the agent, `attachmentBudgets` on both sides (queue-features.test.ts), and what cannot
// cross machines (`app`) or is the hosts' (`outputBudgets`) is refused up front rather than ignored.
import { join } from "node:path";
import { Queue, QueueEvents } from "bullmq";
import { Redis } from "ioredis";
import { type CallEndEvent, type CallStartEvent, isToolContractError } from "toolgate";
import { QueueToolExecutor, runToolWorkerHost } from "toolgate/queue";
import { afterEach, describe, expect, test } from "vitest";
import { call, errorOf, fixture, neverAborted, scratchDir, settle, waitForFile } from "../support/helpers.js";
import { handmadeAgent } from "../support/queue-lease.js";
import { findRedis, uniqueQueue } from "../support/redis.js";

const TOOLS = fixture("queue-timeouts");
const redis = await findRedis();
const url = "url" in redis ? redis.url : "";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

async function host(queue: string): Promise<void> {
  const started = await runToolWorkerHost({ connection: url, queue, modules: [TOOLS], threads: 2, abortGraceMs: 200 });
  cleanups.push(() => started.close());
}

async function agent(queue: string, options: Record<string, unknown> = {}): Promise<QueueToolExecutor> {
  const executor = await QueueToolExecutor.create({ connection: url, queue, modules: [TOOLS], heartbeatMs: 100, ...options });
  cleanups.push(() => executor.close());
  return executor;
}

async function rejection(pending: Promise<unknown>): Promise<{ code: string; message: string }> {
  const outcome = await settle(pending);
  expect(outcome.ok).toBe(false);
  const reason = (outcome as { reason: unknown }).reason;
  expect(isToolContractError(reason)).toBe(true);
  return reason as { code: string; message: string };
}

describe("queue executor options that cannot apply are refused, not ignored", () => {
  const base = { connection: "redis://127.0.0.1:1", queue: "q", modules: [TOOLS] };
  test.each([
    ["app", { app: { db: 1 } }, "options.app cannot be sent to a worker host"],
    ["outputBudgets", { outputBudgets: { maxNodes: 10 } }, "options.outputBudgets are applied where the tool runs"],
    [
      "attachmentBudgets out of range",
      { attachmentBudgets: { maxAttachmentBytes: 0 } },
      "options.attachmentBudgets.maxAttachmentBytes must be an integer from 1",
    ],
    ["argumentBudgets out of range", { argumentBudgets: { maxNodes: 0 } }, "options.argumentBudgets.maxNodes must be an integer from 1"],
    ["hooks that are not functions", { hooks: { onCallStart: 1 } }, "hooks.onCallStart"],
  ])("QueueToolExecutor.create with %s is refused with INVALID_ARGUMENT (before Redis is reached)", async (_label, extra, message) => {
    const error = await rejection(QueueToolExecutor.create({ ...base, ...extra } as never));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.message).toContain(message);
  });
});

describe.skipIf(!("url" in redis))("queue executor time limits and agent-side options", () => {
  test("a call's timeoutMs is honoured: TOOL_EXECUTION_TIMEOUT at its limit, and the host stops the tool", async () => {
    const queue = uniqueQueue("call-timeout");
    await host(queue);
    const executor = await agent(queue);
    const log = join(scratchDir(), "log");
    const started = performance.now();
    const result = await executor.executeToolCall(call("waitForStop", { log }, "timed"), neverAborted(), { timeoutMs: 300 });
    const elapsed = performance.now() - started;
    expect(errorOf(result)).toEqual({ code: "TOOL_EXECUTION_TIMEOUT", message: "the tool did not finish within 300 ms" });
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(2000);
    // The agent's cancel or the host's own timer (it has the limit from the job), whichever is first.
    expect(await waitForFile(log)).toMatch(/^stopped (AbortError|TimeoutError)\n$/);
  });

  test("a tool's timeoutMs is honoured, and a call's own overrides it", async () => {
    const queue = uniqueQueue("tool-timeout");
    await host(queue);
    const executor = await agent(queue, { timeoutMs: 60_000 });
    const limited = await executor.executeToolCall(call("limited", {}, "limited"), neverAborted());
    expect(errorOf(limited)).toEqual({ code: "TOOL_EXECUTION_TIMEOUT", message: "the tool did not finish within 300 ms" });
    const overridden = await executor.executeToolCall(call("limited", {}, "overridden"), neverAborted(), { timeoutMs: 150 });
    expect(errorOf(overridden).message).toBe("the tool did not finish within 150 ms");
  });

  test("the call's limit travels with its job, and the host applies it itself", async () => {
    const queue = uniqueQueue("job-timeout");
    await host(queue);
    const connection = new Redis(url, { maxRetriesPerRequest: null });
    const producer = new Queue(queue, { connection });
    const events = new QueueEvents(queue, { connection: new Redis(url, { maxRetriesPerRequest: null }) });
    cleanups.push(async () => {
      await producer.close();
      await events.close();
      connection.disconnect();
    });
    await events.waitUntilReady();
    // No agent (a lease written by hand): nothing here cancels the job, so only the host's own timer can end it.
    const agentId = await handmadeAgent(connection, queue);
    const timed = await producer.add(
      "waitForStop",
      { v: 1, callId: "direct", toolName: "waitForStop", arguments: {}, timeoutMs: 200 },
      { jobId: `${agentId}.1.direct` },
    );
    const answer = (await timed.waitUntilFinished(events, 5000)) as { kind: string; content: string; isError: boolean };
    expect(answer).toMatchObject({ kind: "result", isError: true });
    expect(errorOf(answer as never)).toEqual({ code: "TOOL_EXECUTION_TIMEOUT", message: "the tool did not finish within 200 ms" });
    // A malformed limit is refused with the job, never taken as "no limit".
    const forged = await producer.add(
      "echo",
      { v: 1, callId: "forged", toolName: "echo", arguments: {}, timeoutMs: "soon" },
      { jobId: `${agentId}.2.forged` },
    );
    const refused = (await forged.waitUntilFinished(events, 5000)) as { content: string };
    expect(errorOf(refused as never).message).toContain(
      "the host refused the job: ToolContractError: options.timeoutMs must be an integer from 1 to 2147483647",
    );
    // And the agent puts its limit into the job (and none when there is none).
    const executor = await agent(queue);
    await executor.executeToolCall(call("echo", { a: 1 }, "with-limit"), neverAborted(), { timeoutMs: 5000 });
    await executor.executeToolCall(call("echo", { a: 2 }, "without"), neverAborted());
    const jobs = await producer.getJobs(["completed"]);
    expect(jobs.find((job) => job.data.callId === "with-limit")?.data.timeoutMs).toBe(5000);
    expect(jobs.find((job) => job.data.callId === "without")?.data).not.toHaveProperty("timeoutMs");
  });

  test("a call's app is refused with INVALID_ARGUMENT; hooks and argument budgets apply on the agent", async () => {
    const queue = uniqueQueue("agent-options");
    await host(queue);
    const events: (CallStartEvent | CallEndEvent)[] = [];
    const executor = await agent(queue, {
      hooks: { onCallStart: (event: CallStartEvent) => events.push(event), onCallEnd: (event: CallEndEvent) => events.push(event) },
      argumentBudgets: { maxNodes: 3 },
    });
    const app = await rejection(executor.executeToolCall(call("echo"), neverAborted(), { app: { db: 1 } as never }));
    expect(app).toMatchObject({
      code: "INVALID_ARGUMENT",
      message: expect.stringContaining("options.app cannot be sent to a worker host"),
    });
    const batchApp = await rejection(executor.executeBatch([call("echo")], neverAborted(), { app: { db: 1 } as never }));
    expect(batchApp.code).toBe("INVALID_ARGUMENT");
    const result = await executor.executeToolCall(call("echo", { a: 1 }, "hooked"), neverAborted());
    expect(result.content).toBe('{"a":1}');
    expect(events.map((event) => ["outcome" in event ? `end ${event.outcome}` : "start", event.toolCallId])).toEqual([
      ["start", "hooked"],
      ["end success", "hooked"],
    ]);
    const wide = await rejection(executor.executeToolCall(call("echo", { list: [1, 2, 3] }), neverAborted()));
    expect(wide).toMatchObject({ code: "INVALID_TOOL_CALL", message: expect.stringContaining("(argument budget maxNodes)") });
  });
});
