// What only the worker executor promises: module loading, termination of tools that ignore
// their signal, timeouts, per-call faults, draining, no leaks, a responsive main thread.
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { defineTool, Limits } from "toolgate";
import { WorkerToolExecutor } from "toolgate/worker";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { contractError } from "../support/assertions.js";
import { call, errorOf, fixture, neverAborted, scratchDir, waitForFile } from "../support/helpers.js";

const CONTRACT_TOOLS = fixture("contract-tools");
const WORKER_TOOLS = fixture("worker-tools");

describe("rule W1 — tool modules: create() checks every module and option on the main thread", () => {
  test.each<[string, string, string]>([
    ["a missing module", "/nonexistent/tools.js", "INVALID_TOOL_MODULE"],
    ["a module that throws while loading", fixture("throws-at-load").href, "INVALID_TOOL_MODULE"],
    ["a default export that is not an array", fixture("not-an-array").href, "INVALID_TOOL_MODULE"],
  ])("%s is refused", async (_label, module, code) => {
    const error = await contractError(WorkerToolExecutor.create({ modules: [module] }));
    expect(error.code).toBe(code);
    expect(error.message).toContain(module.replace(/^\//, ""));
  });

  test("a name defined by two modules is a DUPLICATE_TOOL_NAME", async () => {
    const error = await contractError(WorkerToolExecutor.create({ modules: [CONTRACT_TOOLS, fixture("duplicate-echo")] }));
    expect(error.code).toBe("DUPLICATE_TOOL_NAME");
    expect(error.message).toContain("duplicate-echo.js");
  });

  test.each<[string, Record<string, unknown>, string]>([
    ["no modules", { modules: [] }, "options.modules"],
    [
      "maxThreads 0",
      { modules: [CONTRACT_TOOLS], maxThreads: 0 },
      "options.maxThreads must be an integer from 1 to 256 (got the number 0)",
    ],
    ["minThreads above maxThreads", { modules: [CONTRACT_TOOLS], minThreads: 3, maxThreads: 2 }, "must not exceed"],
    ["a negative grace period", { modules: [CONTRACT_TOOLS], abortGraceMs: -1 }, "options.abortGraceMs"],
    [
      "a zero timeout",
      { modules: [CONTRACT_TOOLS], timeoutMs: 0 },
      "options.timeoutMs must be an integer from 1 to 2147483647 (got the number 0)",
    ],
    ["fractional threads", { modules: [CONTRACT_TOOLS], maxThreads: 1.5 }, "options.maxThreads"],
  ])("%s is an INVALID_ARGUMENT with a precise message", async (_label, options, message) => {
    const error = await contractError(WorkerToolExecutor.create(options as never));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.message).toContain(message);
  });

  test("a path and a file URL string load the same way as a URL", async () => {
    const executor = await WorkerToolExecutor.create({ modules: [WORKER_TOOLS.pathname, CONTRACT_TOOLS.href] });
    try {
      expect(executor.registry.has("spin")).toBe(true);
      expect(executor.registry.has("echo")).toBe(true);
    } finally {
      await executor.close();
    }
  });
});

describe("rule W1 — tool modules, rule W3 — timeout and termination, rule W5 — faults are results: a running pool", () => {
  let executor: WorkerToolExecutor;
  beforeAll(async () => {
    executor = await WorkerToolExecutor.create({
      modules: [CONTRACT_TOOLS, WORKER_TOOLS],
      minThreads: 1,
      maxThreads: 1,
      abortGraceMs: 100,
      timeoutMs: 2000,
      resourceLimits: { maxOldGenerationSizeMb: 48, maxYoungGenerationSizeMb: 8 },
    });
  });
  afterAll(() => executor.close());

  const run = (name: string, args: Parameters<typeof call>[1] = {}, signal = neverAborted()) =>
    executor.executeToolCall(call(name, args), signal);
  const threadId = async () => Number((await run("threadId")).content);

  test("the registry is a copy: registering into it adds nothing to the pool", async () => {
    const copy = executor.registry;
    copy.register(defineTool({ name: "sneaky", description: "d", validate: () => ({ ok: true, value: null }), execute: () => 1 }));
    expect(executor.registry.has("sneaky")).toBe(false);
    expect(errorOf(await run("sneaky")).code).toBe("TOOL_NOT_FOUND");
  });

  test("a spinning tool that ignores abort: the call rejects at once, the thread is replaced, the pool serves on", async () => {
    const before = await threadId();
    const controller = new AbortController();
    const pending = run("spin", { ms: 60_000 }, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const abortedAt = performance.now();
    controller.abort("stop spinning");
    await expect(pending).rejects.toBe("stop spinning");
    expect(performance.now() - abortedAt).toBeLessThan(500); // generous: the main thread does not wait
    const after = await threadId(); // waits for the grace-period kill and a fresh thread
    expect(after).not.toBe(before);
    expect((await run("echo", { still: "serving" })).content).toBe('{"still":"serving"}');
  });

  test("a timeout is a linked, frozen TOOL_EXECUTION_TIMEOUT result, and a spinning tool is terminated", async () => {
    const killed: string[] = [];
    const short = await WorkerToolExecutor.create({
      modules: [WORKER_TOOLS, CONTRACT_TOOLS],
      maxThreads: 1,
      timeoutMs: 1000,
      abortGraceMs: 50,
      hooks: { onThreadKilled: (event) => void killed.push(`${event.toolCallId} on ${event.threadId}`) },
    });
    try {
      const first = Number((await short.executeToolCall(call("threadId"), neverAborted())).content);
      const result = await short.executeToolCall(call("spin", { ms: 60_000 }, "call-slow"), neverAborted());
      expect(result).toMatchObject({ id: "tool-result-call-slow", toolCallId: "call-slow", toolName: "spin", isError: true });
      expect(Object.isFrozen(result)).toBe(true);
      expect(errorOf(result)).toEqual({ code: "TOOL_EXECUTION_TIMEOUT", message: "the tool did not finish within 1000 ms" });
      const second = Number((await short.executeToolCall(call("threadId"), neverAborted())).content);
      expect(second).not.toBe(first);
      expect(killed).toEqual([`call-slow on ${first}`]);
      // A cooperative tool sees a TimeoutError on its own signal and keeps its thread. (Which
      // thread the next call takes is not asserted: a warm spare may take it while the
      // cooperative call's thread reports back.)
      const dir = scratchDir();
      const markerPath = join(dir, "timed-out");
      const cooperative = await short.executeToolCall(call("waitForAbort", { markerPath }, "call-cooperative"), neverAborted());
      expect(errorOf(cooperative).code).toBe("TOOL_EXECUTION_TIMEOUT");
      expect(await waitForFile(markerPath)).toBe("TimeoutError");
      await new Promise((resolve) => setTimeout(resolve, 250)); // well past the 50 ms grace period
      expect((await short.executeToolCall(call("echo", { after: "timeout" }), neverAborted())).content).toBe('{"after":"timeout"}');
      expect(killed).toEqual([`call-slow on ${first}`]);
    } finally {
      await short.close();
    }
  });

  test("process.exit() inside a tool is that call's recoverable error", async () => {
    const result = await run("exit");
    expect(errorOf(result)).toEqual({
      code: "TOOL_EXECUTION_FAILED",
      message: "the worker thread running the tool failed: worker exited with code: 3",
    });
    expect((await run("echo", { after: "exit" })).content).toBe('{"after":"exit"}');
  });

  test("running out of memory under resourceLimits is that call's recoverable error", async () => {
    const result = await run("oom");
    expect(errorOf(result).code).toBe("TOOL_EXECUTION_FAILED");
    expect(errorOf(result).message).toMatch(/memory/i);
    expect((await run("echo", { after: "oom" })).content).toBe('{"after":"oom"}');
  });

  test("validated arguments that cannot be structured-cloned give a clear recoverable error", async () => {
    const result = await run("uncloneable");
    expect(errorOf(result).code).toBe("TOOL_VALIDATION_FAILED");
    expect(errorOf(result).message).toContain("cannot be sent to a worker thread");
    expect(errorOf(result).message).toContain("DataCloneError");
  });

  test("only the bounded content string comes back", async () => {
    const result = await run("hugeOutput");
    expect([...result.content].length).toBe(Limits.MAX_CONTENT_CODE_POINTS);
  });
});

describe("rule W2 — abort relay, rule W3 — timeout and termination, rule W5 — faults are results: lifecycle", () => {
  test("close() drains accepted calls, then refuses new ones", async () => {
    const executor = await WorkerToolExecutor.create({ modules: [CONTRACT_TOOLS], maxThreads: 1 });
    const inFlight = executor.executeToolCall(call("delayed", { n: 1, ms: 150 }, "in-flight"), neverAborted());
    const queued = executor.executeToolCall(call("delayed", { n: 2, ms: 1 }, "queued"), neverAborted());
    const closing = executor.close();
    expect(executor.close()).toBe(closing);
    await expect(inFlight).resolves.toMatchObject({ toolCallId: "in-flight", isError: false });
    await expect(queued).resolves.toMatchObject({ toolCallId: "queued", isError: false });
    await closing;
    const error = await contractError(executor.executeToolCall(call("echo"), neverAborted()));
    expect(error.code).toBe("EXECUTOR_CLOSED");
    // A batch is refused the same way: as a rejection, never a synchronous throw.
    const batch = executor.executeBatch([call("echo")], neverAborted());
    expect((await contractError(batch)).code).toBe("EXECUTOR_CLOSED");
  });

  test("each thread loads its entry through a CommonJS file, never require() of an ES module (a thread terminated mid-load could abort the process)", async () => {
    // Node >= 20.19 require()s an ES module synchronously, and a thread terminated while that
    // graph links is a fatal error for the whole process. Piscina require()s its entry first.
    const executor = await WorkerToolExecutor.create({ modules: [WORKER_TOOLS], minThreads: 1, maxThreads: 1 });
    try {
      const result = await executor.executeToolCall(call("requiredWorkerFiles"), neverAborted());
      expect(result.isError).toBe(false);
      expect(JSON.parse(result.content)).toEqual(["piscina-entry.cjs"]);
    } finally {
      await executor.close();
    }
  });

  test("a call aborted while queued never reaches a worker", async () => {
    const executor = await WorkerToolExecutor.create({ modules: [CONTRACT_TOOLS], maxThreads: 1 });
    try {
      const dir = scratchDir();
      const blocker = executor.executeToolCall(call("delayed", { n: 0, ms: 200 }), neverAborted());
      const controller = new AbortController();
      const path = join(dir, "queued-touch");
      const queued = executor.executeToolCall(call("touch", { path, allow: true }), controller.signal);
      controller.abort("changed my mind");
      await expect(queued).rejects.toBe("changed my mind");
      await blocker;
      await executor.executeToolCall(call("echo"), neverAborted()); // the queue has moved past it
      expect(await waitForFile(path, 100)).toBeUndefined();
    } finally {
      await executor.close();
    }
  });

  test("the next call does not wait for the grace period of a spinning tool: a spare thread is warming already", async () => {
    const graceMs = 4000;
    const executor = await WorkerToolExecutor.create({
      modules: [WORKER_TOOLS, CONTRACT_TOOLS],
      minThreads: 1,
      maxThreads: 1,
      abortGraceMs: graceMs,
    });
    try {
      const spinner = Number((await executor.executeToolCall(call("threadId"), neverAborted())).content);
      const controller = new AbortController();
      const spinning = executor.executeToolCall(call("spin", { ms: 60_000 }), controller.signal);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const abortedAt = performance.now();
      controller.abort("stop");
      await expect(spinning).rejects.toBe("stop");
      // A spare thread starts at once: before the next call is made, long before the grace period ends.
      while (executor.threadCount < 2 && performance.now() - abortedAt < graceMs / 2)
        await new Promise((resolve) => setTimeout(resolve, 5));
      expect(executor.threadCount).toBe(2);
      const next = Number((await executor.executeToolCall(call("threadId"), neverAborted())).content);
      expect(performance.now() - abortedAt).toBeLessThan(graceMs / 2); // generous: a thread boot, not the grace period
      expect(next).not.toBe(spinner);
    } finally {
      await executor.close(); // waits for the grace-period kill of the spinning thread
    }
  });

  const runScript = (source: string) => {
    const dir = scratchDir();
    const script = join(dir, "script.mjs");
    writeFileSync(script, source);
    return new Promise<{ code: number | null; stdout: string; ms: number }>((resolve) => {
      const started = performance.now();
      execFile(process.execPath, [script], { timeout: 20_000 }, (error, stdout) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, ms: performance.now() - started });
      });
    });
  };
  const index = new URL("../../dist/src/worker/index.js", import.meta.url).href;

  test.each([
    ["after close()", "await executor.close();"],
    ["with no close(), once idle", ""],
  ])("the process exits by itself %s", async (_label, ending) => {
    const { code, stdout, ms } = await runScript(`
      import { WorkerToolExecutor } from ${JSON.stringify(index)};
      const executor = await WorkerToolExecutor.create({ modules: [${JSON.stringify(CONTRACT_TOOLS.href)}], timeoutMs: 60000 });
      const controller = new AbortController();
      const aborted = executor.executeToolCall({ type: "toolCall", id: "a", name: "waitForAbort", arguments: {} }, controller.signal);
      setTimeout(() => controller.abort("bye"), 20);
      await aborted.catch(() => {});
      const result = await executor.executeToolCall({ type: "toolCall", id: "c", name: "echo", arguments: { done: true } }, new AbortController().signal);
      console.log(result.content);
      ${ending}
    `);
    expect(stdout.trim()).toBe('{"done":true}');
    expect(code).toBe(0);
    expect(ms).toBeLessThan(15_000); // generous: a leaked handle would hit the 20 s kill
  });

  test("10,000 sequential calls keep heap and handles flat", { timeout: 60_000 }, async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const executor = await WorkerToolExecutor.create({ modules: [CONTRACT_TOOLS], maxThreads: 1 });
    try {
      const signal = neverAborted();
      const batch = async (from: number, count: number) => {
        for (let n = from; n < from + count; n += 1) await executor.executeToolCall(call("echo", { n }, `call-${n}`), signal);
      };
      await batch(0, 1000);
      gc();
      const heapBefore = process.memoryUsage().heapUsed;
      const handlesBefore = process.getActiveResourcesInfo().length;
      await batch(1000, 10_000);
      gc();
      const heapGrowth = process.memoryUsage().heapUsed - heapBefore;
      expect(process.getActiveResourcesInfo().length).toBeLessThanOrEqual(handlesBefore);
      expect(heapGrowth).toBeLessThan(8 * 1024 * 1024); // generous: a per-call leak of ~1 KB would show
    } finally {
      await executor.close();
    }
  });

  test("the main thread stays responsive while CPU-bound tools run in the pool", async () => {
    const executor = await WorkerToolExecutor.create({ modules: [WORKER_TOOLS], maxThreads: 2, minThreads: 2 });
    try {
      const histogram = monitorEventLoopDelay({ resolution: 5 });
      histogram.enable();
      // Each call computes for about 200 ms: in-process, every one of them
      // would block the event loop for that long (see bench/ for the side-by-side numbers).
      const calls = Array.from({ length: 4 }, (_, n) => call("primes", { limit: 1_300_000 }, `cpu-${n}`));
      const results = await executor.executeBatch(calls, neverAborted());
      histogram.disable();
      expect(results.every((result) => !result.isError && JSON.parse(result.content).primes === 100_021)).toBe(true);
      // Generous: well above scheduler noise on a loaded 2-core machine, well below one call.
      expect(histogram.percentile(99) / 1e6).toBeLessThan(100);
    } finally {
      await executor.close();
    }
  });
});
