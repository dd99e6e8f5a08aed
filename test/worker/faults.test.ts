// Faults that must stay with the call that caused them (docs/contract.md, rule W3 — timeout and
// termination, rule W5 — faults are results, rule 9 — failure classification): the
// grace-period kill never hits the next call, a module that fails only in a worker never
// hangs anything, a late fault of one call is never blamed on the next, and errors from a
// worker's realm read as `Name: message`.
import { cpSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { isToolContractError } from "toolgate";
import { WorkerToolExecutor } from "toolgate/worker";
import { describe, expect, test } from "vitest";
import { call, errorOf, fixture, neverAborted, scratchDir, settle } from "../support/helpers.js";

const CONTRACT_TOOLS = fixture("contract-tools");
const FAULTS = fixture("worker-faults");
const HOST_DIR = fileURLToPath(new URL("../../", import.meta.url));

type Outcome = Awaited<ReturnType<typeof settle>>;
const HUNG = "hung";

/** Settles `promise`, or gives up after `ms` (a bound that catches hangs, not a timing assertion). */
function within(promise: Promise<unknown>, ms: number): Promise<Outcome | typeof HUNG> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<typeof HUNG>((resolve) => {
    timer = setTimeout(() => resolve(HUNG), ms);
  });
  return Promise.race([settle(promise), hung]).finally(() => clearTimeout(timer));
}

function contractErrorOf(outcome: Outcome | typeof HUNG, isContractError = isToolContractError): { code: string; message: string } {
  expect(outcome).not.toBe(HUNG);
  expect((outcome as Outcome).ok).toBe(false);
  const reason = (outcome as { reason: unknown }).reason;
  expect(isContractError(reason)).toBe(true);
  return reason as { code: string; message: string };
}

describe("rule W3 — timeout and termination: the grace-period kill is bound to the task it was meant for", () => {
  test("a tool that finishes as its grace period expires keeps its thread, and the next call gets its own result", async () => {
    const { gate, GATE_OPEN, GATE_RETURNING, GATE_STARTED } = (await import(FAULTS.href)) as typeof import("../fixtures/worker-faults.js");
    const graceMs = 100;
    const executor = await WorkerToolExecutor.create({ modules: [FAULTS], minThreads: 1, maxThreads: 1, abortGraceMs: graceMs });
    try {
      await executor.executeToolCall(call("threadId"), neverAborted()); // the thread is warm
      const controller = new AbortController();
      const aborted = executor.executeToolCall(call("gated", {}, "call-A"), controller.signal);
      expect(Atomics.wait(gate, GATE_STARTED, 0, 10_000)).not.toBe("timed-out");
      controller.abort("A is aborted");
      const abortedAt = performance.now();
      await expect(aborted).rejects.toBe("A is aborted");
      // B is the call a stray kill would hit: it goes to A's thread as soon as A is done (or to
      // the spare thread Piscina starts because A's thread is busy, if that is ready first).
      const next = executor.executeToolCall(call("sleepEcho", { ms: 1 }, "call-B"), neverAborted());
      // The interleaving, forced: inside a check-phase callback, A finishes (its reply is
      // posted) and the main thread stays busy until A's grace period is over. The loop then
      // runs its timers phase (the grace timer) before its poll phase (A's reply).
      await new Promise<void>((resolve) => {
        setImmediate(() => {
          Atomics.store(gate, GATE_OPEN, 1);
          Atomics.notify(gate, GATE_OPEN);
          Atomics.wait(gate, GATE_RETURNING, 0, 10_000);
          while (performance.now() < abortedAt + graceMs + 50) {
            // the main thread is busy
          }
          resolve();
        });
      });
      const result = await next;
      expect(result).toMatchObject({ toolCallId: "call-B", isError: false });
      expect(JSON.parse(result.content)).toMatchObject({ toolCallId: "call-B" });
      // A finished before it was condemned: its thread was not terminated either (it is still
      // there, beside the spare started for B).
      expect(executor.threadCount).toBe(2);
    } finally {
      Atomics.store(gate, GATE_OPEN, 1);
      Atomics.notify(gate, GATE_OPEN);
      await executor.close();
    }
  });
});

describe("rule W5 — faults are results: a module that fails only inside a worker hangs nothing", () => {
  const LOAD_MS = 300;
  const BOUND_MS = 15_000;

  test.each([
    ["throws", fixture("throws-in-worker"), "this module refuses to load in a worker"],
    ["never finishes (a top-level await)", fixture("worker-load-hangs"), `did not finish loading in a worker thread within ${LOAD_MS} ms`],
    ["spins at its top level", fixture("worker-load-spins"), `did not finish loading the tool modules`],
  ])("with minThreads 1, a module that %s rejects create() with INVALID_TOOL_MODULE", async (_label, module, message) => {
    const created = WorkerToolExecutor.create({ modules: [CONTRACT_TOOLS, module], minThreads: 1, moduleLoadTimeoutMs: LOAD_MS });
    const outcome = await within(created, BOUND_MS);
    if (outcome !== HUNG && outcome.ok) await (outcome.value as WorkerToolExecutor).close();
    const error = contractErrorOf(outcome);
    expect(error.code).toBe("INVALID_TOOL_MODULE");
    expect(error.message).toContain(message);
  });

  test.each([
    [
      "throws",
      fixture("throws-in-worker"),
      "brokenInWorker",
      "tool module throws-in-worker.js could not be loaded: this module refuses to load in a worker",
    ],
    [
      "never finishes",
      fixture("worker-load-hangs"),
      "hangsInWorker",
      `tool module worker-load-hangs.js did not finish loading in a worker thread within ${LOAD_MS} ms`,
    ],
    ["spins", fixture("worker-load-spins"), "spinsInWorker", "a worker thread did not finish loading the tool modules"],
  ])("with minThreads 0, a module that %s fails the call, frees the slot, and close() settles", async (_label, module, tool, message) => {
    const executor = await WorkerToolExecutor.create({
      modules: [CONTRACT_TOOLS, module],
      minThreads: 0,
      maxThreads: 1,
      moduleLoadTimeoutMs: LOAD_MS,
    });
    try {
      for (const id of ["first", "second"]) {
        const outcome = await within(executor.executeToolCall(call(tool, {}, id), neverAborted()), BOUND_MS);
        expect(outcome).not.toBe(HUNG);
        const result = (outcome as { value: Parameters<typeof errorOf>[0] }).value;
        expect(result).toMatchObject({ toolCallId: id, isError: true });
        expect(errorOf(result).code).toBe("TOOL_EXECUTION_FAILED");
        expect(errorOf(result).message).toContain(message);
        // Model-visible content names the module by its file name, never by a host path.
        expect(result.content).not.toContain(HOST_DIR);
      }
      if (tool !== "spinsInWorker") {
        // The thread itself is fine: another module's tools still run on it.
        const echo = await within(executor.executeToolCall(call("echo", { still: "serving" }), neverAborted()), BOUND_MS);
        expect((echo as { value: { content: string } }).value.content).toBe('{"still":"serving"}');
      }
    } finally {
      expect(await within(executor.close(), BOUND_MS)).not.toBe(HUNG);
    }
  });
});

describe("rule W5 — faults are results: a late fault of one call is never blamed on the next", () => {
  test.each([
    ["an uncaught exception", "lateThrow"],
    ["an unhandled rejection", "lateReject"],
  ])("%s scheduled by call A surfaces while B runs: B gets its own outcome, and the thread is replaced", async (_label, lateTool) => {
    const executor = await WorkerToolExecutor.create({ modules: [FAULTS], minThreads: 1, maxThreads: 1 });
    try {
      const threadBefore = (await executor.executeToolCall(call("threadId"), neverAborted())).content;
      const a = await executor.executeToolCall(call(lateTool, { ms: 30 }, "call-A"), neverAborted());
      expect(a).toMatchObject({ toolCallId: "call-A", isError: false, content: "returned" });
      // A's timer can only fire while B runs (an idle Piscina thread blocks in Atomics.wait).
      const b = await executor.executeToolCall(call("sleepEcho", { ms: 300 }, "call-B"), neverAborted());
      expect(b).toMatchObject({ toolCallId: "call-B", isError: false });
      expect(JSON.parse(b.content)).toEqual({ toolCallId: "call-B", threadId: Number(threadBefore) });
      // The thread that hosted the fault is replaced once idle; the pool serves on.
      const threadAfter = (await executor.executeToolCall(call("threadId"), neverAborted())).content;
      expect(threadAfter).not.toBe(threadBefore);
    } finally {
      await executor.close();
    }
  });

  test("a fault traced to the running call is that call's failure", async () => {
    const executor = await WorkerToolExecutor.create({ modules: [FAULTS], minThreads: 1, maxThreads: 1 });
    try {
      const result = await executor.executeToolCall(call("ownUncaught", { kind: "subclass" }, "call-own"), neverAborted());
      expect(result).toMatchObject({ toolCallId: "call-own", isError: true });
      expect(errorOf(result)).toEqual({
        code: "TOOL_EXECUTION_FAILED",
        message: "the tool caused an uncaught exception or unhandled rejection: QuotaError: quota exceeded",
      });
      expect((await executor.executeToolCall(call("sleepEcho", { ms: 1 }, "after"), neverAborted())).isError).toBe(false);
    } finally {
      await executor.close();
    }
  });
});

describe("rule 9 — failure classification: errors from a worker's realm read as `Name: message`", () => {
  test.each([
    ["a tool's own Error subclass", "subclass", "QuotaError: quota exceeded"],
    ["a DOMException", "domException", "NotAllowedError: not allowed here"],
    ["a TypeError from inside a library", "libraryTypeError", "TypeError: Cannot read properties of null (reading 'x')"],
  ])("%s, thrown or uncaught", async (_label, kind, text) => {
    const executor = await WorkerToolExecutor.create({ modules: [FAULTS], maxThreads: 1 });
    try {
      const thrown = await executor.executeToolCall(call("throwsKind", { kind }), neverAborted());
      expect(errorOf(thrown)).toEqual({ code: "TOOL_EXECUTION_FAILED", message: text });
      const uncaught = await executor.executeToolCall(call("ownUncaught", { kind }), neverAborted());
      expect(errorOf(uncaught).message).toBe(`the tool caused an uncaught exception or unhandled rejection: ${text}`);
    } finally {
      await executor.close();
    }
  });

  test("a validated value with a throwing accessor is TOOL_VALIDATION_FAILED", async () => {
    const executor = await WorkerToolExecutor.create({ modules: [FAULTS], maxThreads: 1 });
    try {
      const result = await executor.executeToolCall(call("accessorArgs"), neverAborted());
      expect(errorOf(result)).toEqual({
        code: "TOOL_VALIDATION_FAILED",
        message: "the validated arguments cannot be sent to a worker thread (a getter in the validated value)",
      });
    } finally {
      await executor.close();
    }
  });

  test("a pool whose worker entry is missing rejects create() with WORKER_POOL_START_FAILED and a readable error", async () => {
    // A copy of the package without its worker entry (dist/workers).
    const root = scratchDir();
    mkdirSync(join(root, "dist"));
    cpSync(join(HOST_DIR, "dist/src"), join(root, "dist/src"), { recursive: true });
    cpSync(join(HOST_DIR, "package.json"), join(root, "package.json"));
    symlinkSync(join(HOST_DIR, "node_modules"), join(root, "node_modules"));
    const copy = {
      ...((await import(join(root, "dist/src/worker/index.js"))) as typeof import("toolgate/worker")),
      ...((await import(join(root, "dist/src/index.js"))) as typeof import("toolgate")),
    };
    const outcome = await within(copy.WorkerToolExecutor.create({ modules: [CONTRACT_TOOLS], minThreads: 1 }), 15_000);
    const error = contractErrorOf(outcome, copy.isToolContractError);
    expect(error.code).toBe("WORKER_POOL_START_FAILED");
    expect(error.message).toMatch(/^the worker pool could not start: Cannot find module/);
    expect(error.message).not.toContain("cannot be described");
  });
});
