// The warm spare: once a thread is being replaced (a tool ran on after its abort, and may be
// killed), the pool keeps one idle thread beside the busy ones (loaded, or on its way), within
// its thread budget (one thread per board slot). Calls go to the thread that took the last
// one, so the spare stays idle; the slot accounting does not change: a spare never runs a
// call beyond maxThreads, and close() ends it with the rest.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { WorkerToolExecutor } from "toolgate/worker";
import { describe, expect, test } from "vitest";
import { call, fixture, neverAborted, scratchDir, settle, waitForFile } from "../support/helpers.js";

const WORKER_TOOLS = fixture("worker-tools");
const SPARE_TOOLS = fixture("spare-tools");
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

describe("rule W3 — timeout and termination: the warm spare", () => {
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

  test("a thread killed while a spare is wanted is replaced at once, so the next spinning call's abort finds a loaded thread", async () => {
    const boots = scratchDir();
    const marks = scratchDir();
    process.env.TOOLGATE_TEST_BOOT_DIR = boots; // read by each thread's setup()
    const loaded = (): number[] => readdirSync(boots).map(Number);
    const killed: number[] = [];
    const executor = await WorkerToolExecutor.create({
      modules: [SPARE_TOOLS],
      minThreads: 1,
      maxThreads: 1,
      abortGraceMs: 100,
      hooks: { onThreadKilled: (event) => void killed.push(event.threadId as number) },
    });
    const spinAndAbort = async (label: string): Promise<void> => {
      const controller = new AbortController();
      const startedPath = join(marks, `${label}.started`);
      const spinning = executor.executeToolCall(call("spin", { startedPath }, label), controller.signal);
      expect(await waitForFile(startedPath)).toBe("started");
      controller.abort(label);
      await expect(spinning).rejects.toBe(label);
    };
    try {
      const first = await threadOf(executor);
      await spinAndAbort("spin-1");
      const serving = await threadOf(executor); // the spare started at the abort
      expect(serving).not.toBe(first);
      await until(() => killed.length === 1, "the first spinning thread is killed");
      expect(killed).toEqual([first]);
      // One thread fewer while a spare is wanted: its replacement starts now (not when the next
      // call comes), and loads while nothing waits for it.
      await until(() => loaded().filter((thread) => thread !== first && thread !== serving).length === 1, "a replacement has loaded");
      const warm = loaded().filter((thread) => thread !== first);
      // Usually on `serving`, the thread that took the last call; on the warm replacement when a
      // warm-up held `serving` for that moment. Either way a loaded thread.
      await spinAndAbort("spin-2");
      const next = await threadOf(executor);
      await until(() => killed.length === 2, "the second spinning thread is killed");
      const spun = killed[1] as number;
      expect(warm).toContain(spun);
      expect(next).not.toBe(spun);
      expect(warm).toContain(next); // loaded before the abort: no thread boot on the way
    } finally {
      await executor.close();
      delete process.env.TOOLGATE_TEST_BOOT_DIR;
    }
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
