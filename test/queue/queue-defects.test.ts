// The nine defects of issue 29, each against a real Redis (the shared one, or a redis-server
// of the test's own where a test kills, restarts or partitions it): close() drains what it
// accepted, a timeout reaches the host's tool as a timeout, a malformed or forged event costs
// nothing, call ids of any text, a tool's own content budget, a database path that is not a
// number, and close() under a silent network partition.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Queue, Worker } from "bullmq";
import type { ToolResultMessage } from "toolgate";
import { QueueToolExecutor, runToolWorkerHost } from "toolgate/queue";
import { describe, expect, test, vi } from "vitest";
import { contractError as rejection } from "../support/assertions.js";
import { call, errorOf, fixture, neverAborted, scratchDir, settle, waitForFile } from "../support/helpers.js";
import { type PartitionProxy, startPartitionProxy } from "../support/partition-proxy.js";
import { queueKit, within } from "../support/queue-kit.js";
import { findRedis, hasRedisServerBinary, type RedisServer, startRedisServer, uniqueQueue } from "../support/redis.js";
import { startHostProcess } from "./host-process.js";

const TOOLS = fixture("queue-defect-tools");
const redis = await findRedis();
const url = "url" in redis ? redis.url : "";

const linesOf = (path: string): string[] => (existsSync(path) ? readFileSync(path, "utf8").trim().split("\n") : []);

const { cleanups, host, agent, client } = queueKit(url, [TOOLS]);

/** A promise and the function that resolves it. */
function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** The id of the one active job of `queue`, read with BullMQ as an operator would. */
async function activeJobId(queue: string): Promise<string> {
  const connection = client();
  const reader = new Queue(queue, { connection });
  cleanups.push(() => reader.close());
  return vi.waitFor(
    async () => {
      const [job] = await reader.getJobs(["active"]);
      if (job?.id === undefined) throw new Error("no active job yet");
      return job.id;
    },
    { timeout: 5000, interval: 20 },
  );
}

describe.skipIf(!("url" in redis))("issue 29: the queue executor's defects (real Redis)", () => {
  describe("1, 2: close() drains every call accepted before it, within closeTimeoutMs", () => {
    test("close() during a concurrency: 1 batch: the members not yet dispatched still run, and close() waits for them", async () => {
      const queue = uniqueQueue("close-batch");
      await host(queue, { threads: 1 });
      const executor = await agent(queue, { closeTimeoutMs: 10_000 });
      const log = join(scratchDir(), "starts");
      const calls = [0, 1, 2].map((n) => call("slow", { ms: 150, log }, `member-${n}`));
      const batch = executor.executeBatch(calls, neverAborted(), { concurrency: 1 });
      await waitForFile(log);
      let closed = false;
      const closing = executor.close().then(() => {
        closed = true;
      });

      const results = await within(batch, 10_000, "the batch");
      expect(results.map((result) => [result.toolCallId, result.isError])).toEqual([
        ["member-0", false],
        ["member-1", false],
        ["member-2", false],
      ]);
      expect(results.map((result) => JSON.parse(result.content))).toEqual(calls.map((each) => ({ toolCallId: each.id })));
      await within(closing, 10_000, "close()");
      expect(closed).toBe(true);
      expect(linesOf(log)).toEqual(["started member-0", "started member-1", "started member-2"]);
    });

    test("members that close() can no longer enqueue get a result at once, and never reach a host", async () => {
      const queue = uniqueQueue("close-batch-late");
      await host(queue, { threads: 1 });
      const executor = await agent(queue, { closeTimeoutMs: 300 });
      const log = join(scratchDir(), "starts");
      const calls = [0, 1, 2].map((n) => call("slow", { ms: 3000, log }, `late-${n}`));
      const batch = executor.executeBatch(calls, neverAborted(), { concurrency: 1 });
      await waitForFile(log);
      const closing = executor.close();

      const results = await within(batch, 8000, "the batch");
      expect(results.map((result) => [result.toolCallId, errorOf(result).code])).toEqual([
        ["late-0", "TOOL_EXECUTION_FAILED"],
        ["late-1", "TOOL_EXECUTION_FAILED"],
        ["late-2", "TOOL_EXECUTION_FAILED"],
      ]);
      expect(errorOf(results[0] as ToolResultMessage).message).toBe("the executor closed before the host answered");
      expect(errorOf(results[1] as ToolResultMessage).message).toBe("the executor closed before the call could be enqueued");
      expect(errorOf(results[2] as ToolResultMessage).message).toBe("the executor closed before the call could be enqueued");
      await within(closing, 8000, "close()");
      // A host that stays: nothing after the first member was ever enqueued.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(linesOf(log)).toEqual(["started late-0"]);
    });

    test("a call awaiting beforeExecute at close() is enqueued once approved, and runs on the live host", async () => {
      const queue = uniqueQueue("close-approval");
      await host(queue);
      const approval = gate<{ allow: true }>();
      const asked = gate();
      const executor = await agent(queue, {
        closeTimeoutMs: 10_000,
        hooks: {
          beforeExecute: () => {
            asked.open();
            return approval.promise;
          },
        },
      });
      const pending = executor.executeToolCall(call("echoId", {}, "approved-late"), neverAborted());
      await asked.promise;
      let closed = false;
      const closing = executor.close().then(() => {
        closed = true;
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(closed).toBe(false); // close() waits for the accepted call
      approval.open({ allow: true });

      const result = await within(pending, 10_000, "the approved call");
      expect(result).toMatchObject({ toolCallId: "approved-late", isError: false });
      expect(JSON.parse(result.content)).toEqual({ toolCallId: "approved-late" });
      await within(closing, 10_000, "close()");
    });

    test("an approval that comes after closeTimeoutMs gets TOOL_EXECUTION_FAILED at once, and nothing is enqueued", async () => {
      const queue = uniqueQueue("close-approval-late");
      await host(queue);
      const approval = gate<{ allow: true }>();
      const asked = gate();
      const executor = await agent(queue, {
        closeTimeoutMs: 100,
        hooks: {
          beforeExecute: () => {
            asked.open();
            return approval.promise;
          },
        },
      });
      const log = join(scratchDir(), "starts");
      const pending = executor.executeToolCall(call("slow", { log }, "approved-too-late"), neverAborted());
      await asked.promise;
      await within(executor.close(), 8000, "close()");
      approval.open({ allow: true });

      const result = await within(pending, 2000, "the call approved after close()");
      expect(errorOf(result)).toEqual({
        code: "TOOL_EXECUTION_FAILED",
        message: "the executor closed before the call could be enqueued",
      });
      const reader = new Queue(queue, { connection: client() });
      cleanups.push(() => reader.close());
      expect(await reader.getJobCounts("waiting", "active", "completed", "failed")).toEqual({
        waiting: 0,
        active: 0,
        completed: 0,
        failed: 0,
      });
      expect(linesOf(log)).toEqual([]);
    });
  });

  test("3: the agent's timeout reaches the host's tool as a TimeoutError", async () => {
    const queue = uniqueQueue("timeout-kind");
    await host(queue, { threads: 1 });
    const executor = await agent(queue, { timeoutMs: 800 });
    const log = join(scratchDir(), "starts");
    const result = await executor.executeToolCall(call("waitForStop", { log }, "timed"), neverAborted());
    expect(errorOf(result)).toEqual({ code: "TOOL_EXECUTION_TIMEOUT", message: "the tool did not finish within 800 ms" });
    await vi.waitFor(() => expect(linesOf(log)).toHaveLength(2), { timeout: 5000, interval: 20 });
    expect(linesOf(log)).toEqual(["started timed", "stopped TimeoutError"]);
    // An abort still reaches it as an AbortError.
    const controller = new AbortController();
    const aborted = executor.executeToolCall(call("waitForStop", { log }, "aborted"), controller.signal);
    await vi.waitFor(() => expect(linesOf(log)).toContain("started aborted"), { timeout: 5000, interval: 20 });
    controller.abort(new Error("stop"));
    await expect(aborted).rejects.toThrow("stop");
    await vi.waitFor(() => expect(linesOf(log)).toHaveLength(4), { timeout: 5000, interval: 20 });
    expect(linesOf(log)[3]).toBe("stopped AbortError");
  });

  test("4: one malformed event costs that entry, never the stream: results still arrive by event", async () => {
    const queue = uniqueQueue("bad-event");
    await host(queue);
    // A heartbeat this slow would show: every call below would wait for it.
    const executor = await agent(queue, { heartbeatMs: 10_000 });
    const stream = `bull:${queue}:events`;
    const third = client();
    await third.xadd(stream, "*", "event", "completed", "jobId", "x", "returnvalue", "{not json");
    await third.xadd(stream, "*", "event", "progress", "jobId", "x", "data", "{also not json");
    await third.xadd(stream, "*", "no-event-field", "at all");
    for (let n = 0; n < 5; n += 1) {
      const startedAt = performance.now();
      const result = await executor.executeToolCall(call("echoId", {}, `after-bad-${n}`), neverAborted());
      expect(JSON.parse(result.content)).toEqual({ toolCallId: `after-bad-${n}` });
      expect(performance.now() - startedAt).toBeLessThan(4000); // the heartbeat would take 10 s
      await third.xadd(stream, "*", "event", "completed", "jobId", `x${n}`, "returnvalue", "{not json");
    }
  });

  test("5: a forged `completed` event for a running job is not its result; the real one is", async () => {
    const queue = uniqueQueue("forged-event");
    await host(queue);
    const executor = await agent(queue);
    const log = join(scratchDir(), "starts");
    let settled = false;
    const pending = executor.executeToolCall(call("slow", { ms: 1500, log }, "real"), neverAborted()).finally(() => {
      settled = true;
    });
    const jobId = await activeJobId(queue);
    const forged = JSON.stringify({ kind: "result", content: "forged", isError: false });
    await client().xadd(`bull:${queue}:events`, "*", "event", "completed", "jobId", jobId, "returnvalue", forged, "prev", "active");
    await new Promise((resolve) => setTimeout(resolve, 500)); // five heartbeats, and the event long read
    expect(settled).toBe(false);

    const result = await pending;
    expect(result).toMatchObject({ toolCallId: "real", isError: false });
    expect(JSON.parse(result.content)).toEqual({ toolCallId: "real" });
    expect(linesOf(log)).toEqual(["started real"]);
  });

  test("6: call ids of any text (lone surrogates, %, :) are ASCII in job ids, distinct, and answered", async () => {
    const queue = uniqueQueue("call-ids");
    await host(queue);
    const executor = await agent(queue);
    const ids = ["lone-\uD800", "lone-\uDC00", "lone-%d800", "a:b", "a%3Ab", "pair-\uD83D\uDE00", "é"];
    const results = await within(
      executor.executeBatch(
        ids.map((id) => call("echoId", {}, id)),
        neverAborted(),
      ),
      10_000,
      "the batch",
    );
    expect(results.map((result) => result.toolCallId)).toEqual(ids);
    expect(results.map((result) => JSON.parse(result.content).toolCallId)).toEqual(ids);
    const reader = new Queue(queue, { connection: client() });
    cleanups.push(() => reader.close());
    const jobIds = (await reader.getJobs(["completed"])).map((job) => job.id as string);
    expect(jobIds).toHaveLength(ids.length);
    for (const jobId of jobIds) expect(jobId).toMatch(/^[\x21-\x39\x3b-\x7e]+$/);
    const parts = jobIds.map((jobId) => jobId.replace(/^tg-[0-9a-f-]{36}\.\d+\./, ""));
    expect(parts.sort()).toEqual(["lone-%uD800", "lone-%uDC00", "lone-%25d800", "a%3Ab", "a%253Ab", "pair-%uD83D%uDE00", "%u00E9"].sort());
  });

  test("7: a tool's own content budget holds over the queue, and a result over it is refused", async () => {
    const queue = uniqueQueue("content-budget");
    await host(queue);
    const executor = await agent(queue);
    const result = await executor.executeToolCall(call("bigContent", { n: 6000 }, "big"), neverAborted());
    expect(result.isError).toBe(false);
    expect(result.content).toBe("x".repeat(6000));
  });

  test("7: the agent checks a result against the tool's own budget, not the default", async () => {
    const queue = uniqueQueue("content-budget-rogue");
    const executor = await agent(queue);
    // Not a toolgate host: a bare BullMQ worker answering with what it likes.
    const answers = ["x".repeat(8000), "x".repeat(8193)];
    let next = 0;
    const rogue = new Worker(queue, async () => ({ kind: "result", content: answers[next++], isError: false }), {
      connection: client(),
    });
    cleanups.push(() => rogue.close());
    const within8192 = await executor.executeToolCall(call("bigContent", {}, "rogue-within"), neverAborted());
    expect(within8192).toMatchObject({ isError: false, content: answers[0] });
    const over = await executor.executeToolCall(call("bigContent", {}, "rogue-over"), neverAborted());
    expect(errorOf(over)).toEqual({ code: "TOOL_EXECUTION_FAILED", message: "the host's content is over the content budget" });
  });

  describe("8: a database that is not a number is refused up front", () => {
    test.each([`${url}/tools`, `${url}/?db=tools`, `${url}/1/2`])("connection %s", async (connection) => {
      const agentError = await rejection(QueueToolExecutor.create({ connection, queue: "q", modules: [TOOLS] }));
      expect(agentError.code).toBe("INVALID_ARGUMENT");
      expect(agentError.message).toContain("options.connection must name its database as a number");
      const hostError = await rejection(runToolWorkerHost({ connection, queue: "q", modules: [TOOLS] }));
      expect(hostError.code).toBe("INVALID_ARGUMENT");
      expect(hostError.message).toContain("options.connection must name its database as a number");
    });

    test("connection options with a db that is not an integer", async () => {
      const error = await rejection(QueueToolExecutor.create({ connection: { db: "tools" as never }, queue: "q", modules: [TOOLS] }));
      expect(error.message).toBe("options.connection.db must be a non-negative integer (got a string)");
    });

    test("toolgate-worker exits with the option error, not an unhandled ReplyError", async () => {
      const started = startHostProcess(`${url}/tools`, uniqueQueue("cli-db"), [TOOLS]);
      const error = (await started.then(
        () => new Error("the host started"),
        (reason: unknown) => reason,
      )) as Error;
      expect(error.message).toContain("exited before it was ready (code 1)");
      expect(error.message).toContain("options.connection must name its database as a number");
      expect(error.message).not.toContain("ReplyError");
    });
  });

  // Required in CI (TOOLGATE_REQUIRE_REDIS=1): there a missing redis-server fails these tests.
  const ownServer = hasRedisServerBinary() || process.env.TOOLGATE_REQUIRE_REDIS === "1";
  describe.skipIf(!ownServer)("9: a redis-server of the test's own, behind a proxy that black-holes bytes", () => {
    async function privateServer(): Promise<{ server: RedisServer; proxy: PartitionProxy }> {
      const server = await startRedisServer();
      cleanups.push(() => server.kill());
      const proxy = await startPartitionProxy(server.port);
      cleanups.push(() => proxy.close());
      return { server, proxy };
    }

    test("an idle agent's close() returns under a silent partition", async () => {
      const { proxy } = await privateServer();
      const executor = await QueueToolExecutor.create({
        connection: proxy.url,
        queue: uniqueQueue("partition-idle"),
        modules: [TOOLS],
        closeTimeoutMs: 1000,
        redisLostMs: 1000,
      });
      proxy.cut();
      const closingAt = performance.now();
      await within(executor.close(), 15_000, "close()");
      expect(performance.now() - closingAt).toBeLessThan(6000);
    });

    test("a busy agent cut off mid-call: the call settles and close() returns", async () => {
      const { server, proxy } = await privateServer();
      const queue = uniqueQueue("partition-agent");
      const served = await runToolWorkerHost({
        connection: server.url,
        queue,
        modules: [TOOLS],
        threads: 1,
        abortGraceMs: 100,
        closeTimeoutMs: 500,
      });
      cleanups.push(() => served.close());
      const executor = await QueueToolExecutor.create({
        connection: proxy.url,
        queue,
        modules: [TOOLS],
        heartbeatMs: 100,
        closeTimeoutMs: 1000,
        redisLostMs: 1000,
      });
      const log = join(scratchDir(), "starts");
      const pending = settle(executor.executeToolCall(call("waitForStop", { log }, "cut-off"), neverAborted()));
      await waitForFile(log);
      proxy.cut();
      const closingAt = performance.now();
      await within(executor.close(), 12_000, "close()");
      expect(performance.now() - closingAt).toBeLessThan(8000);
      const outcome = await within(pending, 1000, "the call");
      expect(outcome.ok).toBe(true);
      expect(errorOf((outcome as { value: ToolResultMessage }).value).code).toBe("TOOL_EXECUTION_FAILED");
    });

    test("a host cut off mid-job: close() returns within its bounds", async () => {
      const { server, proxy } = await privateServer();
      const queue = uniqueQueue("partition-host");
      const cutHost = await runToolWorkerHost({
        connection: proxy.url,
        queue,
        modules: [TOOLS],
        threads: 1,
        closeTimeoutMs: 1000,
        abortGraceMs: 100,
        lockDurationMs: 5000,
      });
      cleanups.push(() => cutHost.close());
      const executor = await QueueToolExecutor.create({
        connection: server.url,
        queue,
        modules: [TOOLS],
        heartbeatMs: 100,
        closeTimeoutMs: 500,
        redisLostMs: 1000,
      });
      cleanups.push(() => executor.close());
      const log = join(scratchDir(), "starts");
      void settle(executor.executeToolCall(call("waitForStop", { log }, "host-cut-off"), neverAborted()));
      await waitForFile(log);
      proxy.cut();
      const closingAt = performance.now();
      await within(cutHost.close(), 12_000, "the host's close()");
      // closeTimeoutMs 1000 + abortGraceMs 100 + 2000 to record the stopped job + 500 per QUIT, and slack
      expect(performance.now() - closingAt).toBeLessThan(8000);
    });

    // A guard more than a reproduction: before the fix this hung only when the cut caught one of
    // BullMQ's commands in flight (then 30 s: the CLI's closeTimeoutMs); the in-process host above always hung.
    test("toolgate-worker cut off from Redis exits on SIGTERM", async () => {
      const { proxy } = await privateServer();
      const cli = await startHostProcess(proxy.url, uniqueQueue("partition-cli"), [TOOLS], ["--threads", "1"]);
      cleanups.push(() => cli.stop("SIGKILL"));
      proxy.cut();
      const stoppingAt = performance.now();
      await within(cli.stop("SIGTERM"), 12_000, "the host process");
      expect(performance.now() - stoppingAt).toBeLessThan(8000);
    });

    test("after Redis comes back, a new call is not failed for silence from before it existed", async () => {
      const { server } = await privateServer();
      const queue = uniqueQueue("silence");
      const served = await runToolWorkerHost({
        connection: server.url,
        queue,
        modules: [TOOLS],
        threads: 2,
        lockDurationMs: 1000,
        closeTimeoutMs: 500,
        abortGraceMs: 100,
      });
      cleanups.push(() => served.close());
      const executor = await QueueToolExecutor.create({
        connection: server.url,
        queue,
        modules: [TOOLS],
        heartbeatMs: 100,
        redisLostMs: 1000,
        closeTimeoutMs: 500,
      });
      cleanups.push(() => executor.close());
      const log = join(scratchDir(), "starts");
      const lost = settle(executor.executeToolCall(call("waitForStop", { log }, "lost"), neverAborted()));
      await waitForFile(log);
      await server.kill();
      const outcome = await lost;
      expect(errorOf((outcome as { value: ToolResultMessage }).value).message).toMatch(/^Redis did not answer for \d+ ms/);
      await new Promise((resolve) => setTimeout(resolve, 1500)); // Redis stays away well over redisLostMs
      const restarted = await startRedisServer(server.port);
      cleanups.push(() => restarted.kill());

      const result = await within(
        executor.executeToolCall(call("echoId", {}, "after-return"), neverAborted(), { timeoutMs: 15_000 }),
        20_000,
        "the call after Redis returned",
      );
      expect(result.content).not.toMatch(/did not answer/);
      expect(result).toMatchObject({ toolCallId: "after-return", isError: false });
    });
  });
});
