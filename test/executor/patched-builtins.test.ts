// The primordials habit on every executor's path (docs/contract.md — How the code keeps the
// rules: primordials; rule 8 — abort wins, rule 9 — failure classification, rule 10 — safe
// serialization, rule 13 — frozen, linked results). While every method and getter of Array,
// Promise, Map, Set, Function, Object, Reflect, JSON and String is replaced by a hostile copy
// (test/fixtures/support/hostile-builtins.ts), calls run as before: toolgate's own code never
// calls one of them, and a `then` that forges values never reaches a result. Once on the main
// thread, for both executors; once inside the pool's threads, whose patches a tool module
// makes at its top level (test/fixtures/worker-patched.ts), so the worker entry and thread
// setup are checked too. Without this, a patched Array.prototype.push made worker calls hang
// and a patched Promise.prototype.then forged the content a call resolved with.
import { isNonRecoverableToolError, isToolContractError, type ToolExecutor } from "toolgate";
import { WorkerToolExecutor } from "toolgate/worker";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { FORGED, forgeProbe, patchCount, toolgateCalls, underHostileBuiltins } from "../fixtures/support/hostile-builtins.js";
import { expectLinkedResult } from "../support/assertions.js";
import { EXECUTORS, workerPoolExecutor } from "../support/executors.js";
import { call, errorOf, fixture, neverAborted } from "../support/helpers.js";

/** Every kind of single call, each outcome kept as it came (a result, or the rejection's reason). */
async function everyKindOfCall(executor: ToolExecutor) {
  const settled = (pending: Promise<unknown>) =>
    pending.then(
      (value) => value,
      (reason: unknown) => reason,
    );
  const controller = new AbortController();
  const ok = await executor.executeToolCall(call("echo", { b: [1, 2], a: "x" }, "call-ok"), neverAborted());
  const failed = await executor.executeToolCall(call("fails", {}, "call-fails"), neverAborted());
  const unknown = await executor.executeToolCall(call("ecko", {}, "call-typo"), neverAborted());
  const invalid = await executor.executeToolCall(call("add", { left: "x" }, "call-invalid"), neverAborted());
  const malformed = await settled(executor.executeToolCall({ type: "toolCall", id: "", name: "echo", arguments: {} }, neverAborted()));
  const fatal = await settled(executor.executeToolCall(call("fatal", {}, "call-fatal"), neverAborted()));
  const hostileOutput = await executor.executeToolCall(call("hostileOutput", {}, "call-hostile"), neverAborted());
  const proxyOutput = await executor.executeToolCall(call("proxyOutput", {}, "call-proxy"), neverAborted());
  const hugeOutput = await executor.executeToolCall(call("hugeOutput", {}, "call-huge"), neverAborted());
  const waiting = settled(executor.executeToolCall(call("waitForAbort", {}, "call-aborted"), controller.signal));
  controller.abort("stop");
  const aborted = await waiting;
  return { ok, failed, unknown, invalid, malformed, fatal, hostileOutput, proxyOutput, hugeOutput, aborted };
}

/** What every kind of call must give, patched built-ins or not. */
function expectEveryKindOfCall(outcome: Awaited<ReturnType<typeof everyKindOfCall>>): void {
  expect(outcome.ok).toEqual({
    role: "toolResult",
    id: "tool-result-call-ok",
    toolCallId: "call-ok",
    toolName: "echo",
    content: '{"a":"x","b":[1,2]}',
    isError: false,
  });
  expectLinkedResult(outcome.ok, "call-ok", "echo");
  expect(outcome.failed).toMatchObject({ toolCallId: "call-fails", isError: true });
  expect(outcome.failed.content).toContain("RangeError: disk full");
  expect(outcome.unknown.content).toContain("TOOL_NOT_FOUND");
  expect(outcome.invalid.content).toContain("TOOL_ARGUMENTS_INVALID");
  expect(isToolContractError(outcome.malformed)).toBe(true);
  expect((outcome.malformed as { code: string }).code).toBe("INVALID_TOOL_CALL");
  expect(isNonRecoverableToolError(outcome.fatal)).toBe(true);
  expect((outcome.fatal as Error).message).toBe("ledger out of balance");
  expect(outcome.hostileOutput.content).toBe('{"map":[["k",[1]]],"ok":1}');
  expectLinkedResult(outcome.hostileOutput, "call-hostile", "hostileOutput");
  expect(errorOf(outcome.proxyOutput)).toEqual({ code: "TOOL_OUTPUT_SERIALIZATION_FAILED", message: "output contains a Proxy at $.inner" });
  expect(outcome.hugeOutput.content.endsWith("\n[Tool output truncated]")).toBe(true);
  expectLinkedResult(outcome.hugeOutput, "call-huge", "hugeOutput");
  expect(outcome.aborted).toBe("stop");
}

describe.each(EXECUTORS)("primordials (rules 8, 9, 10 and 13): %s never consults patched built-ins on the main thread", (_label, make) => {
  let executor: ToolExecutor;
  beforeAll(async () => {
    executor = await make([fixture("contract-tools")]);
    await executor.executeToolCall(call("echo"), neverAborted()); // threads warm, modules loaded
  });
  afterAll(() => executor.close());

  test("the hostile copies are in place and do forge (the check below could fail)", async () => {
    const forged = await underHostileBuiltins(forgeProbe);
    expect(forged).toEqual({ content: FORGED });
    expect(patchCount).toBeGreaterThan(100);
  });

  test("single calls: success, error results, unknown tool, invalid and malformed calls, a fatal error, hostile output, and abort", async () => {
    const outcome = await underHostileBuiltins(() => everyKindOfCall(executor));
    expect(toolgateCalls).toEqual([]);
    expectEveryKindOfCall(outcome);
  });

  test("a batch: results in call order, each its own", async () => {
    const calls = Array.from({ length: 6 }, (_, n) => call("delayed", { n, ms: n % 3 }, `batch-${n}`));
    const results = await underHostileBuiltins(() => executor.executeBatch(calls, neverAborted(), { concurrency: 2 }));
    expect(toolgateCalls).toEqual([]);
    expect(results.map((result) => result.toolCallId)).toEqual(calls.map((each) => each.id));
    for (const [n, result] of results.entries()) expect(JSON.parse(result.content)).toEqual({ n, toolCallId: `batch-${n}` });
  });

  test("with the global AbortController replaced by a look-alike: a batch and a timed-out call as before", async () => {
    const genuine = globalThis.AbortController;
    const signal = neverAborted(); // made before the replacement: the caller's signal is genuine
    class LookAlikeAbortController {
      readonly signal = { aborted: false, reason: undefined, addEventListener() {}, removeEventListener() {} };
      abort(): void {}
    }
    (globalThis as { AbortController: unknown }).AbortController = LookAlikeAbortController;
    try {
      const calls = Array.from({ length: 3 }, (_, n) => call("delayed", { n, ms: 1 }, `replaced-${n}`));
      const results = await executor.executeBatch(calls, signal, { concurrency: 2 });
      expect(results.map((result) => JSON.parse(result.content))).toEqual(calls.map((each, n) => ({ n, toolCallId: each.id })));
      const timedOut = await executor.executeToolCall(call("waitForAbort", {}, "replaced-timeout"), signal, { timeoutMs: 20 });
      expectLinkedResult(timedOut, "replaced-timeout", "waitForAbort");
      expect(errorOf(timedOut).code).toBe("TOOL_EXECUTION_TIMEOUT");
    } finally {
      globalThis.AbortController = genuine;
    }
  });
});

describe.each(EXECUTORS)("primordials: %s with the timers and DOMException replaced by dead ones", (_label, make) => {
  let executor: ToolExecutor;
  beforeAll(async () => {
    executor = await make([fixture("contract-tools")]);
    await executor.executeToolCall(call("echo"), neverAborted()); // threads warm, modules loaded
  });
  afterAll(() => executor.close());

  test("a call still times out, an aborted call still rejects with its reason, and none of the dead globals is called", async () => {
    const globals = globalThis as unknown as Record<string, unknown>;
    // (Number and JSON get noting copies in the hostile set above instead: third-party code on this thread still needs them.)
    const names = ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "setImmediate", "clearImmediate", "DOMException"];
    const saved = names.map((name) => [name, globals[name]] as const);
    const used: string[] = [];
    const dead = (name: string) =>
      function deadGlobal() {
        used.push(name);
        return { ref() {}, unref() {}, refresh() {}, hasRef: () => false };
      };
    const signal = neverAborted(); // made before the replacement
    const controller = new AbortController();
    let timedOut: unknown;
    let aborted: unknown;
    for (const name of names) globals[name] = dead(name);
    try {
      timedOut = await executor.executeToolCall(call("waitForAbort", {}, "dead-timeout"), signal, { timeoutMs: 20 });
      const pending = executor.executeToolCall(call("waitForAbort", {}, "dead-abort"), controller.signal, { timeoutMs: 60_000 }).then(
        () => "resolved",
        (reason: unknown) => reason,
      );
      controller.abort("stop");
      aborted = await pending;
    } finally {
      for (const [name, value] of saved) globals[name] = value;
    }
    expect(used).toEqual([]);
    expectLinkedResult(timedOut as never, "dead-timeout", "waitForAbort");
    expect(errorOf(timedOut as never).code).toBe("TOOL_EXECUTION_TIMEOUT");
    expect(aborted).toBe("stop");
  });
});

describe("primordials: a tool module that replaces its thread's timers when it loads cannot switch off its own setup() timer", () => {
  test("setupTimeoutMs still ends a setup() that never settles (INVALID_TOOL_MODULE naming the limit)", async () => {
    const started = Date.now();
    const error = await WorkerToolExecutor.create({ modules: [fixture("setup-dead-timers")], setupTimeoutMs: 300, minThreads: 1 }).then(
      async (executor) => {
        await executor.close();
        throw new Error("create() resolved");
      },
      (reason: unknown) => reason as { code: string; message: string },
    );
    expect(error.code).toBe("INVALID_TOOL_MODULE");
    expect(error.message).toContain("did not finish within 300 ms");
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});

describe("primordials (rules 8, 9, 10 and 13): the worker pool's threads never consult their own patched built-ins", () => {
  let executor: ToolExecutor;
  beforeAll(async () => {
    executor = await workerPoolExecutor([fixture("contract-tools"), fixture("worker-patched")]);
  });
  afterAll(() => executor.close());

  /** What one pool thread's patches saw; several calls, so that both threads answer. */
  async function threadReports(): Promise<{ patched: number; toolgateCalls: string[] }[]> {
    const calls = Array.from({ length: 4 }, (_, n) => call("patchedThreadReport", {}, `report-${n}`));
    const results = await executor.executeBatch(calls, neverAborted(), { concurrency: 2 });
    return results.map((result) => JSON.parse(result.content) as { patched: number; toolgateCalls: string[] });
  }

  test("the threads' hostile copies are in place and do forge (the check below could fail)", async () => {
    const probe = await executor.executeToolCall(call("patchedThreadProbe", {}, "probe"), neverAborted());
    expect(JSON.parse(probe.content)).toEqual({ content: FORGED });
    for (const report of await threadReports()) expect(report.patched).toBeGreaterThan(100);
  });

  test("every kind of call and a batch through patched threads: correct, frozen, linked results, and no patched call from toolgate", async () => {
    expectEveryKindOfCall(await everyKindOfCall(executor));
    const calls = Array.from({ length: 6 }, (_, n) => call("delayed", { n, ms: n % 3 }, `batch-${n}`));
    const results = await executor.executeBatch(calls, neverAborted(), { concurrency: 2 });
    results.forEach((result, n) => {
      expectLinkedResult(result, `batch-${n}`, "delayed");
      expect(JSON.parse(result.content)).toEqual({ n, toolCallId: `batch-${n}` });
    });
    for (const report of await threadReports()) expect(report.toolgateCalls).toEqual([]);
  });

  test("a tool's signal is a genuine AbortSignal although the thread's global AbortController was replaced", async () => {
    const result = await executor.executeToolCall(call("patchedThreadSignal", {}, "signal"), neverAborted());
    expectLinkedResult(result, "signal", "patchedThreadSignal");
    expect(JSON.parse(result.content)).toEqual({ genuine: true, aborted: false, replaced: true });
  });
});
