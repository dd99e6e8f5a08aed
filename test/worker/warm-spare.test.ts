// The warm spare: once a thread is being replaced (a tool ran on after its abort, and may be
// killed), the pool keeps one idle thread beside the busy ones (loaded, or on its way), within
// its thread budget (one thread per board slot). Calls go to the thread that took the last
// one, so the spare stays idle; the slot accounting does not change: a spare never runs a
// call beyond maxThreads, and close() ends it with the rest.
import { WorkerToolExecutor } from "toolgate/worker";
import { describe, expect, test } from "vitest";
import { call, fixture, neverAborted, settle } from "../support/helpers.js";

const WORKER_TOOLS = fixture("worker-tools");
/** A generous bound for anything that should happen within a few thread boots. */
const HANG_MS = 15_000;

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = performance.now() + HANG_MS;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`gave up waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const threadOf = async (executor: WorkerToolExecutor): Promise<number> =>
  Number((await executor.executeToolCall(call("threadId"), neverAborted())).content);

/** Starts a spinning call, aborts it once it runs, and waits for its rejection. */
async function abortSpinner(executor: WorkerToolExecutor): Promise<void> {
  const controller = new AbortController();
  const spinning = executor.executeToolCall(call("spin", { ms: 60_000 }), controller.signal);
  await new Promise((resolve) => setTimeout(resolve, 50));
  controller.abort("stop");
  await expect(spinning).rejects.toBe("stop");
}

describe("the warm spare", () => {
  test("while a spare stands by, calls one after another go to the thread that took the last one; close() ends every thread", async () => {
    const executor = await WorkerToolExecutor.create({ modules: [WORKER_TOOLS], minThreads: 1, maxThreads: 2, abortGraceMs: 300 });
    try {
      const first = await threadOf(executor);
      await abortSpinner(executor);
      const serving = await threadOf(executor); // a thread that was idle or started at the abort
      expect(serving).not.toBe(first);
      await until(() => executor.threadCount >= 2, "the spinner and the thread that served are both there");
      for (let index = 0; index < 4; index += 1) expect(await threadOf(executor)).toBe(serving);
    } finally {
      await executor.close();
    }
    expect(executor.threadCount).toBe(0);
  });

  test("with spares started, a third call still waits for one of two: maxThreads counts calls, not threads", async () => {
    const executor = await WorkerToolExecutor.create({ modules: [WORKER_TOOLS], minThreads: 1, maxThreads: 2, abortGraceMs: 200 });
    try {
      await threadOf(executor);
      await abortSpinner(executor);
      await threadOf(executor);
      const order: string[] = [];
      const run = (name: string, args: Record<string, number>, label: string) =>
        settle(executor.executeToolCall(call(name, args, label), neverAborted())).then((outcome) => {
          order.push(label);
          return outcome;
        });
      const outcomes = await Promise.all([
        run("spin", { ms: 400 }, "slow-1"),
        run("spin", { ms: 400 }, "slow-2"),
        run("threadId", {}, "quick"),
      ]);
      expect(outcomes.every((outcome) => outcome.ok)).toBe(true);
      expect(order[0]).not.toBe("quick");
    } finally {
      await executor.close();
    }
    expect(executor.threadCount).toBe(0);
  });
});
