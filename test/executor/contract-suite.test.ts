// One contract suite, run against every executor (test/support/executors.ts; docs/contract.md,
// rule W7 — one contract suite). The tools live in one module (test/fixtures/contract-tools.ts),
// so every executor runs the very same definitions; side effects are observed through files.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isNonRecoverableToolError, isToolContractError, Limits, NonRecoverableToolError, type ToolExecutor } from "toolgate";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CONTRACT_EXECUTORS } from "../support/executors.js";
import { call, codePoints, errorOf, fixture, neverAborted, scratchDir, settle, waitForFile } from "../support/helpers.js";

const CONTRACT_TOOLS = fixture("contract-tools");

describe.each(CONTRACT_EXECUTORS)("rule W7 — one contract suite: rules 4–13 (the contract), %s", (_label, make) => {
  let executor: ToolExecutor;
  let dir: string;
  beforeAll(async () => {
    executor = await make([CONTRACT_TOOLS]);
    dir = scratchDir();
  });
  afterAll(() => executor.close());

  const run = (name: string, args: Parameters<typeof call>[1] = {}, id?: string) =>
    executor.executeToolCall(call(name, args, id), neverAborted());

  test("a success is frozen and linked to its call", async () => {
    const result = await run("echo", { b: [1, 2], a: "x" }, "call-echo-1");
    expect(result).toEqual({
      role: "toolResult",
      id: "tool-result-call-echo-1",
      toolCallId: "call-echo-1",
      toolName: "echo",
      content: '{"a":"x","b":[1,2]}',
      isError: false,
    });
    expect(Object.isFrozen(result)).toBe(true);
  });

  test("an unknown tool is a linked TOOL_NOT_FOUND naming the registered tools", async () => {
    const result = await run("ecko", {}, "call-typo");
    expect(result).toMatchObject({ toolCallId: "call-typo", toolName: "ecko", isError: true });
    expect(errorOf(result).code).toBe("TOOL_NOT_FOUND");
    expect(errorOf(result).message).toContain("Available tools: echo, add, touch");
  });

  test("rejected arguments never reach execute: no side effect happens", async () => {
    const path = join(dir, "touched-invalid");
    const refused = await run("touch", { path, allow: false });
    expect(errorOf(refused)).toEqual({ code: "TOOL_ARGUMENTS_INVALID", message: "touch is not allowed" });
    expect(errorOf(await run("add", { left: "twenty", right: 22 }))).toEqual({
      code: "TOOL_ARGUMENTS_INVALID",
      message: "left and right must be numbers",
    });
    expect(existsSync(path)).toBe(false);
    // The same call, allowed, does have the effect: the check above could fail.
    const allowedPath = join(dir, "touched-valid");
    expect((await run("touch", { path: allowedPath, allow: true })).content).toBe("touched");
    expect(existsSync(allowedPath)).toBe(true);
  });

  test("a throwing or asynchronous validator gives TOOL_VALIDATION_FAILED", async () => {
    expect(errorOf(await run("validatorThrows"))).toEqual({ code: "TOOL_VALIDATION_FAILED", message: "TypeError: schema exploded" });
    const asyncResult = errorOf(await run("asyncValidator"));
    expect(asyncResult.code).toBe("TOOL_VALIDATION_FAILED");
    expect(asyncResult.message).toContain("Promise");
  });

  test("a malformed call rejects with INVALID_TOOL_CALL", async () => {
    const outcome = await settle(executor.executeToolCall({ type: "toolCall", id: "", name: "echo", arguments: {} }, neverAborted()));
    const error = (outcome as { reason: unknown }).reason;
    expect(isToolContractError(error)).toBe(true);
    expect((error as { code: string }).code).toBe("INVALID_TOOL_CALL");
  });

  test("thrown errors and rejections are recoverable TOOL_EXECUTION_FAILED results", async () => {
    expect(errorOf(await run("fails"))).toEqual({ code: "TOOL_EXECUTION_FAILED", message: "RangeError: disk full" });
    expect(errorOf(await run("rejects"))).toEqual({ code: "TOOL_EXECUTION_FAILED", message: "a plain string" });
    expect(errorOf(await run("lookAlike")).code).toBe("TOOL_EXECUTION_FAILED");
  });

  test("a NonRecoverableToolError rejects as a genuine one carrying its message", async () => {
    const outcome = await settle(run("fatal"));
    expect(outcome.ok).toBe(false);
    const error = (outcome as { reason: unknown }).reason;
    expect(error).toBeInstanceOf(NonRecoverableToolError);
    expect(isNonRecoverableToolError(error)).toBe(true);
    expect((error as Error).message).toBe("ledger out of balance");
  });

  test("output is serialized without calling getters, toJSON or traps, and capped", async () => {
    expect((await run("hostileOutput")).content).toBe('{"map":[["k",[1]]],"ok":1}');
    expect(errorOf(await run("proxyOutput"))).toEqual({
      code: "TOOL_OUTPUT_SERIALIZATION_FAILED",
      message: "output contains a Proxy at $.inner",
    });
    const huge = await run("hugeOutput");
    expect(codePoints(huge.content)).toBe(4096);
    expect(huge.content.endsWith(Limits.TRUNCATION_MARKER)).toBe(true);
    expect(huge.content.isWellFormed()).toBe(true);
  });

  test("execute gets a frozen context with its call id and a live signal", async () => {
    const result = await run("context", {}, "call-context");
    expect(JSON.parse(result.content)).toEqual({ toolCallId: "call-context", frozen: true, aborted: false, oneSignal: true });
  });

  test("a tool that first reads its signal after the call was aborted finds it aborted", async () => {
    const controller = new AbortController();
    const startedPath = join(dir, "late-started");
    const goPath = join(dir, "late-go");
    const markerPath = join(dir, "late-read");
    const pending = executor.executeToolCall(call("readsSignalLate", { startedPath, goPath, markerPath }), controller.signal);
    expect(await waitForFile(startedPath)).toBe("started");
    const reason = new DOMException("the user pressed stop", "AbortError");
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    // The queue relays the abort to its host over Redis after the caller's rejection: let it land.
    await new Promise((resolve) => setTimeout(resolve, 500));
    writeFileSync(goPath, "go");
    // A pool's idle thread runs a finished call's leftover work only when it takes its next
    // call (Piscina blocks an idle thread on Atomics.wait): keep the threads busy until then.
    for (let round = 0; round < 50 && !existsSync(markerPath); round += 1) {
      await Promise.all([run("delayed", { n: round, ms: 5 }), run("delayed", { n: round, ms: 5 })]);
    }
    expect(await waitForFile(markerPath)).toBe("true AbortError");
  });

  test("an aborted signal rejects with its reason before anything runs", async () => {
    const controller = new AbortController();
    const reason = new Error("stopped before start");
    controller.abort(reason);
    const path = join(dir, "never-touched");
    await expect(executor.executeToolCall(call("touch", { path, allow: true }), controller.signal)).rejects.toBe(reason);
    expect(existsSync(path)).toBe(false);
  });

  test("abort mid-tool rejects at once with the reason, and the tool's own signal aborts", async () => {
    const controller = new AbortController();
    const startedPath = join(dir, "wait-started");
    const markerPath = join(dir, "wait-aborted");
    const pending = executor.executeToolCall(call("waitForAbort", { startedPath, markerPath }), controller.signal);
    expect(await waitForFile(startedPath)).toBe("started");
    const reason = new DOMException("the user pressed stop", "AbortError");
    const abortedAt = performance.now();
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(performance.now() - abortedAt).toBeLessThan(1000); // generous: no waiting for the tool
    expect(await waitForFile(markerPath)).toBe("AbortError");
  });

  test("an abort event dispatched on a signal that has not aborted aborts nothing; the real abort still does", async () => {
    const controller = new AbortController();
    const startedPath = join(dir, "forged-started");
    const markerPath = join(dir, "forged-aborted");
    let settled = false;
    const pending = executor.executeToolCall(call("waitForRealAbort", { startedPath, markerPath }), controller.signal);
    void pending.then(
      () => (settled = true),
      () => (settled = true),
    );
    expect(await waitForFile(startedPath)).toBe("started");
    controller.signal.dispatchEvent(new Event("abort"));
    // What the listener did happened in the dispatch: a macrotask later, its settlement would show.
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    expect(existsSync(markerPath)).toBe(false);
    const reason = new DOMException("the user pressed stop", "AbortError");
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(await waitForFile(markerPath)).toBe("AbortError");
  });

  test("parallel calls never cross-link", async () => {
    const calls = Array.from({ length: 16 }, (_, n) => call("delayed", { n, ms: (n * 7) % 11 }, `call-par-${n}`));
    const results = await Promise.all(calls.map((each) => executor.executeToolCall(each, neverAborted())));
    results.forEach((result, n) => {
      expect(result.toolCallId).toBe(`call-par-${n}`);
      expect(JSON.parse(result.content)).toEqual({ n, toolCallId: `call-par-${n}` });
    });
  });

  describe("rule W6 — batches", () => {
    test("results come back in call order, each linked to its own call", async () => {
      const calls = [
        call("delayed", { n: 0, ms: 30 }, "b0"),
        call("missing", {}, "b1"),
        call("delayed", { n: 2, ms: 1 }, "b2"),
        call("add", { left: 1 }, "b3"),
        call("fails", {}, "b4"),
      ];
      const results = await executor.executeBatch(calls, neverAborted(), { concurrency: 2 });
      expect(results.map((result) => result.toolCallId)).toEqual(["b0", "b1", "b2", "b3", "b4"]);
      expect(results.map((result) => (result.isError ? errorOf(result).code : "ok"))).toEqual([
        "ok",
        "TOOL_NOT_FOUND",
        "ok",
        "TOOL_ARGUMENTS_INVALID",
        "TOOL_EXECUTION_FAILED",
      ]);
    });

    test("a malformed call rejects the batch before any tool runs", async () => {
      const path = join(dir, "batch-never-touched");
      const outcome = await settle(
        executor.executeBatch([call("touch", { path, allow: true }, "m0"), { type: "toolCall", id: "m1", name: "" }], neverAborted()),
      );
      expect((outcome as { reason: { code: string } }).reason.code).toBe("INVALID_TOOL_CALL");
      expect(existsSync(path)).toBe(false);
    });

    test("repeated call ids are a malformed batch", async () => {
      const outcome = await settle(executor.executeBatch([call("echo", {}, "same"), call("echo", {}, "same")], neverAborted()));
      expect((outcome as { reason: { code: string; message: string } }).reason.message).toContain("repeats the call id");
    });

    test("abort rejects the batch with the reason", async () => {
      const controller = new AbortController();
      const startedPath = join(dir, "batch-abort-started");
      const pending = executor.executeBatch(
        [call("delayed", { n: 0, ms: 1 }, "a0"), call("waitForAbort", { startedPath }, "a1")],
        controller.signal,
      );
      await waitForFile(startedPath);
      controller.abort("batch stopped");
      await expect(pending).rejects.toBe("batch stopped");
    });

    test("a NonRecoverableToolError rejects the batch and aborts its siblings", async () => {
      const startedPath = join(dir, "sibling-started");
      const markerPath = join(dir, "sibling-aborted");
      const outcome = await settle(
        executor.executeBatch(
          [call("waitForAbort", { startedPath, markerPath }, "f0"), call("fatalOnceExists", { path: startedPath }, "f1")],
          neverAborted(),
        ),
      );
      expect(outcome.ok).toBe(false);
      const reason = (outcome as { reason: unknown }).reason;
      expect(isNonRecoverableToolError(reason)).toBe(true);
      expect((reason as Error).message).toBe("fatal after the sibling started");
      // The sibling was running and saw its signal abort.
      expect(await waitForFile(markerPath)).toBeDefined();
    });
  });
});
