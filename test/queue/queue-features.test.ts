// The pool's features across machines, against a real Redis: a host tool's progress reaches the
// agent's onProgress (throttled, nothing after the call settled, forged events dropped), its
// attachments come back within the call's budgets (forged or oversized ones refused), and the
// host's thread facts reach the agent's onCallEnd and onThreadKilled.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "bullmq";
import type { CallEndEvent, ThreadKilledEvent, ToolProgress } from "toolgate";
import { describe, expect, test } from "vitest";
import { call, errorOf, fixture, neverAborted, scratchDir, waitForFile } from "../support/helpers.js";
import { queueKit } from "../support/queue-kit.js";
import { handmadeAgent } from "../support/queue-lease.js";
import { findRedis, uniqueQueue } from "../support/redis.js";
import { startHostProcess } from "./host-process.js";

const TOOLS = fixture("queue-feature-tools");
const redis = await findRedis();
const url = "url" in redis ? redis.url : "";

const { cleanups, host, agent, client } = queueKit(url, [TOOLS]);

/** A bare BullMQ worker on `queue` answering each job with `answer(job id)`: not a toolgate host. */
function rogueHost(queue: string, answer: (jobId: string) => unknown | Promise<unknown>): void {
  const connection = client();
  const rogue = new Worker(queue, async (job) => answer(job.id as string), { connection });
  cleanups.push(() => rogue.close());
}

const until = async (check: () => boolean, ms = 10_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe.skipIf(!("url" in redis))("docs/queue.md — progress across machines", () => {
  test("a host tool's reports reach the agent's onProgress, frozen and in order, and the latest of a burst arrives", async () => {
    const queue = uniqueQueue("progress");
    await host(queue);
    const executor = await agent(queue);
    const seen: ToolProgress[] = [];
    const result = await executor.executeToolCall(
      call("report", { steps: 3, gapMs: 120, floods: 5000, tailMs: 300 }, "p-1"),
      neverAborted(),
      {
        onProgress: (progress) => seen.push(progress),
      },
    );
    expect(result.isError).toBe(false);
    expect(seen[0]).toEqual({ toolCallId: "p-1", toolName: "report", progress: 1, total: 3, message: "step 1" });
    expect(Object.isFrozen(seen[0])).toBe(true);
    const values = seen.map((progress) => progress.progress);
    expect(values.slice(0, 3)).toEqual([1, 2, 3]);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    // 5000 reports at once: throttled on the host and again here, the latest still delivered.
    expect(values.at(-1)).toBe(5003);
    expect(seen.length).toBeLessThan(20);
  });

  test("without onProgress the host sends nothing: no progress event on the queue's stream", async () => {
    const queue = uniqueQueue("no-progress");
    await host(queue);
    const executor = await agent(queue);
    const events: string[] = [];
    const watcher = client();
    await executor.executeToolCall(call("report", { steps: 2, gapMs: 60 }), neverAborted());
    const entries = await watcher.xrange(`bull:${queue}:events`, "-", "+");
    for (const [, fields] of entries) events.push(fields[1] as string);
    expect(events).toContain("completed");
    expect(events).not.toContain("progress");
  });

  test("nothing reaches onProgress once the call is aborted, though the host's tool keeps reporting", async () => {
    const queue = uniqueQueue("progress-abort");
    await host(queue);
    const executor = await agent(queue);
    const controller = new AbortController();
    const seen: number[] = [];
    let afterAbort = 0;
    const pending = executor.executeToolCall(call("report", { steps: 12, gapMs: 60 }), controller.signal, {
      onProgress: (progress) => {
        if (controller.signal.aborted) afterAbort += 1;
        seen.push(progress.progress);
        if (progress.progress === 2) controller.abort();
      },
    });
    await expect(pending).rejects.toThrow();
    // The tool is deaf to its signal and goes on reporting: give its reports time to come.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(seen).toEqual([1, 2]);
    expect(afterAbort).toBe(0);
  });

  test("forged progress events are checked as reports: malformed ones are dropped, messages cut, the call unharmed", async () => {
    const queue = uniqueQueue("progress-forged");
    const executor = await agent(queue);
    const writer = client();
    let release: (value: unknown) => void = () => {};
    rogueHost(queue, async (jobId) => {
      const forged = [7, "half", { progress: "1" }, { progress: 1, total: "2" }, { progress: 2, message: "m".repeat(10_000) }];
      for (const data of forged)
        await writer.xadd(`bull:${queue}:events`, "*", "event", "progress", "jobId", jobId, "data", JSON.stringify(data));
      return new Promise((resolve) => {
        release = resolve;
      });
    });
    const seen: ToolProgress[] = [];
    const pending = executor.executeToolCall(call("nap"), neverAborted(), { onProgress: (progress) => seen.push(progress) });
    await until(() => seen.length === 1);
    release({ kind: "result", content: '"rested"', isError: false });
    expect((await pending).isError).toBe(false);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.progress).toBe(2);
    expect(seen[0]?.message).toBe("m".repeat(256));
  });
});

describe.skipIf(!("url" in redis))("docs/queue.md — attachments across machines", () => {
  test("a host tool's images come back as the result's attachments, byte for byte", async () => {
    const queue = uniqueQueue("images");
    await host(queue);
    const executor = await agent(queue);
    const result = await executor.executeToolCall(call("images", { count: 2, size: 300 }), neverAborted());
    expect(result.isError).toBe(false);
    expect(Object.isFrozen(result.attachments)).toBe(true);
    expect(result.attachments?.map((attachment) => [attachment.type, attachment.mimeType, attachment.data.length])).toEqual([
      ["image", "image/png", 300],
      ["image", "image/png", 300],
    ]);
    expect([...(result.attachments?.[1]?.data ?? [])].slice(0, 3)).toEqual([1, 2, 3]);
  });

  test("the agent's attachmentBudgets bound the result on the host; a tool's own budgets override them", async () => {
    const queue = uniqueQueue("image-budgets");
    await host(queue);
    const executor = await agent(queue, { attachmentBudgets: { maxAttachmentBytes: 100 } });
    const over = await executor.executeToolCall(call("images", { count: 1, size: 101 }), neverAborted());
    expect(errorOf(over).code).toBe("TOOL_OUTPUT_SERIALIZATION_FAILED");
    expect(errorOf(over).message).toContain("100-byte budget");
    const within = await executor.executeToolCall(call("images", { count: 1, size: 100 }), neverAborted());
    expect(within.attachments?.[0]?.data.length).toBe(100);
    const roomy = await executor.executeToolCall(call("roomyImages", { size: 4000 }), neverAborted());
    expect(roomy.attachments?.[0]).toMatchObject({ mimeType: "image/webp" });
    expect(roomy.attachments?.[0]?.data.length).toBe(4000);
  });

  test("forged or oversized attachment data from Redis becomes TOOL_EXECUTION_FAILED, never a crash", async () => {
    const queue = uniqueQueue("image-forged");
    const executor = await agent(queue, { attachmentBudgets: { maxAttachments: 2, maxAttachmentBytes: 64 } });
    const image = (data: unknown, mimeType: unknown = "image/png") => ({ type: "image", mimeType, data });
    const forged: unknown[] = [
      "not a list",
      [image("!!!!")],
      [image("AAA")],
      [image("AAAA", "image/svg+xml")],
      [image("")],
      [{ ...image("AAAA"), type: "audio" }],
      [image(Buffer.alloc(65).toString("base64"))],
      [image("AAAA"), image("AAAA"), image("AAAA")],
    ];
    let next = 0;
    rogueHost(queue, () => ({ kind: "result", content: '"x"', isError: false, attachments: forged[next++] }));
    const codes: string[] = [];
    for (let index = 0; index < forged.length; index += 1) {
      const result = await executor.executeToolCall(call("images", {}, `forged-${index}`), neverAborted());
      expect(result.attachments).toBeUndefined();
      codes.push(errorOf(result).code);
    }
    expect(codes).toEqual(forged.map(() => "TOOL_EXECUTION_FAILED"));
  });
});

describe.skipIf(!("url" in redis))("docs/queue.md — thread facts across machines", () => {
  test("onCallEnd carries the host's thread, its run time, and the wait around it", async () => {
    const queue = uniqueQueue("facts");
    await host(queue);
    const ended: CallEndEvent[] = [];
    const executor = await agent(queue, { hooks: { onCallEnd: (event) => ended.push(event) } });
    await executor.executeToolCall(call("nap", { ms: 300 }), neverAborted());
    const [event] = ended;
    expect(event?.outcome).toBe("success");
    expect(event?.threadId).toEqual(expect.any(Number));
    expect(event?.threadKilled).toBe(false);
    expect(event?.runMs).toBeGreaterThanOrEqual(290);
    expect(event?.queueWaitMs).toBeGreaterThanOrEqual(0);
    expect((event?.runMs ?? 0) + (event?.queueWaitMs ?? 0)).toBeLessThanOrEqual((event?.durationMs ?? 0) + 1);
  });

  test("a host thread terminated after the agent timed out is relayed to onThreadKilled", async () => {
    const queue = uniqueQueue("killed");
    await host(queue);
    const killed: ThreadKilledEvent[] = [];
    const ended: CallEndEvent[] = [];
    const executor = await agent(queue, {
      hooks: { onThreadKilled: (event) => killed.push(event), onCallEnd: (event) => ended.push(event) },
    });
    const result = await executor.executeToolCall(call("spin", {}, "spinner"), neverAborted(), { timeoutMs: 300 });
    expect(errorOf(result).code).toBe("TOOL_EXECUTION_TIMEOUT");
    await until(() => killed.length > 0);
    expect(killed).toEqual([{ toolCallId: "spinner", toolName: "spin", threadId: undefined }]);
    expect(ended[0]?.threadKilled).toBe(false);
    // The host keeps serving.
    expect((await executor.executeToolCall(call("nap"), neverAborted())).content).toBe("rested");
  });

  test("a host's job signals serve job after job: a cancel still stops a later job's tool, and a cancelled job's signal serves none after it", async () => {
    const queue = uniqueQueue("signals");
    await host(queue, { threads: 1 });
    const killed: ThreadKilledEvent[] = [];
    const executor = await agent(queue, { hooks: { onThreadKilled: (event) => killed.push(event) } });
    // Plain jobs that end without an abort: their signals serve the jobs after them (host.ts).
    for (let index = 0; index < 3; index += 1) expect((await executor.executeToolCall(call("nap"), neverAborted())).content).toBe("rested");
    const log = join(scratchDir(), "spinning");
    const controller = new AbortController();
    const pending = executor.executeToolCall(call("spin", { log }, "spinner"), controller.signal);
    await waitForFile(log);
    controller.abort();
    await expect(pending).rejects.toThrow();
    // The cancel reached the tool through a signal an earlier job had: its thread, deaf to it, is terminated after the grace period.
    await until(() => killed.length > 0);
    expect(killed).toEqual([{ toolCallId: "spinner", toolName: "spin", threadId: undefined }]);
    // The aborted signal serves no later job: this one starts and runs.
    expect((await executor.executeToolCall(call("nap"), neverAborted())).content).toBe("rested");
  });

  test("forged thread facts make the result TOOL_EXECUTION_FAILED; a forged kill event of an unknown job is dropped", async () => {
    const queue = uniqueQueue("facts-forged");
    const killed: ThreadKilledEvent[] = [];
    const executor = await agent(queue, { hooks: { onThreadKilled: (event) => killed.push(event) } });
    const writer = client();
    const forged = [
      { waitMs: -1, runMs: 1, killed: false },
      { waitMs: 1, runMs: 1, killed: "yes" },
      { waitMs: 1, runMs: 1, killed: false, threadId: 1.5 },
      3,
    ];
    let next = 0;
    rogueHost(queue, async (jobId) => {
      await writer.xadd(`bull:${queue}:events`, "*", "event", "toolgate-thread-killed", "jobId", `${jobId}-not-mine`);
      return { kind: "result", content: '"x"', isError: false, facts: forged[next++] };
    });
    for (let index = 0; index < forged.length; index += 1) {
      const result = await executor.executeToolCall(call("nap", {}, `forged-${index}`), neverAborted());
      expect(errorOf(result).code).toBe("TOOL_EXECUTION_FAILED");
    }
    expect(killed).toEqual([]);
  });
});

describe.skipIf(!("url" in redis))("docs/queue.md — Guarantees: a cancel that reaches a host before the job's run", () => {
  test("a cancel message for a job the host has not yet run is kept: the job, taken later, is not started", async () => {
    const queue = uniqueQueue("early-cancel");
    await host(queue);
    const writer = client();
    const agentId = await handmadeAgent(writer, queue);
    const jobId = `${agentId}.1.call`;
    // The message the agent's cancel publishes, arriving before the host has the job (as when
    // the host's moveToActive and the cancel race): forced here by sending it first.
    await writer.publish(`toolgate:${queue}:cancel`, JSON.stringify({ jobId, reason: "timeout" }));
    const { Queue, QueueEvents } = await import("bullmq");
    const producer = new Queue(queue, { connection: client() });
    const events = new QueueEvents(queue, { connection: client() });
    cleanups.push(async () => {
      await events.close();
      await producer.close();
    });
    await events.waitUntilReady();
    const job = await producer.add("nap", { v: 1, callId: "call", toolName: "nap", arguments: { ms: 0 } }, { jobId });
    expect(await job.waitUntilFinished(events, 10_000)).toEqual({ kind: "not-started", reason: "cancelled" });
    // The same host runs a job nobody cancelled: the check above could fail.
    const other = await producer.add(
      "nap",
      { v: 1, callId: "call", toolName: "nap", arguments: { ms: 0 } },
      { jobId: `${agentId}.2.call` },
    );
    expect(await other.waitUntilFinished(events, 10_000)).toMatchObject({ kind: "result", content: "rested", isError: false });
  });
});

describe.skipIf(!("url" in redis))("docs/queue.md — Guarantees: a host takes only as many jobs as it has threads", () => {
  test("a host killed while one job runs and the next waits in Redis: the running one fails within the lock bound, the waiting one runs once, on the survivor", async () => {
    const queue = uniqueQueue("taken-waiting");
    const tools = fixture("queue-tools");
    const flags = ["--threads", "1", "--lock-duration", "1000"];
    const victim = await startHostProcess(url, queue, [tools], flags);
    cleanups.push(() => victim.stop("SIGKILL"));
    const executor = await agent(queue, { modules: [tools] });
    const log = join(scratchDir(), "starts");
    const running = executor.executeToolCall(call("waitForStop", { log }, "running"), neverAborted());
    expect(await waitForFile(log)).toBe(`running ${victim.pid}\n`);
    const waiting = executor.executeToolCall(call("whoAmI", { log }, "waiting"), neverAborted());
    // The second job stays in Redis's wait list while the host's one thread is busy: it is not taken.
    const reader = client();
    const deadline = Date.now() + 10_000;
    while ((await reader.llen(`bull:${queue}:wait`)) < 1) {
      if (Date.now() > deadline) throw new Error("the second job was not added");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await reader.llen(`bull:${queue}:active`)).toBe(1);
    await victim.stop("SIGKILL");
    const survivor = await startHostProcess(url, queue, [tools], flags);
    cleanups.push(() => survivor.stop("SIGTERM"));
    expect(errorOf(await running).code).toBe("TOOL_EXECUTION_FAILED");
    expect(errorOf(await running).message).toMatch(/stopped renewing its job lock|stalled/);
    expect(JSON.parse((await waiting).content)).toEqual({ pid: survivor.pid, toolCallId: "waiting" });
    // The running one ran once, on the dead host; the waiting one once, on the survivor.
    expect(readFileSync(log, "utf8")).toBe(`running ${victim.pid}\nwaiting ${survivor.pid}\n`);
  });
});
