// Progress: context.reportProgress → the caller's onProgress, throttled, bounded, checked,
// and never after the call settled or aborted. The in-process details (throttle, hostile
// reports, listener faults, nothing after an abort) are asserted on their own; what every
// executor shares (deliveries linked to their call, a burst coalesced, none after the call
// settled) runs for each executor of EXECUTORS, the worker pool among them; and a report a
// worker thread sends after the caller aborted (sent before the thread could read the abort)
// must not reach the caller either.
import { defineTool, executeToolCall, executeToolCalls, InProcessToolExecutor, type ToolProgress, ToolRegistry } from "toolgate";
import { WorkerToolExecutor } from "toolgate/worker";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { labelled, throwingConstructor } from "../fixtures/hostile-promise-tools.js";
import { EXECUTORS } from "../support/executors.js";
import { call, errorOf, fixture, neverAborted, settle } from "../support/helpers.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A tool that hands its reportProgress to the test and waits until released. */
function controllable() {
  let report: ((report: unknown) => void) | undefined;
  let release: (() => void) | undefined;
  const tool = defineTool({
    name: "manual",
    description: "Reports what the test says.",
    parameters: z.object({}),
    execute: (_args, context) =>
      new Promise<string>((resolve) => {
        report = context.reportProgress as (report: unknown) => void;
        release = () => resolve("done");
      }),
  });
  return {
    registry: new ToolRegistry([tool]),
    report: (value: unknown) => (report as (report: unknown) => void)(value),
    release: () => (release as () => void)(),
  };
}

describe("rule 7 — execution context: reportProgress in-process", () => {
  it("the caller receives frozen { toolCallId, toolName, progress, total, message } linked to the call", async () => {
    const seen: ToolProgress[] = [];
    const { registry, report, release } = controllable();
    const pending = executeToolCall(registry, call("manual", {}, "call-7"), neverAborted(), { onProgress: (p) => seen.push(p) });
    await sleep(5);
    report({ progress: 1, total: 4, message: "one of four" });
    expect(seen).toEqual([{ toolCallId: "call-7", toolName: "manual", progress: 1, total: 4, message: "one of four" }]);
    expect(Object.isFrozen(seen[0])).toBe(true);
    await sleep(80);
    report({ progress: 2 });
    expect(seen[1]).toEqual({ toolCallId: "call-7", toolName: "manual", progress: 2, total: undefined, message: undefined });
    release();
    expect((await pending).content).toBe("done");
  });

  it("a burst is coalesced: the first report at once, then only the latest, once per interval", async () => {
    const seen: number[] = [];
    const { registry, report, release } = controllable();
    const pending = executeToolCall(registry, call("manual"), neverAborted(), { onProgress: (p) => seen.push(p.progress) });
    await sleep(5);
    for (let step = 1; step <= 1000; step += 1) report({ progress: step });
    expect(seen).toEqual([1]);
    await sleep(150);
    expect(seen).toEqual([1, 1000]);
    release();
    await pending;
  });

  it("a million reports cost a handful of deliveries and bounded time", async () => {
    let deliveries = 0;
    const tool = defineTool({
      name: "flood",
      description: "Reports a million times.",
      parameters: z.object({}),
      execute: async (_args, { reportProgress }) => {
        for (let step = 0; step < 1_000_000; step += 1) reportProgress({ progress: step });
        await sleep(120);
        for (let step = 0; step < 1_000_000; step += 1) reportProgress({ progress: step });
        return "flooded";
      },
    });
    const started = performance.now();
    const result = await executeToolCall(new ToolRegistry([tool]), call("flood"), neverAborted(), { onProgress: () => (deliveries += 1) });
    expect(result.content).toBe("flooded");
    // leading + trailing of the first burst, then at most a leading one of the second
    expect(deliveries).toBeGreaterThanOrEqual(2);
    expect(deliveries).toBeLessThanOrEqual(4);
    expect(performance.now() - started).toBeLessThan(10_000);
  });

  it("nothing is delivered after the call settled: neither a waiting report nor a late one", async () => {
    const seen: number[] = [];
    let late: ((report: { progress: number }) => void) | undefined;
    const tool = defineTool({
      name: "late",
      description: "Keeps its reporter.",
      parameters: z.object({}),
      execute: (_args, { reportProgress }) => {
        late = reportProgress;
        reportProgress({ progress: 1 });
        reportProgress({ progress: 2 }); // waits for the interval: dropped when the call settles
        return "ok";
      },
    });
    await executeToolCall(new ToolRegistry([tool]), call("late"), neverAborted(), { onProgress: (p) => seen.push(p.progress) });
    late?.({ progress: 3 });
    await sleep(120);
    expect(seen).toEqual([1]);
  });

  it("nothing is delivered once the signal aborted", async () => {
    const seen: number[] = [];
    const controller = new AbortController();
    const { registry, report } = controllable();
    const pending = settle(executeToolCall(registry, call("manual"), controller.signal, { onProgress: (p) => seen.push(p.progress) }));
    await sleep(5);
    report({ progress: 1 });
    report({ progress: 2 });
    const reason = new Error("stop");
    controller.abort(reason);
    report({ progress: 3 });
    await sleep(120);
    expect(seen).toEqual([1]);
    expect(await pending).toEqual({ ok: false, reason });
  });

  it("hostile reports are read safely: getters never called, Proxies and bad values refused with a TypeError", async () => {
    let getterCalls = 0;
    const thrown: unknown[] = [];
    const seen: ToolProgress[] = [];
    const { registry, report, release } = controllable();
    const pending = executeToolCall(registry, call("manual"), neverAborted(), { onProgress: (p) => seen.push(p) });
    await sleep(5);
    const hostile: unknown[] = [
      {
        get progress() {
          getterCalls += 1;
          return 1;
        },
      },
      new Proxy({ progress: 1 }, {}),
      Object.create({ progress: 1 }),
      { progress: Number.NaN },
      { progress: "1" },
      { progress: 1, total: Number.POSITIVE_INFINITY },
      { progress: 1, message: 7 },
      null,
      1,
    ];
    for (const value of hostile) {
      try {
        report(value);
      } catch (error) {
        thrown.push(error);
      }
    }
    expect(thrown).toHaveLength(hostile.length);
    expect(thrown.every((error) => error instanceof TypeError)).toBe(true);
    expect(getterCalls).toBe(0);
    expect(seen).toEqual([]);
    report({ progress: 1, message: "m".repeat(10_000) });
    expect(seen[0]?.message).toBe("m".repeat(256));
    release();
    await pending;
  });

  it("a throwing onProgress does not fail the call", async () => {
    const tool = defineTool({
      name: "one",
      description: "Reports once.",
      parameters: z.object({}),
      execute: (_args, { reportProgress }) => {
        reportProgress({ progress: 1 });
        return "fine";
      },
    });
    const result = await executeToolCall(new ToolRegistry([tool]), call("one"), neverAborted(), {
      onProgress: () => {
        throw new Error("observer broke");
      },
    });
    expect(result).toMatchObject({ isError: false, content: "fine" });
  });

  it("without onProgress, reports are still checked (a bad one fails the tool), then dropped", async () => {
    const tool = defineTool({
      name: "bad",
      description: "Reports garbage.",
      parameters: z.object({}),
      execute: (_args, { reportProgress }) => {
        reportProgress({ progress: 1 });
        reportProgress({ progress: "half" } as never);
        return "unreachable";
      },
    });
    const result = await executeToolCall(new ToolRegistry([tool]), call("bad"), neverAborted());
    expect(errorOf(result)).toEqual({
      code: "TOOL_EXECUTION_FAILED",
      message: "TypeError: reportProgress: progress must be a finite number",
    });
  });

  it("an onProgress that is not a function is INVALID_ARGUMENT", async () => {
    const registry = new ToolRegistry();
    for (const options of [{ onProgress: 1 }, { onProgress: null }, null, new Proxy({}, {})]) {
      const outcome = await settle(executeToolCall(registry, call("x"), neverAborted(), options as never));
      expect(outcome.ok).toBe(false);
      expect((outcome as { reason: { code: string } }).reason.code).toBe("INVALID_ARGUMENT");
    }
  });

  it("batches: each report is linked to its own call (executeToolCalls and the executor's executeBatch)", async () => {
    const registry = new ToolRegistry((await import(fixture("progress-tools").href)).default);
    const calls = [call("count", { to: 3 }, "a"), call("count", { to: 5 }, "b")];
    const seen: [string, number, number | undefined][] = [];
    const onProgress = (p: ToolProgress) => seen.push([p.toolCallId, p.progress, p.total]);
    await executeToolCalls(registry, calls, neverAborted(), { onProgress });
    expect(seen).toEqual([
      ["a", 1, 3],
      ["b", 1, 5],
    ]);
    seen.length = 0;
    const executor = new InProcessToolExecutor(registry);
    await executor.executeBatch(calls, neverAborted(), { onProgress, concurrency: 1 });
    expect(seen).toEqual([
      ["a", 1, 3],
      ["b", 1, 5],
    ]);
    await executor.close();
  });
});

describe.each(EXECUTORS)("rule 7 — execution context: the onProgress option (%s)", (_label, makeExecutor) => {
  it("reports reach onProgress linked to their call, a burst coalesced to its latest, none after the call settled", async () => {
    const executor = await makeExecutor([fixture("progress-tools")]);
    try {
      const seen: unknown[] = [];
      const result = await executor.executeToolCall(call("count", { to: 1000, waitMs: 150 }, "p-seen"), neverAborted(), {
        onProgress: (report) => seen.push(report),
      });
      const atSettle = seen.length;
      await new Promise((resolve) => setTimeout(resolve, 120));
      expect(result.content).toBe('{"counted":1000}');
      expect(seen.length).toBe(atSettle); // nothing after the call settled
      expect(seen.length).toBeGreaterThanOrEqual(1);
      expect(seen.length).toBeLessThanOrEqual(5); // 1000 reports in one burst: bounded, not 1000
      expect(seen.at(-1)).toEqual({ toolCallId: "p-seen", toolName: "count", progress: 1000, total: 1000, message: "step 1000" });
      for (const report of seen) expect(report).toMatchObject({ toolCallId: "p-seen", toolName: "count", total: 1000 });
    } finally {
      await executor.close();
    }
  });

  it("a tool that reports progress completes normally, with onProgress given or not", async () => {
    const executor = await makeExecutor([fixture("progress-tools")]);
    try {
      const withListener = await executor.executeToolCall(call("count", { to: 1000, waitMs: 10 }, "p1"), neverAborted(), {
        onProgress: () => {},
      });
      const without = await executor.executeToolCall(call("count", { to: 10 }, "p2"), neverAborted());
      const batch = await executor.executeBatch([call("count", { to: 3 }, "p3")], neverAborted(), { onProgress: () => {} });
      expect([withListener.content, without.content, batch[0]?.content]).toEqual(['{"counted":1000}', '{"counted":10}', '{"counted":3}']);
    } finally {
      await executor.close();
    }
  });
});

describe.each(EXECUTORS)("issue 28, defect 3 — an async onProgress that fails is ignored (%s)", (_label, makeExecutor) => {
  it("a rejecting promise, a hostile promise or a thenable from onProgress: the call succeeds, nothing is unhandled or touched", async () => {
    const executor = await makeExecutor([fixture("progress-tools")]);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      let touched = 0;
      const touch = (what: string): never => {
        touched += 1;
        throw new Error(what);
      };
      const returns: ReadonlyArray<readonly [string, () => unknown]> = [
        ["a rejected promise (an async listener that throws)", () => Promise.reject(new Error("the progress bar is down"))],
        [
          "a rejected promise behind an own throwing `then` getter",
          () => {
            const rejected = Promise.reject(new Error("behind a then getter"));
            // biome-ignore lint/suspicious/noThenProperty: a `then` getter on the listener's promise is the input under test.
            return Object.defineProperty(rejected, "then", { get: () => touch("then getter") });
          },
        ],
        ["a promise whose constructor getter throws", () => throwingConstructor(undefined)],
        ["a promise of a subclass whose constructor needs a label", () => labelled(undefined)],
        // biome-ignore lint/suspicious/noThenProperty: a thenable returned by the listener is the input under test.
        ["a thenable whose then throws", () => ({ then: () => touch("then") })],
        // biome-ignore lint/suspicious/noThenProperty: as above, behind a getter.
        ["an object whose then getter throws", () => Object.defineProperty({}, "then", { get: () => touch("then getter") })],
      ];
      const deliveries = returns.map(() => 0);
      // The first report goes out at once, the burst's latest after the 50 ms throttle (usually two deliveries each).
      const results = await Promise.all(
        returns.map(([, make], index) =>
          executor.executeToolCall(call("count", { to: 3, waitMs: 300 }, `p-async-${index}`), neverAborted(), {
            onProgress: () => {
              deliveries[index] = (deliveries[index] ?? 0) + 1;
              return make();
            },
          }),
        ),
      );
      await sleep(20); // an unhandled rejection surfaces within a few turns
      expect(results.map((result) => result.content)).toEqual(returns.map(() => '{"counted":3}'));
      expect(deliveries.every((count) => count >= 1)).toBe(true);
      expect(unhandled).toEqual([]);
      expect(touched).toBe(0); // a thenable, or a `then` getter, returned by an observer is never touched
    } finally {
      process.off("unhandledRejection", onUnhandled);
      await executor.close();
    }
  });
});

describe("progress of a worker-thread call after its abort", () => {
  it("a report the thread sends after the caller aborted is not delivered", async () => {
    // A grace period longer than the spin: the thread is not terminated before it reports.
    const executor = await WorkerToolExecutor.create({ modules: [fixture("progress-tools")], maxThreads: 1, abortGraceMs: 10_000 });
    try {
      const controller = new AbortController();
      const seen: number[] = [];
      let reporting: () => void = () => {};
      const first = new Promise<void>((resolve) => {
        reporting = resolve;
      });
      const pending = settle(
        executor.executeToolCall(call("spin", { idleMs: 100, spinMs: 1000 }, "p-abort"), controller.signal, {
          onProgress: (report) => {
            seen.push(report.progress);
            reporting();
          },
        }),
      );
      await first; // the channel works: report 0 reached the caller
      await sleep(300); // the thread is spinning now
      const reason = new Error("stop");
      controller.abort(reason);
      const atAbort = [...seen];
      expect(await pending).toEqual({ ok: false, reason });
      // The spin ends, the thread sends report 1, and only then reads the abort.
      await sleep(1200);
      expect(atAbort).toEqual([0]);
      expect(seen).toEqual([0]);
    } finally {
      await executor.close();
    }
  });
});
