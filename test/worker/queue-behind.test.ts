// A call that waits on a thread behind its running task (dispatch.ts, task-turns.ts,
// worker-pool.ts), with the interleavings forced: the thread starts the call behind only once
// the reply before it has left, and a reply posted before the thread ended is never lost, so a
// call is never answered with its neighbour's fault; a call behind one whose thread dies, or
// whose call is aborted, runs elsewhere; its timeout counts from when it runs; an aborted one
// never runs. docs/contract.md: rule W5 — faults are results, rule W3 — timeout and termination.
import { setTimeout as sleep } from "node:timers/promises";
import type { Worker } from "node:worker_threads";
import { WorkerToolExecutor } from "toolgate/worker";
import { afterEach, describe, expect, test } from "vitest";
import { DEFAULT_ATTACHMENT_BUDGETS, DEFAULT_OUTPUT_BUDGETS } from "../../dist/src/contract/budgets.js";
import { resolveOptions } from "../../dist/src/worker/options.js";
import type { WorkerTask } from "../../dist/src/worker/protocol.js";
import { TaskBoard } from "../../dist/src/worker/task-board.js";
import { WorkerPool } from "../../dist/src/worker/worker-pool.js";
import { call, fixture, neverAborted, settle } from "../support/helpers.js";

const MODULE = fixture("queue-behind-tools");
/** The compiled fixture, the instance the executor's validators run in: its cells reach the threads through the arguments. */
const { cells, EXITING, OPEN, RUNS, STARTED } = (await import(MODULE.href)) as typeof import("../fixtures/queue-behind-tools.js");

function resetCells(): void {
  for (let index = 0; index < cells.length; index += 1) Atomics.store(cells, index, 0);
}

/** Waits (the main thread's loop runs: a thread may still be getting ready) until the held tool has started; returns its thread's id. */
async function heldStarted(): Promise<number> {
  const { async, value } = Atomics.waitAsync(cells, STARTED, 0, 10_000);
  expect(async ? await value : value).not.toBe("timed-out");
  return Atomics.load(cells, STARTED);
}

function openGate(): void {
  Atomics.store(cells, OPEN, 1);
  Atomics.notify(cells, OPEN);
}

/** A stopped thread's loop idle time reads -1: blocks until then, at most `boundMs` (a hang guard). */
function blockUntilStopped(worker: Worker | undefined, boundMs: number): void {
  const start = performance.now();
  while (worker !== undefined && performance.now() - start < boundMs) if (worker.performance.eventLoopUtilization().idle < 0) return;
}

/** A one-thread pool of the fixture module, and the task of a tool in a slot of its board (assigned). */
function onePool(): { pool: WorkerPool; task: (slot: number, taskId: number, toolName: string) => WorkerTask } {
  const board = TaskBoard.create(3);
  const pool = new WorkerPool({
    options: resolveOptions({ modules: [MODULE.href], minThreads: 1, maxThreads: 1 }),
    modules: { urls: [MODULE.href], hasSetup: false },
    board,
    outputBudgets: DEFAULT_OUTPUT_BUDGETS,
    attachmentBudgets: DEFAULT_ATTACHMENT_BUDGETS,
  });
  const task = (slot: number, taskId: number, toolName: string): WorkerTask => {
    board.assign(slot, taskId);
    return [taskId, slot, 0, toolName, `call-${taskId}`, { cells: cells.buffer }, false];
  };
  return { pool, task };
}

describe("a call behind a running task never takes its neighbour's reply down with it (a real pool, placement forced)", () => {
  for (const held of ["held", "heldAsync"] as const) {
    test(`${held}: the call behind starts once the reply before it has left, and that reply survives the thread's exit`, async () => {
      const { pool, task } = onePool();
      try {
        await pool.started;
        for (let round = 0; round < 10; round += 1) {
          resetCells();
          const first = pool.run(task(0, 2 * round + 1, held));
          const threadId = await heldStarted();
          const worker = pool.threads.find((thread) => thread.threadId === threadId);
          // The next task goes behind the running one, on its thread; it ends the thread as it starts.
          const behind = pool.runBehind(task(1, 2 * round + 2, "exitNow"), threadId);
          expect(pool.threadOf(1)).toBe(threadId);
          openGate();
          // The main thread stays blocked while the thread answers the first task, starts the one
          // behind, and exits: the reply and the exit are both on their way when its loop runs again.
          expect(Atomics.wait(cells, EXITING, 0, 10_000)).not.toBe("timed-out");
          blockUntilStopped(worker, 500);
          const [firstOutcome, behindOutcome] = await Promise.all([settle(first), settle(behind)]);
          expect(firstOutcome).toEqual({ ok: true, value: held === "held" ? "held call done" : "held async call done" });
          expect(behindOutcome.ok).toBe(false);
          expect(String((behindOutcome as { reason: unknown }).reason)).toContain("exited with code: 7");
          pool.settled(0);
          pool.settled(1);
        }
      } finally {
        openGate();
        await pool.destroy();
      }
    });
  }
});

describe("a thread that reads two waiting tasks at once still runs them one after the other", () => {
  test("the second starts only once the first's reply has left, though both were read before either ran", async () => {
    const { pool, task } = onePool();
    try {
      await pool.started;
      for (let round = 0; round < 10; round += 1) {
        resetCells();
        const held = pool.run(task(0, 3 * round + 1, "held"));
        const threadId = await heldStarted();
        // Both wait in the thread's port while it is blocked: it reads them in one go when it is free.
        const quick = pool.runBehind(task(1, 3 * round + 2, "counted"), threadId);
        const exits = pool.runBehind(task(2, 3 * round + 3, "exitNow"), threadId);
        openGate();
        expect(Atomics.wait(cells, EXITING, 0, 10_000)).not.toBe("timed-out");
        const [heldOutcome, quickOutcome, exitOutcome] = await Promise.all([settle(held), settle(quick), settle(exits)]);
        expect(heldOutcome).toEqual({ ok: true, value: "held call done" });
        expect(quickOutcome).toEqual({ ok: true, value: JSON.stringify({ threadId }) });
        expect(exitOutcome.ok).toBe(false);
        for (let slot = 0; slot < 3; slot += 1) pool.settled(slot);
      }
    } finally {
      openGate();
      await pool.destroy();
    }
  });
});

describe("a retiring thread ends once its last task is answered", () => {
  test("retired while it runs a task with another behind it: it ends when the one behind is answered, not at idleTimeout", async () => {
    const { pool, task } = onePool();
    try {
      await pool.started;
      resetCells();
      const held = pool.run(task(0, 1, "held"));
      const threadId = await heldStarted();
      const worker = pool.threads.find((thread) => thread.threadId === threadId) as Worker;
      const ended = new Promise<string>((resolve) => worker.once("exit", () => resolve("ended")));
      const behind = pool.runBehind(task(1, 2, "counted"), threadId);
      // A fault the thread did not cause: it takes no new task, and ends once it runs none.
      pool.retire(threadId);
      openGate();
      expect(await settle(held)).toEqual({ ok: true, value: "held call done" });
      pool.settled(0);
      expect(await settle(behind)).toEqual({ ok: true, value: JSON.stringify({ threadId }) });
      pool.settled(1);
      // Piscina's own idleTimeout (30 s) would end it much later.
      expect(await Promise.race([ended, sleep(10_000).then(() => "still there")])).toBe("ended");
    } finally {
      openGate();
      await pool.destroy();
    }
  });
});

describe("the dispatcher's calls behind a running task (WorkerToolExecutor, placement forced)", () => {
  const choose = WorkerPool.prototype.threadForBehind;
  /** The thread the next call waits behind (0: the pool's own choice). */
  let forced = 0;
  let placed = 0;
  WorkerPool.prototype.threadForBehind = function (this: WorkerPool): number {
    const threadId = forced === 0 ? choose.call(this) : forced;
    if (threadId !== 0) placed += 1;
    return threadId;
  };
  afterEach(() => {
    forced = 0;
    placed = 0;
    openGate();
  });

  test("a call behind one whose tool ends the thread runs on another thread and gets its own result", async () => {
    resetCells();
    const executor = await WorkerToolExecutor.create({ modules: [MODULE], minThreads: 1, maxThreads: 1 });
    try {
      const fault = executor.executeToolCall(call("heldThenExit", {}, "call-A"), neverAborted());
      forced = await heldStarted();
      const next = executor.executeToolCall(call("where", {}, "call-B"), neverAborted());
      expect(placed).toBe(1);
      openGate();
      const faulted = await fault;
      expect(faulted).toMatchObject({ toolCallId: "call-A", isError: true });
      expect(faulted.content).toContain("exited with code: 9");
      const result = await next;
      expect(result).toMatchObject({ toolCallId: "call-B", isError: false });
      const ran = JSON.parse(result.content) as { toolCallId: string; threadId: number };
      expect(ran.toolCallId).toBe("call-B");
      expect(ran.threadId).not.toBe(forced);
    } finally {
      await executor.close();
    }
  });

  test("the call behind an aborted one that ignores its signal runs on a spare at once, not after the grace kill", async () => {
    resetCells();
    const executor = await WorkerToolExecutor.create({ modules: [MODULE], minThreads: 1, maxThreads: 1, abortGraceMs: 60_000 });
    try {
      const controller = new AbortController();
      const held = executor.executeToolCall(call("held", {}, "call-A"), controller.signal);
      forced = await heldStarted();
      const next = executor.executeToolCall(call("where", {}, "call-B"), neverAborted());
      expect(placed).toBe(1);
      forced = 0;
      controller.abort("A is aborted");
      await expect(held).rejects.toBe("A is aborted");
      // B is taken back from behind A (A's thread is blocked until the gate opens) and runs elsewhere.
      const result = await next;
      expect(result).toMatchObject({ toolCallId: "call-B", isError: false });
      expect((JSON.parse(result.content) as { threadId: number }).threadId).not.toBe(forced);
    } finally {
      openGate();
      await executor.close();
    }
  });

  test("a call behind a running one is not timed out while it waits: its timeout counts from when it runs", async () => {
    resetCells();
    const executor = await WorkerToolExecutor.create({ modules: [MODULE], minThreads: 1, maxThreads: 1 });
    try {
      const held = executor.executeToolCall(call("held", {}, "call-A"), neverAborted());
      forced = await heldStarted();
      const next = executor.executeToolCall(call("where", {}, "call-B"), neverAborted(), { timeoutMs: 50 });
      expect(placed).toBe(1);
      await sleep(200); // four times B's timeout, all of it behind A
      openGate();
      expect(await held).toMatchObject({ toolCallId: "call-A", isError: false });
      const result = await next;
      expect(result).toMatchObject({ toolCallId: "call-B", isError: false });
      expect((JSON.parse(result.content) as { threadId: number }).threadId).toBe(forced);
    } finally {
      await executor.close();
    }
  });

  test("a call aborted while it waits behind another is rejected at once and never runs", async () => {
    resetCells();
    const executor = await WorkerToolExecutor.create({ modules: [MODULE], minThreads: 1, maxThreads: 1 });
    try {
      const held = executor.executeToolCall(call("held", {}, "call-A"), neverAborted());
      forced = await heldStarted();
      const controller = new AbortController();
      const next = executor.executeToolCall(call("counted", {}, "call-B"), controller.signal);
      expect(placed).toBe(1);
      controller.abort("B is aborted");
      await expect(next).rejects.toBe("B is aborted");
      openGate();
      expect(await held).toMatchObject({ toolCallId: "call-A", isError: false });
      // The thread has skipped B: a call after it runs (and counts) once.
      forced = 0;
      await executor.executeToolCall(call("counted", {}, "call-C"), neverAborted());
      expect(Atomics.load(cells, RUNS)).toBe(1);
    } finally {
      await executor.close();
    }
  });

  test("when another thread is free, a call waiting behind a task that has run a while moves there", async () => {
    resetCells();
    const executor = await WorkerToolExecutor.create({ modules: [MODULE], minThreads: 2, maxThreads: 2 });
    try {
      const held = executor.executeToolCall(call("held", {}, "call-A"), neverAborted());
      const heldThread = await heldStarted();
      await sleep(5); // A has run longer than a call may wait behind
      const other = executor.executeToolCall(call("where", {}, "call-C"), neverAborted());
      forced = heldThread;
      const behind = executor.executeToolCall(call("where", {}, "call-B"), neverAborted());
      expect(placed).toBe(1);
      forced = 0;
      // C ends on the other thread, which is then free: B moves there while A still holds its thread.
      const otherThread = (JSON.parse((await other).content) as { threadId: number }).threadId;
      const result = await behind;
      expect(result).toMatchObject({ toolCallId: "call-B", isError: false });
      expect((JSON.parse(result.content) as { threadId: number }).threadId).toBe(otherThread);
      expect(Atomics.load(cells, OPEN)).toBe(0); // A is still held
      openGate();
      expect(await held).toMatchObject({ toolCallId: "call-A", isError: false });
    } finally {
      await executor.close();
    }
  });
});
