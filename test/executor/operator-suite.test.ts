// The operator's options, written once for every executor (test/support/executors.ts): the
// in-process one, the worker pool, and the queue executor (a host and an agent on a queue of
// their own, when Redis is reachable): time limits, hooks and attachments hold on each.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { CallEndEvent, CallStartEvent, ExecutorOptions, ToolExecutor, ToolExecutorHooks } from "toolgate";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { contractError } from "../support/assertions.js";
import { CONTRACT_EXECUTORS as EXECUTORS } from "../support/executors.js";
import { call, errorOf, fixture, neverAborted, scratchDir, waitForFile } from "../support/helpers.js";

const OPERATOR_TOOLS = fixture("operator-tools");

describe.each(EXECUTORS)("docs/operations.md — Timeouts: operator options, %s", (_label, make) => {
  let executor: ToolExecutor;
  let dir: string;
  beforeAll(async () => {
    executor = await make([OPERATOR_TOOLS], { timeoutMs: 300 });
    dir = scratchDir();
  });
  afterAll(() => executor.close());

  test.each([
    [{ timeoutMs: 0 }, "options.timeoutMs must be an integer from 1 to 2147483647 (got the number 0)"],
    [{ timeoutMs: 2 ** 31 }, "options.timeoutMs must be an integer from 1 to 2147483647 (got the number 2147483648)"],
    [{ timeoutMs: 1.5 }, "(got the number 1.5)"],
    [{ timeoutMs: Number.POSITIVE_INFINITY }, "(got the number Infinity)"],
    [{ timeoutMs: "100" }, "(got a string)"],
    [{ timeoutMs: null }, "(got null)"],
    [
      Object.defineProperty({}, "timeoutMs", { get: () => 100, enumerable: true }),
      "options.timeoutMs must be a data property, not an accessor",
    ],
    [new Proxy({}, {}), "call options must be an object (got a Proxy)"],
    ["fast", "call options must be an object (got a string)"],
  ])("per-call options %o are refused up front with INVALID_ARGUMENT", async (options, message) => {
    const path = join(dir, "touched-despite-bad-options");
    const error = await contractError(executor.executeToolCall(call("touch", { path }), neverAborted(), options as never));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.message).toContain(message);
    expect(existsSync(path)).toBe(false); // refused before the call ran
    const batchError = await contractError(executor.executeBatch([call("touch", { path })], neverAborted(), options as never));
    expect(batchError.code).toBe("INVALID_ARGUMENT");
    expect(existsSync(path)).toBe(false);
  });

  test("a batch's concurrency message names the value it got, with its article", async () => {
    const error = await contractError(executor.executeBatch([call("image")], neverAborted(), { concurrency: "2" as never }));
    expect(error.message).toBe("options.concurrency must be a positive integer or Infinity (got a string)");
  });

  test("the executor's timeoutMs gives a linked TOOL_EXECUTION_TIMEOUT, and the tool's signal fires with a TimeoutError", async () => {
    const report = join(dir, "executor-timeout");
    const result = await executor.executeToolCall(call("wait", { ms: 60_000, report }, "call-late"), neverAborted());
    expect(result).toMatchObject({ id: "tool-result-call-late", toolCallId: "call-late", toolName: "wait", isError: true });
    expect(Object.isFrozen(result)).toBe(true);
    expect(errorOf(result)).toEqual({ code: "TOOL_EXECUTION_TIMEOUT", message: "the tool did not finish within 300 ms" });
    expect(await waitForFile(report)).toBe("TimeoutError");
    // Within the limit, the same tool succeeds: the timeout above could have not happened.
    expect((await executor.executeToolCall(call("wait", { ms: 1 }), neverAborted())).content).toBe("waited");
  });

  test("an abort still rejects with the reason itself under a timeout", async () => {
    const controller = new AbortController();
    const pending = executor.executeToolCall(call("wait", { ms: 60_000 }), controller.signal);
    setTimeout(() => controller.abort("caller gave up"), 20);
    await expect(pending).rejects.toBe("caller gave up");
  });
});

describe.each(EXECUTORS)("docs/operations.md — Timeouts: a tool's own timeoutMs, %s", (_label, make) => {
  test("a tool module whose tool declares an impossible timeoutMs is refused when the executor is made", async () => {
    const error = await contractError(make([fixture("operator-bad-timeout")]));
    expect(error.code).toBe("INVALID_TOOL_DEFINITION");
    expect(error.message).toContain('tool "tooPatient": timeoutMs must be an integer from 1 to 2147483647 (got the number 2147483648)');
  });
});

describe.each(EXECUTORS)("docs/operations.md — Timeouts: the timeout rule (call over tool over executor), %s", (_label, make) => {
  let executor: ToolExecutor;
  beforeAll(async () => {
    executor = await make([OPERATOR_TOOLS], { timeoutMs: 300 });
  });
  afterAll(() => executor.close());
  const run = (name: string, args: Record<string, number>, options?: { timeoutMs: number }) =>
    executor.executeToolCall(call(name, args), neverAborted(), options);

  test("a tool's own timeoutMs overrides the executor's, shorter or longer", async () => {
    expect(errorOf(await run("quick", { ms: 60_000 }))).toEqual({
      code: "TOOL_EXECUTION_TIMEOUT",
      message: "the tool did not finish within 100 ms",
    });
    // 500 ms is over the executor's 300 but within the tool's 60 000.
    expect((await run("patient", { ms: 500 })).content).toBe("waited");
  });

  test("a call's timeoutMs overrides the tool's and the executor's", async () => {
    expect((await run("quick", { ms: 250 }, { timeoutMs: 5000 })).content).toBe("waited");
    expect(errorOf(await run("patient", { ms: 60_000 }, { timeoutMs: 50 })).message).toBe("the tool did not finish within 50 ms");
    expect((await run("wait", { ms: 500 }, { timeoutMs: 5000 })).content).toBe("waited");
  });

  test("a batch's timeoutMs applies to each of its calls", async () => {
    const results = await executor.executeBatch([call("wait", { ms: 60_000 }, "b1"), call("wait", { ms: 1 }, "b2")], neverAborted(), {
      timeoutMs: 80,
    });
    expect(errorOf(results[0] as never).message).toBe("the tool did not finish within 80 ms");
    expect(results[1]?.content).toBe("waited");
  });
});

describe.each(EXECUTORS)("docs/operations.md — Hooks: hooks, %s", (_label, make) => {
  const starts: CallStartEvent[] = [];
  const ends: CallEndEvent[] = [];
  const approvals: string[] = [];
  let dir: string;
  let executor: ToolExecutor;
  const hooks: ToolExecutorHooks = {
    async beforeExecute(snapshot) {
      approvals.push(snapshot.id);
      await new Promise((resolve) => setTimeout(resolve, 5)); // asynchronous, as a real approval is
      return snapshot.arguments.deny === true ? { allow: false, reason: "touch needs a human's approval" } : { allow: true };
    },
    onCallStart: (event) => void starts.push(event),
    onCallEnd(event) {
      ends.push(event);
      throw new Error("a broken exporter"); // never changes the outcome
    },
  };
  beforeAll(async () => {
    executor = await make([OPERATOR_TOOLS], { hooks, timeoutMs: 200 } satisfies ExecutorOptions);
    dir = scratchDir();
  });
  afterAll(() => executor.close());

  test("beforeExecute can deny a call: TOOL_CALL_DENIED with its reason, and the tool never runs", async () => {
    const path = join(dir, "denied");
    const denied = await executor.executeToolCall(call("touch", { path, deny: true }, "call-denied"), neverAborted());
    expect(denied).toMatchObject({ toolCallId: "call-denied", isError: true });
    expect(errorOf(denied)).toEqual({ code: "TOOL_CALL_DENIED", message: "touch needs a human's approval" });
    expect(existsSync(path)).toBe(false);
    const allowedPath = join(dir, "allowed");
    expect((await executor.executeToolCall(call("touch", { path: allowedPath }, "call-allowed"), neverAborted())).content).toBe("touched");
    expect(existsSync(allowedPath)).toBe(true);
    expect(approvals).toEqual(expect.arrayContaining(["call-denied", "call-allowed"]));
  });

  test("beforeExecute runs after validation: an unknown tool is never offered for approval", async () => {
    const before = approvals.length;
    expect(errorOf(await executor.executeToolCall(call("nope", {}, "call-unknown"), neverAborted())).code).toBe("TOOL_NOT_FOUND");
    expect(approvals.length).toBe(before);
  });

  test("onCallStart and onCallEnd carry the call id, tool name, outcome, timings and thread", async () => {
    await executor.executeToolCall(call("wait", { ms: 1 }, "call-ok"), neverAborted());
    await executor.executeToolCall(call("wait", { ms: 60_000 }, "call-timeout"), neverAborted());
    expect(starts).toEqual(
      expect.arrayContaining([
        { toolCallId: "call-ok", toolName: "wait" },
        { toolCallId: "call-timeout", toolName: "wait" },
      ]),
    );
    const ok = ends.find((event) => event.toolCallId === "call-ok");
    expect(ok).toMatchObject({ toolName: "wait", outcome: "success", code: undefined, threadKilled: false });
    expect(typeof ok?.threadId).toBe("number");
    expect(ok?.queueWaitMs).toBeGreaterThanOrEqual(0);
    expect(ok?.runMs).toBeGreaterThanOrEqual(0);
    expect(ok?.durationMs).toBeGreaterThanOrEqual(ok?.runMs ?? Number.NaN);
    const late = ends.find((event) => event.toolCallId === "call-timeout");
    expect(late).toMatchObject({ outcome: "error", code: "TOOL_EXECUTION_TIMEOUT" });
    expect(late?.runMs).toBeGreaterThanOrEqual(150); // it ran until the 200 ms limit (timers may fire a little early)
    const denied = ends.find((event) => event.toolCallId === "call-denied");
    expect(denied).toMatchObject({ outcome: "error", code: "TOOL_CALL_DENIED", runMs: 0, threadId: undefined });
    expect(Object.isFrozen(ok)).toBe(true);
  });

  test("an aborted call ends with outcome 'aborted'", async () => {
    const controller = new AbortController();
    const pending = executor.executeToolCall(call("wait", { ms: 60_000 }, "call-aborted"), controller.signal);
    setTimeout(() => controller.abort(new Error("stop")), 20);
    await expect(pending).rejects.toThrow("stop");
    expect(ends.find((event) => event.toolCallId === "call-aborted")).toMatchObject({ outcome: "aborted", code: undefined });
  });
});

describe.each(EXECUTORS)("docs/operations.md — Hooks: hostile hooks, %s", (_label, make) => {
  const hookErrors: string[] = [];
  const ends: CallEndEvent[] = [];
  let dir: string;
  let executor: ToolExecutor;
  // The decision is read from the call's arguments, so one executor serves every case.
  const hooks: ToolExecutorHooks = {
    beforeExecute(snapshot) {
      const mode = snapshot.arguments.mode;
      if (mode === "throw") throw new Error("the approval service is down");
      if (mode === "garbage") return { allow: "yes" } as never;
      if (mode === "never") return new Promise(() => {}); // a person who never answers
      return { allow: true };
    },
    onCallStart() {
      throw new Error("a broken start exporter");
    },
    onCallEnd: (event) => {
      ends.push(event);
      return Promise.reject(new Error("a broken end exporter")) as never;
    },
    onHookError: (_error, hook) => void hookErrors.push(hook),
  };
  beforeAll(async () => {
    executor = await make([OPERATOR_TOOLS], { hooks });
    dir = scratchDir();
  });
  afterAll(() => executor.close());

  test.each(["throw", "garbage"])("a beforeExecute that fails (%s) denies the call, and the tool never runs", async (mode) => {
    const path = join(dir, `touched-${mode}`);
    const result = await executor.executeToolCall(call("touch", { path, mode }), neverAborted());
    expect(errorOf(result)).toEqual({ code: "TOOL_CALL_DENIED", message: "the call could not be approved: the approval hook failed" });
    expect(existsSync(path)).toBe(false);
    expect(hookErrors).toContain("beforeExecute");
  });

  test("an approval that never answers: the abort rejects with the reason, and the tool never runs", async () => {
    const path = join(dir, "touched-never");
    const controller = new AbortController();
    const pending = executor.executeToolCall(call("touch", { path, mode: "never" }, "call-never"), controller.signal);
    setTimeout(() => controller.abort("nobody approved"), 20);
    await expect(pending).rejects.toBe("nobody approved");
    expect(existsSync(path)).toBe(false);
    expect(ends.find((event) => event.toolCallId === "call-never")).toMatchObject({ outcome: "aborted", runMs: 0, threadId: undefined });
  });

  test("throwing and rejecting observers change no outcome, and are reported", async () => {
    const path = join(dir, "touched-ok");
    expect((await executor.executeToolCall(call("touch", { path }, "call-observed"), neverAborted())).content).toBe("touched");
    expect(existsSync(path)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 10)); // the rejection is reported a turn later
    expect(hookErrors).toEqual(expect.arrayContaining(["onCallStart", "onCallEnd"]));
    expect(ends.find((event) => event.toolCallId === "call-observed")).toMatchObject({ outcome: "success", threadKilled: false });
  });
});

describe.each(EXECUTORS)("docs/operations.md — Images and other attachments: attachments, %s", (_label, make) => {
  let executor: ToolExecutor;
  beforeAll(async () => {
    executor = await make([OPERATOR_TOOLS]);
  });
  afterAll(() => executor.close());

  test("an image is a frozen attachment beside the text content", async () => {
    const result = await executor.executeToolCall(call("image", {}, "call-image"), neverAborted());
    expect(result).toMatchObject({ toolCallId: "call-image", content: "", isError: false });
    expect(result.attachments).toHaveLength(1);
    expect(result.attachments?.[0]).toEqual({ type: "image", mimeType: "image/png", data: new Uint8Array([0x89, 0x50, 0x4e, 0x47]) });
    expect(Object.isFrozen(result.attachments)).toBe(true);
    expect(Object.isFrozen(result.attachments?.[0])).toBe(true);
  });

  test("text and several attachments together; a text-only result has no attachments field", async () => {
    const result = await executor.executeToolCall(call("captioned", { caption: "two views" }), neverAborted());
    expect(result.content).toBe('{"caption":"two views"}');
    expect(result.attachments?.map((attachment) => attachment.mimeType)).toEqual(["image/png", "image/jpeg"]);
    const plain = await executor.executeToolCall(call("wait", { ms: 1 }), neverAborted());
    expect(Object.keys(plain)).toEqual(["role", "id", "toolCallId", "toolName", "content", "isError"]);
  });

  test("an unsupported image type is the call's TOOL_EXECUTION_FAILED, naming it", async () => {
    const result = await executor.executeToolCall(call("badImage"), neverAborted());
    expect(errorOf(result)).toEqual({
      code: "TOOL_EXECUTION_FAILED",
      message:
        'ToolContractError: imageContent: mimeType must be one of image/png, image/jpeg, image/gif, image/webp (got "image/svg+xml")',
    });
    expect(result.attachments).toBeUndefined();
  });
});
