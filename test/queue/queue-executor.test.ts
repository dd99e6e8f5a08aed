// The queue executor's own behaviour against real Redis, beyond the shared contract suite:
// options, an unreachable Redis, what crosses Redis, a host with another tool version,
// abort before a host starts the job, close(), forged results, and job ids of two agents.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import { ToolRegistry } from "toolgate";
import { QueueToolExecutor, runToolWorkerHost, type ToolWorkerHost } from "toolgate/queue";
import { afterEach, describe, expect, test, vi } from "vitest";
import { contractError as rejection } from "../support/assertions.js";
import { call, errorOf, fixture, neverAborted, scratchDir } from "../support/helpers.js";
import { findRedis, freePort, uniqueQueue } from "../support/redis.js";

const TOOLS = fixture("queue-tools");
const STRICT_TOOLS = fixture("queue-strict-tools");
const redis = await findRedis();
const url = "url" in redis ? redis.url : "";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

async function host(queue: string, modules = [TOOLS]): Promise<ToolWorkerHost> {
  const started = await runToolWorkerHost({ connection: url, queue, modules, threads: 2, abortGraceMs: 200 });
  cleanups.push(() => started.close());
  return started;
}

async function agent(queue: string, options: Partial<Parameters<typeof QueueToolExecutor.create>[0]> = {}): Promise<QueueToolExecutor> {
  const executor = await QueueToolExecutor.create({ connection: url, queue, modules: [TOOLS], heartbeatMs: 100, ...options });
  cleanups.push(() => executor.close());
  return executor;
}

/** A BullMQ Queue on `queue`, to look at its jobs the way an operator would. */
function inspector(queue: string): Queue {
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  const reader = new Queue(queue, { connection });
  cleanups.push(async () => {
    await reader.close();
    connection.disconnect();
  });
  return reader;
}

describe("docs/queue.md — Options: validated up front, with bounds", () => {
  const base = { connection: "redis://127.0.0.1:1", queue: "q", modules: [TOOLS] };
  test.each([
    [{ ...base, connection: "http://127.0.0.1:6379" }, "options.connection must be a redis:// or rediss:// URL"],
    [{ ...base, connection: 6379 }, "options.connection must be a redis:// URL or an object"],
    [
      { ...base, queue: "a:b" },
      'options.queue must be a non-empty string of at most 128 characters without ":", control characters or lone surrogates (got "a:b", which contains ":" (the key separator))',
    ],
    [{ ...base, queue: "" }, "options.queue must be a non-empty string"],
    [{ ...base, timeoutMs: 0 }, "options.timeoutMs must be an integer from 1 to 2147483647 (got the number 0)"],
    [{ ...base, heartbeatMs: 60_001 }, "options.heartbeatMs must be an integer from 20 to 60000 (got the number 60001)"],
    [{ ...base, redisLostMs: 1.5 }, "options.redisLostMs must be an integer from 100 to 600000 (got the number 1.5)"],
    [{ ...base, connectTimeoutMs: "5" }, "options.connectTimeoutMs must be an integer from 1 to 60000 (got a string)"],
    [{ ...base, registry: new ToolRegistry() }, "give exactly one of options.modules and options.registry"],
    [{ connection: base.connection, queue: "q" }, "give exactly one of options.modules and options.registry"],
    [{ connection: base.connection, queue: "q", registry: {} }, "options.registry must be a ToolRegistry"],
  ])("QueueToolExecutor.create(%o) is refused", async (options, message) => {
    const error = await rejection(QueueToolExecutor.create(options as never));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.message).toContain(message);
  });

  test.each([
    [{ ...base, threads: 0 }, "options.threads must be an integer from 1 to 256 (got the number 0)"],
    [{ ...base, lockDurationMs: 100 }, "options.lockDurationMs must be an integer from 500 to 600000 (got the number 100)"],
    [{ ...base, modules: [] }, "options.modules must be a non-empty array"],
    [{ ...base, onError: "log" }, "options.onError must be a function"],
  ])("runToolWorkerHost(%o) is refused", async (options, message) => {
    const error = await rejection(runToolWorkerHost(options as never));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.message).toContain(message);
  });
});

describe("docs/queue.md — Failure scenarios: an unreachable Redis at startup", () => {
  test("create() and runToolWorkerHost() reject with a clear ToolContractError, within the connect bound", async () => {
    const port = await freePort(); // nothing listens there
    const nowhere = `redis://user:secret@127.0.0.1:${port}`;
    const started = performance.now();
    const error = await rejection(QueueToolExecutor.create({ connection: nowhere, queue: "q", modules: [TOOLS], connectTimeoutMs: 1000 }));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.message).toMatch(new RegExp(`^cannot reach Redis at redis://127\\.0\\.0\\.1:${port}: `));
    expect(error.message).not.toContain("secret");
    const hostError = await rejection(runToolWorkerHost({ connection: nowhere, queue: "q", modules: [TOOLS], connectTimeoutMs: 1000 }));
    expect(hostError.message).toMatch(/^cannot reach Redis at /);
    expect(performance.now() - started).toBeLessThan(5000);
  });
});

describe.skipIf(!("url" in redis))("docs/queue.md — Guarantees, and what is not guaranteed: the queue executor against real Redis", () => {
  test("an invalid call is answered on the agent and never enqueued", async () => {
    const queue = uniqueQueue("invalid");
    const executor = await agent(queue);
    const result = await executor.executeToolCall(call("dated", { when: 42 }, "bad-date"), neverAborted());
    expect(errorOf(result)).toEqual({ code: "TOOL_ARGUMENTS_INVALID", message: "when must be a date string" });
    const missing = await executor.executeToolCall(call("nope", {}, "no-tool"), neverAborted());
    expect(errorOf(missing).code).toBe("TOOL_NOT_FOUND");
    // No host runs here: a valid call would sit in the queue. Nothing does.
    expect(await inspector(queue).getJobCounts("waiting", "active", "completed", "failed")).toEqual({
      waiting: 0,
      active: 0,
      completed: 0,
      failed: 0,
    });
  });

  test("the JSON arguments snapshot crosses Redis, and the host validates it itself", async () => {
    const queue = uniqueQueue("json");
    await host(queue);
    const executor = await agent(queue);
    // The agent's validator makes a Date (not JSON); the host's own validation makes its own.
    const result = await executor.executeToolCall(call("dated", { when: "2026-12-03T10:00:00Z" }, "dated"), neverAborted());
    expect(JSON.parse(result.content)).toEqual({ isDate: true, year: 2026 });
    const [job] = await inspector(queue).getJobs(["completed"]);
    expect(job?.data).toEqual({ v: 1, callId: "dated", toolName: "dated", arguments: { when: "2026-12-03T10:00:00Z" } });
    expect(job?.id).toMatch(/^tg-[0-9a-f-]{36}\.\d+\.dated$/);
  });

  test("a host running another version of a tool protects itself: its verdict is the call's", async () => {
    const queue = uniqueQueue("version");
    await host(queue, [STRICT_TOOLS]);
    const executor = await agent(queue);
    const refused = await executor.executeToolCall(call("count", { n: 50 }, "too-many"), neverAborted());
    expect(refused).toMatchObject({ toolCallId: "too-many", toolName: "count", isError: true });
    expect(errorOf(refused)).toEqual({ code: "TOOL_ARGUMENTS_INVALID", message: "n must be a number at most 10 (version 2)" });
    const accepted = await executor.executeToolCall(call("count", { n: 5 }, "few"), neverAborted());
    expect(JSON.parse(accepted.content)).toEqual({ n: 5, version: 2 });
    const unknown = await executor.executeToolCall(call("whoAmI", {}, "not-on-host"), neverAborted());
    expect(errorOf(unknown).code).toBe("TOOL_NOT_FOUND");
  });

  test("a call aborted before any host took it never starts, not even on a host that comes later", async () => {
    const queue = uniqueQueue("abort-queued");
    const executor = await agent(queue);
    const log = join(scratchDir(), "starts");
    const controller = new AbortController();
    const pending = executor.executeToolCall(call("whoAmI", { log }, "never"), controller.signal);
    const reader = inspector(queue);
    await vi.waitFor(async () => expect(await reader.getJobCounts("waiting")).toEqual({ waiting: 1 }), { timeout: 5000, interval: 20 });
    controller.abort("not needed any more");
    await expect(pending).rejects.toBe("not needed any more");

    // The cancel (sent as the abort rejects) removes the waiting job atomically: nothing is left for a host to take.
    await vi.waitFor(
      async () => expect(await reader.getJobCounts("waiting", "active", "completed")).toEqual({ waiting: 0, active: 0, completed: 0 }),
      { timeout: 5000, interval: 20 },
    );
    await host(queue);
    // A host takes jobs in order: a call made now runs after the aborted one would have, and alone.
    const ran = await executor.executeToolCall(call("whoAmI", { log }, "ran"), neverAborted());
    expect(JSON.parse(ran.content)).toEqual({ pid: process.pid, toolCallId: "ran" });
    expect(readFileSync(log, "utf8")).toBe(`ran ${process.pid}\n`);
  });

  test("close() settles what it accepted within closeTimeoutMs, refuses new calls, and the jobs never start", async () => {
    const queue = uniqueQueue("close");
    const executor = await agent(queue, { closeTimeoutMs: 200 });
    const log = join(scratchDir(), "starts");
    const pending = executor.executeToolCall(call("whoAmI", { log }, "orphan"), neverAborted());
    const reader = inspector(queue);
    await vi.waitFor(async () => expect(await reader.getJobCounts("waiting")).toEqual({ waiting: 1 }), { timeout: 5000, interval: 20 });
    const closing = executor.close();
    expect(executor.close()).toBe(closing);
    const refused = await rejection(executor.executeToolCall(call("whoAmI", {}, "late"), neverAborted()));
    expect(refused.code).toBe("EXECUTOR_CLOSED");
    const result = await pending;
    expect(result).toMatchObject({ toolCallId: "orphan", isError: true });
    expect(errorOf(result)).toEqual({ code: "TOOL_EXECUTION_FAILED", message: "the executor closed before the host answered" });
    await closing;

    expect(await reader.getJobCounts("waiting", "active", "completed")).toEqual({ waiting: 0, active: 0, completed: 0 });
    await host(queue);
    // A host takes jobs in order: a later call runs alone, the orphan never.
    const later = await agent(queue);
    await later.executeToolCall(call("whoAmI", { log }, "later"), neverAborted());
    expect(readFileSync(log, "utf8")).toBe(`later ${process.pid}\n`);
  });

  test("a forged or malformed result from Redis becomes TOOL_EXECUTION_FAILED, never a crash", async () => {
    const queue = uniqueQueue("forged");
    const executor = await agent(queue);
    // Not a toolgate host: a bare BullMQ worker answering with what it likes.
    const answers = [
      { kind: "result", content: 5, isError: false },
      "just a string",
      { kind: "result", content: "x".repeat(5000), isError: false },
    ];
    const connection = new Redis(url, { maxRetriesPerRequest: null });
    let next = 0;
    const rogue = new Worker(queue, async () => answers[next++], { connection });
    cleanups.push(async () => {
      await rogue.close();
      connection.disconnect();
    });
    const messages: string[] = [];
    for (let index = 0; index < answers.length; index += 1) {
      const result = await executor.executeToolCall(call("count", { n: index }, `forged-${index}`), neverAborted());
      expect(result).toMatchObject({ toolCallId: `forged-${index}`, isError: true });
      expect(errorOf(result).code).toBe("TOOL_EXECUTION_FAILED");
      messages.push(errorOf(result).message);
    }
    expect(messages).toEqual([
      "the host's result has no content string",
      "the host's result is not an object",
      "the host's content is over the content budget",
    ]);
  });

  test("two agents on one queue with the same call id: each gets its own result", async () => {
    const queue = uniqueQueue("ids");
    await host(queue);
    const first = await agent(queue);
    const second = await agent(queue);
    const same = (n: number) => call("count", { n }, "same-id:%");
    const [a, b, c] = await Promise.all([
      first.executeToolCall(same(1), neverAborted()),
      second.executeToolCall(same(2), neverAborted()),
      first.executeToolCall(same(3), neverAborted()),
    ]);
    expect([a, b, c].map((result) => JSON.parse((result as { content: string }).content))).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect([a, b, c].every((result) => result?.toolCallId === "same-id:%")).toBe(true);
    const ids = (await inspector(queue).getJobs(["completed"])).map((job) => job.id as string);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(/^tg-[0-9a-f-]{36}\.\d+\.same-id%3A%25$/);
  });
});

// Issue 12, item 7: a refused option value is named through describeValue ("got null", not "got object").
describe("a refused queue option names the value with its article", () => {
  const base = { connection: "redis://127.0.0.1:1", queue: "q", modules: [TOOLS] };
  test.each([
    ["null", null, "(got null)"],
    ["an array", [1000], "(got an array)"],
    ["a bigint", 1000n, "(got a bigint)"],
    ["a symbol", Symbol("1000"), "(got a symbol)"],
    ["a function", () => 1000, "(got a function)"],
  ])("timeoutMs set to %s", async (_label, timeoutMs, got) => {
    const error = await rejection(QueueToolExecutor.create({ ...base, timeoutMs } as never));
    expect(error).toMatchObject({ code: "INVALID_ARGUMENT", message: `options.timeoutMs must be an integer from 1 to 2147483647 ${got}` });
  });

  test.each([
    ["null", null, "(got null)"],
    ["an array", ["q"], "(got an array)"],
    ["a number", 7, "(got the number 7)"],
  ])("queue set to %s", async (_label, queue, got) => {
    const error = await rejection(QueueToolExecutor.create({ ...base, queue } as never));
    expect(error.message).toBe(
      `options.queue must be a non-empty string of at most 128 characters without ":", control characters or lone surrogates ${got}`,
    );
  });
});
