// Worker threads that die while they boot (docs/worker.md, "Tool modules that fail only inside a
// worker"; docs/contract.md, rule W5 — faults are results): a tool module that calls
// process.exit() at its top level or in setup(), or whose setup() runs out of memory under
// resourceLimits. The calls waiting for such a thread fail (TOOL_EXECUTION_FAILED naming the
// module and the exit, never a timeout blamed on the tool), the pool waits longer after each
// such exit before it starts another thread (so no restart loop burns the cores), create()
// rejects with INVALID_TOOL_MODULE, a module that boots again is served again, and close()
// always settles.
import { join } from "node:path";
import type { ToolResultMessage } from "toolgate";
import { isToolContractError } from "toolgate";
import { WorkerToolExecutor, type WorkerToolExecutorOptions } from "toolgate/worker";
import { describe, expect, test } from "vitest";
import { bootFailuresLeft, setBootFailures } from "../fixtures/support/boot-gate.js";
import { call, errorOf, fixture, neverAborted, scratchDir } from "../support/helpers.js";

/** A bound that catches hangs, never a timing target. */
const BOUND_MS = 15_000;
const HUNG = "hung";

/** Settles `promise`, or gives up after `ms`. */
async function within<T>(
  promise: Promise<T>,
  ms = BOUND_MS,
): Promise<{ ok: true; value: T } | { ok: false; reason: unknown } | typeof HUNG> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<typeof HUNG>((resolve) => {
    timer = setTimeout(() => resolve(HUNG), ms);
  });
  const settled = promise.then(
    (value) => ({ ok: true as const, value }),
    (reason: unknown) => ({ ok: false as const, reason }),
  );
  return Promise.race([settled, hung]).finally(() => clearTimeout(timer));
}

/** Counts each call's settlements by call id: a call settles exactly once, or the count shows. */
class Settlements {
  readonly counts = new Map<string, number>();
  track(id: string, promise: Promise<ToolResultMessage>): Promise<ToolResultMessage> {
    const count = (): void => {
      this.counts.set(id, (this.counts.get(id) ?? 0) + 1);
    };
    promise.then(count, count);
    return promise;
  }
  expectEachOnce(ids: readonly string[]): void {
    for (const id of ids) expect(this.counts.get(id), id).toBe(1);
  }
}

/** CPU time (user + system, all threads of this process) spent during `ms` of idle waiting. */
async function cpuMsOver(ms: number): Promise<number> {
  const before = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/** A gate file for boot-flaky: how many more threads must fail to boot. */
function flakyModule(failures: number): { module: URL; gate: string; left: () => number; set: (n: number) => void } {
  const gate = join(scratchDir(), "boot-gate");
  setBootFailures(gate, failures);
  const module = new URL(`${fixture("boot-flaky").href}?gate=${encodeURIComponent(gate)}`);
  return { module, gate, left: () => bootFailuresLeft(gate), set: (n) => setBootFailures(gate, n) };
}

const NEVER_BOOTS = [
  { label: "calls process.exit() at its top level", name: "boot-exit-top", tool: "neverBoots", exit: "code 3", more: {} },
  { label: "calls process.exit() in setup()", name: "boot-exit-setup", tool: "exitsInSetup", exit: "code 4", more: {} },
  {
    label: "runs out of memory in setup() under resourceLimits",
    name: "boot-oom-setup",
    tool: "oomInSetup",
    exit: "reaching memory limit",
    more: { resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 } },
  },
] as const;

describe.each(NEVER_BOOTS)("a tool module that $label", ({ name, tool, exit, more }) => {
  const file = `${name}.js`;

  test("with minThreads 1, create() rejects with INVALID_TOOL_MODULE naming the module and the exit", async () => {
    const outcome = await within(WorkerToolExecutor.create({ modules: [fixture(name)], minThreads: 1, maxThreads: 2, ...more }));
    expect(outcome).not.toBe(HUNG);
    if (outcome !== HUNG && outcome.ok) await outcome.value.close();
    const reason = (outcome as { reason: unknown }).reason;
    expect(isToolContractError(reason)).toBe(true);
    expect((reason as { code: string }).code).toBe("INVALID_TOOL_MODULE");
    expect((reason as Error).message).toContain(file);
    expect((reason as Error).message).toContain(exit);
    expect((reason as Error).message).toContain("before it had loaded the tool modules");
  });

  test("with minThreads 0, every call fails quickly with TOOL_EXECUTION_FAILED (never a timeout), exactly once; close() settles; no restart loop", async () => {
    const options: WorkerToolExecutorOptions = { modules: [fixture(name)], minThreads: 0, maxThreads: 2, timeoutMs: 20_000, ...more };
    const executor = await WorkerToolExecutor.create(options);
    const settlements = new Settlements();
    const ids: string[] = [];
    try {
      // A burst while the first threads boot, then calls one after another (some during the
      // pool's wait before the next thread, some after it).
      const burst = Array.from({ length: 4 }, (_, k) => {
        const id = `burst-${k}`;
        ids.push(id);
        return within(settlements.track(id, executor.executeToolCall(call(tool, {}, id), neverAborted())));
      });
      const later: Awaited<(typeof burst)[number]>[] = [];
      for (let k = 0; k < 6; k += 1) {
        const id = `later-${k}`;
        ids.push(id);
        later.push(await within(settlements.track(id, executor.executeToolCall(call(tool, {}, id), neverAborted()))));
        await new Promise((resolve) => setTimeout(resolve, 40));
      }
      for (const outcome of [...(await Promise.all(burst)), ...later]) {
        expect(outcome).not.toBe(HUNG);
        const result = (outcome as { ok: true; value: ToolResultMessage }).value;
        expect(result.isError).toBe(true);
        const error = errorOf(result);
        expect(error.code).toBe("TOOL_EXECUTION_FAILED");
        expect(error.message).toContain(file);
        expect(error.message).toContain(exit);
      }
      // No thread keeps being started while nothing calls (the cores stay idle).
      expect(await cpuMsOver(1500)).toBeLessThan(750);
    } finally {
      expect(await within(executor.close())).not.toBe(HUNG);
    }
    settlements.expectEachOnce(ids);
    expect(executor.threadCount).toBe(0);
  });
});

describe("a tool module that boots only sometimes", () => {
  test("a thread that crashes mid-call is replaced by threads that cannot boot: no restart loop, the next call fails with why, close() settles", async () => {
    const flaky = flakyModule(0); // the first thread boots
    const executor = await WorkerToolExecutor.create({ modules: [flaky.module], minThreads: 1, maxThreads: 2, timeoutMs: 20_000 });
    try {
      const first = await executor.executeToolCall(call("bootedOn", {}, "first"), neverAborted());
      expect(first.isError).toBe(false);
      flaky.set(1_000_000); // from now on, no thread boots
      const crashed = await within(executor.executeToolCall(call("exitNow", {}, "crash"), neverAborted()));
      expect(errorOf((crashed as { value: ToolResultMessage }).value).code).toBe("TOOL_EXECUTION_FAILED");
      // Piscina and the warm spare each try a replacement; once both have exited, nothing more
      // starts, however long we wait.
      const deadline = Date.now() + BOUND_MS;
      while (executor.threadCount > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      const triedBefore = 1_000_000 - flaky.left();
      const cpuMs = await cpuMsOver(2000);
      const triedDuring = 1_000_000 - flaky.left() - triedBefore;
      expect(triedBefore).toBeLessThanOrEqual(4);
      expect(triedDuring).toBe(0);
      expect(cpuMs).toBeLessThan(1000);
      const next = await within(executor.executeToolCall(call("bootedOn", {}, "next"), neverAborted()));
      const error = errorOf((next as { value: ToolResultMessage }).value);
      expect(error).toMatchObject({ code: "TOOL_EXECUTION_FAILED" });
      expect(error.message).toContain("boot-flaky.js");
      expect(error.message).toContain("code 5");
    } finally {
      expect(await within(executor.close())).not.toBe(HUNG);
    }
    expect(executor.threadCount).toBe(0);
  });

  test("while it cannot boot, calls fail with growing, bounded waits between threads; once it boots, calls are served and minThreads is back", async () => {
    const flaky = flakyModule(1_000_000);
    const executor = await WorkerToolExecutor.create({ modules: [flaky.module], minThreads: 0, maxThreads: 1 });
    try {
      const waits: number[] = [];
      let k = 0;
      // Calls one after another: each failed boot makes the pool wait longer before the next.
      while (1_000_000 - flaky.left() < 4) {
        const result = await executor.executeToolCall(call("bootedOn", {}, `down-${k}`), neverAborted());
        k += 1;
        expect(result.isError).toBe(true);
        const error = errorOf(result);
        expect(error.code).toBe("TOOL_EXECUTION_FAILED");
        expect(error.message).toContain("boot-flaky.js");
        const wait = /no new thread for (\d+) ms/.exec(error.message);
        if (wait !== null) waits.push(Number(wait[1]));
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(k).toBeLessThan(2000); // a hang catcher
      }
      // Waits grow with each thread in a row that could not boot, and stay bounded.
      expect(new Set(waits).size).toBeGreaterThanOrEqual(2);
      for (let i = 1; i < waits.length; i += 1) expect(waits[i]).toBeGreaterThanOrEqual(waits[i - 1] as number);
      for (const wait of waits) expect(wait).toBeLessThanOrEqual(5000);
      // The module can boot again: within the longest wait, a call is served.
      flaky.set(0);
      const deadline = Date.now() + BOUND_MS;
      let served: ToolResultMessage | undefined;
      while (served === undefined && Date.now() < deadline) {
        const result = await executor.executeToolCall(call("bootedOn", {}, `up-${k}`), neverAborted());
        k += 1;
        if (!result.isError) served = result;
        else await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(served?.isError).toBe(false);
      expect(JSON.parse((served as ToolResultMessage).content)).toHaveProperty("threadId");
      // And the next one right away too: the episode is over.
      const again = await executor.executeToolCall(call("bootedOn", {}, "again"), neverAborted());
      expect(again.isError).toBe(false);
    } finally {
      expect(await within(executor.close())).not.toBe(HUNG);
    }
  });

  test("once threads boot again, the pool is back to minThreads", async () => {
    const flaky = flakyModule(0);
    // idleTimeout 0: no warm spare lingers after the crashes, so only the restore brings threads back.
    const executor = await WorkerToolExecutor.create({ modules: [flaky.module], minThreads: 2, maxThreads: 2, idleTimeout: 0 });
    try {
      expect(executor.threadCount).toBe(2);
      flaky.set(1_000_000);
      const crashes = await Promise.all(["x", "y"].map((id) => executor.executeToolCall(call("exitNow", {}, id), neverAborted())));
      for (const crashed of crashes) expect(errorOf(crashed).code).toBe("TOOL_EXECUTION_FAILED");
      const idle = Date.now() + BOUND_MS;
      while (executor.threadCount > 0 && Date.now() < idle) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(executor.threadCount).toBe(0);
      // While nothing calls, no thread is started.
      const tried = flaky.left();
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(flaky.left()).toBe(tried);
      flaky.set(0);
      // A call after the pool's wait starts the thread that boots.
      const deadline = Date.now() + BOUND_MS;
      let served = false;
      while (!served && Date.now() < deadline) {
        served = !(await executor.executeToolCall(call("bootedOn"), neverAborted())).isError;
        if (!served) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(served).toBe(true);
      // No further call: the pool brings itself back to minThreads (threads above it are reaped).
      while (executor.threadCount < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(executor.threadCount).toBeGreaterThanOrEqual(2);
    } finally {
      expect(await within(executor.close())).not.toBe(HUNG);
    }
  });

  test("while replacements cannot boot, the threads that did load keep serving (one call each at a time), and no thread is started for the calls beyond", async () => {
    const flaky = flakyModule(0);
    const executor = await WorkerToolExecutor.create({ modules: [flaky.module], minThreads: 2, maxThreads: 2 });
    const settlements = new Settlements();
    try {
      flaky.set(1_000_000);
      const crashed = await executor.executeToolCall(call("exitNow", {}, "crash"), neverAborted());
      expect(errorOf(crashed).code).toBe("TOOL_EXECUTION_FAILED");
      // The replacements Piscina and the warm spare start die booting; one loaded thread is left.
      const deadline = Date.now() + BOUND_MS;
      while (executor.threadCount > 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(executor.threadCount, `threads left ${Date.now() > deadline ? "at the deadline" : "after the replacements"}`).toBe(1);
      const tried = flaky.left();
      // Within the pool's wait: four calls at once all run, one after another, on that thread.
      const ids = ["w1", "w2", "w3", "w4"];
      const results = await Promise.all(
        ids.map((id) => within(settlements.track(id, executor.executeToolCall(call("sleepy", { ms: 5 }, id), neverAborted())))),
      );
      for (const outcome of results) expect(outcome).toMatchObject({ ok: true, value: { isError: false, content: "slept" } });
      expect(flaky.left()).toBe(tried); // no thread was started for them
    } finally {
      expect(await within(executor.close())).not.toBe(HUNG);
    }
    settlements.expectEachOnce(["w1", "w2", "w3", "w4"]);
  });

  test("close() while threads are failing to boot settles, and no thread is started after it", async () => {
    const flaky = flakyModule(1_000_000);
    const executor = await WorkerToolExecutor.create({ modules: [flaky.module], minThreads: 0, maxThreads: 2 });
    const settlements = new Settlements();
    const calls = ["a", "b", "c"].map((id) =>
      within(settlements.track(id, executor.executeToolCall(call("bootedOn", {}, id), neverAborted()))),
    );
    const closing = within(executor.close());
    expect(await closing).not.toBe(HUNG);
    for (const outcome of await Promise.all(calls)) {
      expect(outcome).not.toBe(HUNG);
      expect(errorOf((outcome as { value: ToolResultMessage }).value).code).toBe("TOOL_EXECUTION_FAILED");
    }
    settlements.expectEachOnce(["a", "b", "c"]);
    const tried = flaky.left();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(flaky.left()).toBe(tried);
    expect(executor.threadCount).toBe(0);
  });

  test("a call aborted while it waits for a thread that then fails to boot rejects once, with the abort reason", async () => {
    const flaky = flakyModule(1_000_000);
    const executor = await WorkerToolExecutor.create({ modules: [flaky.module], minThreads: 0, maxThreads: 1 });
    const settlements = new Settlements();
    try {
      const controller = new AbortController();
      const pending = within(settlements.track("aborted", executor.executeToolCall(call("bootedOn", {}, "aborted"), controller.signal)));
      controller.abort("stop waiting");
      const outcome = await pending;
      expect(outcome).toEqual({ ok: false, reason: "stop waiting" });
      // The thread it would have run on still fails to boot: the next call is told why.
      const next = await within(executor.executeToolCall(call("bootedOn", {}, "next"), neverAborted()));
      expect(errorOf((next as { value: ToolResultMessage }).value).code).toBe("TOOL_EXECUTION_FAILED");
    } finally {
      expect(await within(executor.close())).not.toBe(HUNG);
    }
    settlements.expectEachOnce(["aborted"]);
  });
});
