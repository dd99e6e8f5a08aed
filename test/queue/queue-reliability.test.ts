// Issue 41, queue defects 7–12, each against a real Redis: a large image read without a stack
// overflow on both of the agent's read paths, one job key of the wrong type costing only its
// own call, queue names BullMQ and ioredis would encode differently refused, an event reader
// that finds its place again after the stream went back, a host's own kills reaching the
// agent's onThreadKilled, and a database the server does not have refused at startup.
// (13–15, partitions and outages: queue-partitions.test.ts; the readers alone, fuzzed:
// queue-redis-data.test.ts.)
import { join } from "node:path";
import { Queue } from "bullmq";
import type { ThreadKilledEvent, ToolProgress } from "toolgate";
import { QueueToolExecutor, runToolWorkerHost } from "toolgate/queue";
import { describe, expect, test, vi } from "vitest";
import { contractError as rejection } from "../support/assertions.js";
import { call, errorOf, fixture, neverAborted, scratchDir, waitForFile } from "../support/helpers.js";
import { queueKit, within } from "../support/queue-kit.js";
import { findRedis, uniqueQueue } from "../support/redis.js";
import { startHostProcess } from "./host-process.js";

const TOOLS = fixture("queue-feature-tools");
const redis = await findRedis();
const url = "url" in redis ? redis.url : "";
const MiB = 1024 * 1024;

const { cleanups, host, agent, client } = queueKit(url, [TOOLS]);

/** The ids of `queue`'s jobs in `state`, read with BullMQ as an operator would, once there are `count`. */
async function jobIds(queue: string, state: "active" | "waiting", count: number): Promise<string[]> {
  const reader = new Queue(queue, { connection: client() });
  cleanups.push(() => reader.close());
  return vi.waitFor(
    async () => {
      const ids = (await reader.getJobs([state])).map((job) => job.id as string);
      if (ids.length < count) throw new Error(`${ids.length} ${state} jobs`);
      return ids;
    },
    { timeout: 10_000, interval: 20 },
  );
}

/** The bytes the `images` fixture makes: counting up from its index. */
const expectedByte = (index: number): number => index % 256;

describe.skipIf(!("url" in redis))("issue 41: the queue's defects 7–12 (real Redis)", () => {
  describe("7: a host tool's 4 MiB image is read on either path, never overflowing the stack", () => {
    test("the event path reads it first: the call settles with the very bytes, and the process lives", async () => {
      const queue = uniqueQueue("big-image");
      await host(queue);
      // A heartbeat this slow cannot be the path that reads the result.
      const executor = await agent(queue, { heartbeatMs: 30_000 });
      const result = await within(
        executor.executeToolCall(call("images", { count: 1, size: 4 * MiB }), neverAborted()),
        15_000,
        "the call",
      );
      expect(result.isError).toBe(false);
      const data = result.attachments?.[0]?.data as Uint8Array;
      expect(data.length).toBe(4 * MiB);
      expect([data[0], data[1], data[4 * MiB - 1]]).toEqual([expectedByte(0), expectedByte(1), expectedByte(4 * MiB - 1)]);
    });

    test("the heartbeat reads it first (a result written into the hash, no event): the call settles with it", async () => {
      const queue = uniqueQueue("big-image-heartbeat");
      const executor = await agent(queue, { attachmentBudgets: { maxAttachmentBytes: 6 * MiB } });
      const pending = executor.executeToolCall(call("images", {}, "written"), neverAborted());
      const [jobId] = await jobIds(queue, "waiting", 1);
      const image = Buffer.alloc(5 * MiB, 7).toString("base64");
      const result = JSON.stringify({
        kind: "result",
        content: '"x"',
        isError: false,
        attachments: [{ type: "image", mimeType: "image/png", data: image }],
      });
      await client().hset(`bull:${queue}:${jobId}`, "returnvalue", result, "finishedOn", Date.now());
      const answer = await within(pending, 10_000, "the call");
      expect(answer.attachments?.[0]?.data.length).toBe(5 * MiB);
    });
  });

  test("8: a job key of the wrong type fails its own call only; the calls beside it finish on their host", async () => {
    const queue = uniqueQueue("wrong-type");
    await host(queue, { threads: 1 });
    const executor = await agent(queue, { redisLostMs: 1000 });
    // One thread: the first call runs 2.5 s (past redisLostMs), the second waits in Redis for the thread.
    const running = executor.executeToolCall(call("nap", { ms: 2500 }, "running"), neverAborted());
    await jobIds(queue, "active", 1);
    const waiting = executor.executeToolCall(call("nap", {}, "waiting"), neverAborted());
    const ids = await jobIds(queue, "waiting", 1);
    const victim = ids.find((id) => id.endsWith(".waiting")) as string;
    const third = client();
    await third.del(`bull:${queue}:${victim}`);
    await third.set(`bull:${queue}:${victim}`, "not a job");

    const victimResult = await within(waiting, 10_000, "the corrupted call");
    expect(errorOf(victimResult)).toEqual({
      code: "TOOL_EXECUTION_FAILED",
      message: "the job's key in Redis holds something that is not a job (another client wrote it)",
    });
    const healthy = await within(running, 10_000, "the healthy call");
    expect(healthy).toMatchObject({ toolCallId: "running", isError: false, content: "rested" });
  });

  describe("9: queue names BullMQ and ioredis would encode differently are refused at the option check", () => {
    test.each([
      ["a lone high surrogate", "tools-\uD800", "contains a lone surrogate (U+D800)"],
      ["a lone low surrogate", "\uDC00tools", "contains a lone surrogate (U+DC00)"],
      ["a newline", "tools\nmore", "contains the control character U+000A"],
      ["a NUL", "tools\u0000", "contains the control character U+0000"],
      ["129 characters", "q".repeat(129), "is longer than 128 characters"],
    ])("a queue name with %s: create() and runToolWorkerHost() refuse it, naming why", async (_label, queue, why) => {
      const agentError = await rejection(QueueToolExecutor.create({ connection: url, queue, modules: [TOOLS] }));
      expect(agentError.code).toBe("INVALID_ARGUMENT");
      expect(agentError.message).toContain(`which ${why}`);
      const hostError = await rejection(runToolWorkerHost({ connection: url, queue, modules: [TOOLS] }));
      expect(hostError.message).toContain(`which ${why}`);
    });

    test("the longest name, astral characters and all, works end to end", async () => {
      const prefix = uniqueQueue("long");
      const queue = prefix + "\u{1F600}é".repeat((128 - prefix.length) / 3).padEnd(128 - prefix.length, "x");
      expect(queue).toHaveLength(128);
      await host(queue);
      const executor = await agent(queue);
      const result = await within(executor.executeToolCall(call("nap", {}, "long-queue"), neverAborted()), 10_000, "the call");
      expect(result).toMatchObject({ toolCallId: "long-queue", isError: false, content: "rested" });
    });
  });

  test("10: after the stream went back below the reader (a future id, then the stream deleted), results and progress arrive by event again", async () => {
    const queue = uniqueQueue("stream-back");
    await host(queue);
    // The heartbeat would take 30 s: results within seconds came by event.
    const executor = await agent(queue, { heartbeatMs: 30_000 });
    const stream = `bull:${queue}:events`;
    const third = client();
    await third.xadd(stream, "9999999999999-0", "event", "forged", "jobId", "x");
    // A result by event (the heartbeat is too slow) comes after the forged entry: the reader is past it.
    const before = await within(executor.executeToolCall(call("nap", {}, "before-reset"), neverAborted()), 5000, "the call before");
    expect(before.content).toBe("rested");
    await third.del(stream);

    const startedAt = performance.now();
    const seen: ToolProgress[] = [];
    const result = await within(
      executor.executeToolCall(call("report", { steps: 2, gapMs: 100, tailMs: 6500 }, "after-reset"), neverAborted(), {
        onProgress: (progress) => seen.push(progress),
      }),
      20_000,
      "the call",
    );
    expect(result).toMatchObject({ toolCallId: "after-reset", isError: false });
    expect(performance.now() - startedAt).toBeLessThan(15_000);
    // The reader found its place within one empty read (5 s) and a look at the stream.
    const again = await within(executor.executeToolCall(call("nap", {}, "next"), neverAborted()), 5000, "the next call");
    expect(again.content).toBe("rested");
    const next = await within(
      executor.executeToolCall(call("report", { steps: 2, gapMs: 100 }, "progress-again"), neverAborted(), {
        onProgress: (progress) => seen.push(progress),
      }),
      5000,
      "the call with progress",
    );
    expect(next.isError).toBe(false);
    expect(seen.filter((progress) => progress.toolCallId === "progress-again").map((progress) => progress.progress)).toEqual([1, 2]);
  });

  describe("11: a host's own kill of a deaf tool's thread reaches the agent's onThreadKilled, as the pool's does", () => {
    test("the host's time limit", async () => {
      const queue = uniqueQueue("host-timeout-kill");
      await host(queue, { timeoutMs: 300, abortGraceMs: 100 });
      const killed: ThreadKilledEvent[] = [];
      const executor = await agent(queue, { hooks: { onThreadKilled: (event) => killed.push(event) } });
      const result = await executor.executeToolCall(call("spin", {}, "deaf"), neverAborted());
      expect(errorOf(result)).toEqual({ code: "TOOL_EXECUTION_TIMEOUT", message: "the tool did not finish within 300 ms" });
      // The host's facts came with its answer: the event names the host's thread.
      await vi.waitFor(() => expect(killed).toEqual([{ toolCallId: "deaf", toolName: "spin", threadId: expect.any(Number) }]), {
        timeout: 5000,
        interval: 20,
      });
    });

    test("the host's close(), stopping a running job", async () => {
      const queue = uniqueQueue("host-close-kill");
      const closing = await runToolWorkerHost({
        connection: url,
        queue,
        modules: [TOOLS],
        threads: 1,
        abortGraceMs: 100,
        closeTimeoutMs: 200,
      });
      cleanups.push(() => closing.close());
      const killed: ThreadKilledEvent[] = [];
      const executor = await agent(queue, { hooks: { onThreadKilled: (event) => killed.push(event) } });
      const log = join(scratchDir(), "spinning");
      const pending = executor.executeToolCall(call("spin", { log }, "closed-on"), neverAborted());
      expect(await waitForFile(log, 10_000)).toBe("spinning"); // the tool runs on the host's thread
      await closing.close();
      const result = await within(pending, 10_000, "the call");
      expect(errorOf(result)).toEqual({ code: "TOOL_EXECUTION_FAILED", message: "the host stopped the tool before it finished" });
      await vi.waitFor(() => expect(killed).toEqual([{ toolCallId: "closed-on", toolName: "spin", threadId: expect.any(Number) }]), {
        timeout: 5000,
        interval: 20,
      });
    });
  });

  describe("12: a database the server does not have is refused at startup", () => {
    test.each([
      ["a URL path", `${url}/99`],
      ["a db query parameter", `${url}/?db=99`],
    ])("%s: create() and runToolWorkerHost() refuse it, naming the database and how many there are", async (_label, connection) => {
      const agentError = await rejection(QueueToolExecutor.create({ connection, queue: uniqueQueue("db"), modules: [TOOLS] }));
      expect(agentError.code).toBe("INVALID_ARGUMENT");
      expect(agentError.message).toMatch(
        /^options\.connection names database 99, which the Redis at redis:\/\/[^ ]+ does not have \(it has \d+: 0 to \d+\)/,
      );
      const hostError = await rejection(runToolWorkerHost({ connection, queue: uniqueQueue("db"), modules: [TOOLS] }));
      expect(hostError.message).toContain("options.connection names database 99");
    });

    test("connection options with db: 99", async () => {
      const { hostname, port } = new URL(url);
      const error = await rejection(
        QueueToolExecutor.create({
          connection: { host: hostname, port: Number(port || 6379), db: 99 },
          queue: uniqueQueue("db"),
          modules: [TOOLS],
        }),
      );
      expect(error.message).toContain("options.connection names database 99");
    });

    test("toolgate-worker exits with the error, and a database the server has still works", async () => {
      const refused = await startHostProcess(`${url}/99`, uniqueQueue("cli-db"), [TOOLS]).then(
        () => new Error("the host started"),
        (reason: unknown) => reason as Error,
      );
      expect(refused.message).toContain("exited before it was ready (code 1)");
      expect(refused.message).toContain("options.connection names database 99");
      const queue = uniqueQueue("db-1");
      await host(queue, { connection: `${url}/1` });
      const executor = await agent(queue, { connection: `${url}/1` });
      expect((await executor.executeToolCall(call("nap"), neverAborted())).content).toBe("rested");
    });
  });
});
