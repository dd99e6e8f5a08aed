// Observer hooks at their worst, against every executor (test/support/executors.ts, the queue executor too): blocking
// (a never-settling promise, a synchronous busy-wait), returning garbage (a thenable whose
// `then` throws, a Proxy, an object with a throwing getter), a throwing error reporter and a
// throwing onProgress; on the worker pool also a throwing onThreadKilled. None may change an
// outcome, delay a call beyond the observer's own synchronous time, or leave an unhandled
// rejection (every test here checks that with a process 'unhandledRejection' listener).
import type { CallEndEvent, HookName, ToolExecutor, ToolExecutorHooks } from "toolgate";
import { WorkerToolExecutor } from "toolgate/worker";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { CONTRACT_EXECUTORS as EXECUTORS } from "../support/executors.js";
import { call, errorOf, fixture, neverAborted } from "../support/helpers.js";

const OPERATOR_TOOLS = fixture("operator-tools");
const PROGRESS_TOOLS = fixture("progress-tools");
const WORKER_OPERATOR = fixture("worker-operator");

let unhandled: unknown[];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
const open: ToolExecutor[] = [];
beforeEach(() => {
  unhandled = [];
  process.on("unhandledRejection", onUnhandled);
});
afterEach(async () => {
  await new Promise((resolve) => setTimeout(resolve, 20)); // late rejections surface within a few turns
  process.off("unhandledRejection", onUnhandled);
  for (const executor of open.splice(0)) await executor.close();
  expect(unhandled).toEqual([]);
});

function busyWait(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spinning on the calling thread, as a slow synchronous exporter would
  }
}

describe.each(EXECUTORS)("observers that block or return garbage, %s", (_label, make) => {
  async function executorWith(hooks: ToolExecutorHooks): Promise<ToolExecutor> {
    const executor = await make([OPERATOR_TOOLS, PROGRESS_TOOLS], { hooks });
    open.push(executor);
    return executor;
  }

  test("observers returning never-settling promises do not delay the call, nor change its outcome", async () => {
    const ends: string[] = [];
    const executor = await executorWith({
      onCallStart: () => new Promise(() => {}),
      onCallEnd: (event) => {
        ends.push(event.outcome);
        return new Promise(() => {});
      },
    });
    const started = performance.now();
    const result = await executor.executeToolCall(call("wait", { ms: 10 }), neverAborted());
    expect(performance.now() - started).toBeLessThan(1000);
    expect(result).toMatchObject({ content: "waited", isError: false });
    expect(ends).toEqual(["success"]);
  });

  test("a 50 ms synchronous busy-wait in onCallStart and onCallEnd delays the call by that time only", async () => {
    const ends: CallEndEvent[] = [];
    const executor = await executorWith({
      onCallStart: () => busyWait(50),
      onCallEnd: (event) => {
        busyWait(50);
        ends.push(event);
      },
    });
    const started = performance.now();
    const result = await executor.executeToolCall(call("wait", { ms: 10 }, "call-spun"), neverAborted());
    const elapsed = performance.now() - started;
    expect(result).toMatchObject({ toolCallId: "call-spun", content: "waited", isError: false });
    // Both run on the calling thread before the result is handed out: at least 100 ms, and not much more.
    expect(elapsed).toBeGreaterThanOrEqual(99);
    expect(elapsed).toBeLessThan(2000);
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ toolCallId: "call-spun", outcome: "success" });
    // The start observer's time is part of the call's duration, not of the tool's run.
    expect(ends[0]?.durationMs).toBeGreaterThanOrEqual(ends[0]?.runMs ?? 0);
  });

  test("garbage returned by observers (a thenable whose then throws, a Proxy, a throwing getter) is never touched", async () => {
    let touched = 0;
    const hookErrors: HookName[] = [];
    const hostileProxy = new Proxy(
      {},
      {
        get: () => {
          touched += 1;
          throw new Error("proxy get");
        },
        getPrototypeOf: () => {
          touched += 1;
          throw new Error("proxy getPrototypeOf");
        },
        getOwnPropertyDescriptor: () => {
          touched += 1;
          throw new Error("proxy getOwnPropertyDescriptor");
        },
        has: () => {
          touched += 1;
          throw new Error("proxy has");
        },
      },
    );
    const throwingGetter = {
      // biome-ignore lint/suspicious/noThenProperty: a getter `then` on an observer's return value is the input under test.
      get then() {
        touched += 1;
        throw new Error("getter");
      },
    };
    const executor = await executorWith({
      onCallStart: () =>
        ({
          // biome-ignore lint/suspicious/noThenProperty: a thenable returned by an observer is the input under test.
          then() {
            touched += 1;
            throw new Error("then");
          },
        }) as never,
      onCallEnd: (event) => (event.toolCallId === "call-proxy" ? hostileProxy : throwingGetter) as never,
      onHookError: (_error, hook) => void hookErrors.push(hook),
    });
    const proxied = await executor.executeToolCall(call("wait", { ms: 1 }, "call-proxy"), neverAborted());
    const gotten = await executor.executeToolCall(call("image", {}, "call-getter"), neverAborted());
    expect(proxied).toMatchObject({ toolCallId: "call-proxy", content: "waited", isError: false });
    expect(gotten).toMatchObject({ toolCallId: "call-getter", content: "", isError: false });
    expect(gotten.attachments).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(touched).toBe(0);
    expect(hookErrors).toEqual([]); // nothing failed that toolgate looked at
  });

  test("a throwing onHookError, after a throwing and a rejecting observer, changes nothing", async () => {
    const reported: HookName[] = [];
    const executor = await executorWith({
      onCallStart() {
        throw new Error("start exporter down");
      },
      onCallEnd: () => Promise.reject(new Error("end exporter down")),
      onHookError(_error, hook) {
        reported.push(hook);
        throw new Error("and the reporter is down too");
      },
    });
    const results = await Promise.all([1, 2, 3].map((n) => executor.executeToolCall(call("wait", { ms: n }, `call-${n}`), neverAborted())));
    expect(results.map((result) => [result.toolCallId, result.content])).toEqual([
      ["call-1", "waited"],
      ["call-2", "waited"],
      ["call-3", "waited"],
    ]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(reported.filter((hook) => hook === "onCallStart")).toHaveLength(3);
    expect(reported.filter((hook) => hook === "onCallEnd")).toHaveLength(3);
  });

  test("a throwing onProgress neither fails the call nor stops later reports", async () => {
    const executor = await executorWith({ onCallEnd: () => {} });
    let deliveries = 0;
    // The first report goes out at once, the burst's latest after the 50 ms throttle: two deliveries.
    const result = await executor.executeToolCall(call("count", { to: 3, waitMs: 300 }), neverAborted(), {
      onProgress: () => {
        deliveries += 1;
        throw new Error("the progress bar broke");
      },
    });
    expect(result).toMatchObject({ content: '{"counted":3}', isError: false });
    expect(deliveries).toBe(2);
  });
});

describe("hostile thread-kill observers, worker pool", () => {
  test("a throwing onThreadKilled and a throwing onHookError: the kill is reported, and the pool serves on", async () => {
    const killed: string[] = [];
    const reported: HookName[] = [];
    const executor = await WorkerToolExecutor.create({
      modules: [WORKER_OPERATOR, OPERATOR_TOOLS],
      maxThreads: 1,
      abortGraceMs: 100,
      hooks: {
        onThreadKilled(event) {
          killed.push(event.toolCallId);
          throw new Error("kill exporter down");
        },
        onHookError(_error, hook) {
          reported.push(hook);
          throw new Error("and the reporter is down too");
        },
      },
    });
    open.push(executor);
    const result = await executor.executeToolCall(call("spin", {}, "call-spin"), neverAborted(), { timeoutMs: 100 });
    expect(errorOf(result)).toEqual({ code: "TOOL_EXECUTION_TIMEOUT", message: "the tool did not finish within 100 ms" });
    const deadline = Date.now() + 5000;
    while (killed.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(killed).toEqual(["call-spin"]);
    expect(reported).toEqual(["onThreadKilled"]);
    expect((await executor.executeToolCall(call("wait", { ms: 1 }), neverAborted())).content).toBe("waited");
  });

  test("an onThreadKilled that rejects is reported like a throw; nothing is left unhandled", async () => {
    const reported: HookName[] = [];
    const executor = await WorkerToolExecutor.create({
      modules: [WORKER_OPERATOR, OPERATOR_TOOLS],
      maxThreads: 1,
      abortGraceMs: 100,
      hooks: {
        onThreadKilled: () => Promise.reject(new Error("async kill exporter down")),
        onHookError: (_error, hook) => {
          reported.push(hook);
          return Promise.reject(new Error("the reporter rejects too"));
        },
      },
    });
    open.push(executor);
    const result = await executor.executeToolCall(call("spin", {}, "call-spin-2"), neverAborted(), { timeoutMs: 100 });
    expect(errorOf(result).code).toBe("TOOL_EXECUTION_TIMEOUT");
    const deadline = Date.now() + 5000;
    while (reported.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(reported).toEqual(["onThreadKilled"]);
  });
});
