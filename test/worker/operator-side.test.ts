// The worker executor's operator side (docs/operations.md — Worker side; docs/contract.md,
// rule 7 — execution context, rule W1 — tool modules, rule W4 — re-link and freeze on the main
// thread): the events' queueWaitMs, threadId and
// threadKilled from the pool, attachments whose bytes move out of a worker, `app` refused in
// favour of a per-thread setup(), and setup() failures treated as module load failures.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { CallEndEvent, ThreadKilledEvent, ToolExecutorHooks } from "toolgate";
import { WorkerToolExecutor } from "toolgate/worker";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { contractError } from "../support/assertions.js";
import { inProcessExecutor } from "../support/executors.js";
import { call, errorOf, fixture, neverAborted, scratchDir, waitForFile } from "../support/helpers.js";

const WORKER_OPERATOR = fixture("worker-operator");
const OPERATOR_TOOLS = fixture("operator-tools");

/** Waits until `find` finds something (a hook called after the call settled), or gives up after 5 s. */
async function eventually<T>(find: () => T | undefined): Promise<T | undefined> {
  const deadline = Date.now() + 5000;
  for (let found = find(); Date.now() < deadline; found = find()) {
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return find();
}

describe("docs/operations.md — Worker side: what the pool tells the events", () => {
  const ends: CallEndEvent[] = [];
  const kills: ThreadKilledEvent[] = [];
  const hooks: ToolExecutorHooks = { onCallEnd: (event) => void ends.push(event), onThreadKilled: (event) => void kills.push(event) };
  const endOf = (id: string) => ends.find((event) => event.toolCallId === id);
  let executor: WorkerToolExecutor;
  beforeAll(async () => {
    executor = await WorkerToolExecutor.create({ modules: [WORKER_OPERATOR, OPERATOR_TOOLS], maxThreads: 1, abortGraceMs: 100, hooks });
  });
  afterAll(() => executor.close());

  test("threadId is the thread the tool ran on; a call waiting behind another has its queueWaitMs", async () => {
    const first = executor.executeToolCall(call("wait", { ms: 200 }, "call-first"), neverAborted());
    const second = executor.executeToolCall(call("appOf", {}, "call-second"), neverAborted());
    await first;
    const app = JSON.parse((await second).content) as { threadId: number };
    expect(endOf("call-second")).toMatchObject({ outcome: "success", threadId: app.threadId, threadKilled: false });
    // One thread: the second call waited in the queue while the first ran its 200 ms.
    expect(endOf("call-second")?.queueWaitMs).toBeGreaterThanOrEqual(150);
    expect(endOf("call-first")?.threadId).toBe(app.threadId);
  });

  test("a thread that dies under its call: threadKilled, with the thread that took it", async () => {
    const result = await executor.executeToolCall(call("exit", {}, "call-exit"), neverAborted());
    expect(errorOf(result).code).toBe("TOOL_EXECUTION_FAILED");
    const event = endOf("call-exit");
    expect(event).toMatchObject({ outcome: "error", code: "TOOL_EXECUTION_FAILED", threadKilled: true });
    expect(typeof event?.threadId).toBe("number");
    expect((await executor.executeToolCall(call("appOf"), neverAborted())).isError).toBe(false); // the pool serves on
  });

  test("a spinning tool's timeout settles the call; the kill after the grace period is onThreadKilled", async () => {
    const result = await executor.executeToolCall(call("spin", {}, "call-spin"), neverAborted(), { timeoutMs: 100 });
    expect(errorOf(result)).toEqual({ code: "TOOL_EXECUTION_TIMEOUT", message: "the tool did not finish within 100 ms" });
    const ended = endOf("call-spin");
    expect(ended).toMatchObject({ outcome: "error", code: "TOOL_EXECUTION_TIMEOUT", threadKilled: false });
    expect(typeof ended?.threadId).toBe("number");
    const killed = await eventually(() => kills.find((event) => event.toolCallId === "call-spin"));
    expect(killed).toEqual({ toolCallId: "call-spin", toolName: "spin", threadId: ended?.threadId });
    expect(Object.isFrozen(killed)).toBe(true);
  });
});

describe("rule W4 — re-link and freeze on the main thread: attachments from a worker", () => {
  let executor: WorkerToolExecutor;
  beforeAll(async () => {
    executor = await WorkerToolExecutor.create({ modules: [WORKER_OPERATOR], maxThreads: 1 });
  });
  afterAll(() => executor.close());

  test("the bytes arrive intact, and the worker's buffer was transferred (detached there), not copied", async () => {
    const size = 300_000;
    const result = await executor.executeToolCall(call("pattern", { size }), neverAborted());
    expect(result).toMatchObject({ content: `{"size":${size}}`, isError: false });
    const [image, gif] = result.attachments ?? [];
    expect(image?.mimeType).toBe("image/png");
    expect(image?.data).toEqual(Uint8Array.from({ length: size }, (_, index) => index % 256));
    expect(gif).toEqual({ type: "image", mimeType: "image/gif", data: new Uint8Array([0, 1, 2]) });
    expect(Object.isFrozen(result.attachments)).toBe(true);
    expect(Object.isFrozen(image)).toBe(true);
    // The tool kept its attachment: in its thread (one thread here) the bytes are gone.
    expect((await executor.executeToolCall(call("keptByteLength"), neverAborted())).content).toBe("0");
  });

  test("an attachment listed twice moves once and arrives twice", async () => {
    const result = await executor.executeToolCall(call("twice"), neverAborted());
    expect(result.attachments).toHaveLength(2);
    expect(result.attachments?.[0]?.data).toEqual(Uint8Array.from({ length: 16 }, (_, index) => index));
    expect(result.attachments?.[1]?.data).toEqual(result.attachments?.[0]?.data);
  });

  test("an attachment returned again after it moved is that call's error, and the thread serves on", async () => {
    expect((await executor.executeToolCall(call("cached"), neverAborted())).attachments).toHaveLength(1);
    const again = await executor.executeToolCall(call("cached"), neverAborted());
    expect(errorOf(again).code).toBe("TOOL_OUTPUT_SERIALIZATION_FAILED");
    expect(errorOf(again).message).toContain("attachment [0] cannot be moved to the main thread");
    expect(again.attachments).toBeUndefined();
    expect((await executor.executeToolCall(call("twice"), neverAborted())).attachments).toHaveLength(2);
  });

  test("an `attachments` a tool module planted on the worker's Object.prototype is not an outcome's", async () => {
    const polluted = await WorkerToolExecutor.create({ modules: [fixture("worker-pollution")], maxThreads: 1 });
    try {
      const result = await polluted.executeToolCall(call("plain"), neverAborted());
      expect(result).toMatchObject({ content: "plain", isError: false });
      expect(Object.hasOwn(result, "attachments")).toBe(false);
    } finally {
      await polluted.close();
    }
  });

  test.each(["oversized", "overTotal"])("%s: over the budget, the same error result as in-process", async (name) => {
    const inProcess = await inProcessExecutor([WORKER_OPERATOR]);
    try {
      const here = await inProcess.executeToolCall(call(name), neverAborted());
      const there = await executor.executeToolCall(call(name), neverAborted());
      expect(here.isError).toBe(true);
      expect(errorOf(here).message).toContain("byte");
      expect(there).toEqual(here);
    } finally {
      await inProcess.close();
    }
  });
});

describe("rule 7 — execution context: app is refused on a worker executor, which has setup() instead", () => {
  let executor: WorkerToolExecutor;
  let dir: string;
  beforeAll(async () => {
    executor = await WorkerToolExecutor.create({ modules: [WORKER_OPERATOR, OPERATOR_TOOLS], maxThreads: 2 });
    dir = scratchDir();
  });
  afterAll(() => executor.close());

  test("an executor's app is an INVALID_ARGUMENT pointing to setup()", async () => {
    const error = await contractError(WorkerToolExecutor.create({ modules: [WORKER_OPERATOR], app: { db: "a live handle" } as never }));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.message).toContain("options.app cannot be sent to a worker thread");
    expect(error.message).toContain("export a setup() from the tool module instead");
  });

  test("a call's or a batch's app is refused up front: the tool never runs", async () => {
    const path = join(dir, "touched-with-app");
    const app = { app: { db: "a live handle" } } as never;
    const callError = await contractError(executor.executeToolCall(call("touch", { path }), neverAborted(), app));
    expect(callError.code).toBe("INVALID_ARGUMENT");
    expect(callError.message).toContain("setup()");
    const batchError = await contractError(executor.executeBatch([call("touch", { path })], neverAborted(), app));
    expect(batchError.code).toBe("INVALID_ARGUMENT");
    expect(existsSync(path)).toBe(false);
    // An explicit undefined is no app.
    expect((await executor.executeToolCall(call("touch", { path }), neverAborted(), { app: undefined } as never)).content).toBe("touched");
    expect(readFileSync(path, "utf8")).toBe("touched");
  });

  test("setup() runs once per thread; what it resolves to is context.app of the module's tools there", async () => {
    // Two calls at once on two threads: each thread ran its own setup, once.
    const results = await executor.executeBatch(
      [call("appOf", {}, "a1"), call("wait", { ms: 100 }, "w"), call("appOf", {}, "a2")],
      neverAborted(),
    );
    for (const result of [results[0], results[2]]) {
      const app = JSON.parse(result?.content ?? "") as { threadId: number; setups: number; signalAborted: boolean };
      expect(app).toMatchObject({ setups: 1, signalAborted: false });
      expect(app.threadId).toBeGreaterThan(0); // a worker thread's id (the main thread's is 0)
    }
    // Tools of a module without setup() have no app.
    const plain = await inProcessExecutor([WORKER_OPERATOR]);
    try {
      expect((await plain.executeToolCall(call("appOf"), neverAborted())).content).toBe("no app");
    } finally {
      await plain.close();
    }
  });
});

test.each([
  ["synchronous, returning a plain value", "setup-sync", "syncApp", "sync"],
  ["returning a thenable", "setup-thenable", "thenableApp", "thenable"],
])("a setup() %s: its value is context.app", async (_label, module, tool, kind) => {
  const executor = await WorkerToolExecutor.create({ modules: [fixture(module)], maxThreads: 1 });
  try {
    const app = JSON.parse((await executor.executeToolCall(call(tool), neverAborted())).content) as { kind: string };
    expect(app.kind).toBe(kind);
  } finally {
    await executor.close();
  }
});

describe("rule W1 — tool modules: setup() that fails is a module load failure", () => {
  test("at create(): a setup() that throws rejects with INVALID_TOOL_MODULE naming it and the reason", async () => {
    const error = await contractError(WorkerToolExecutor.create({ modules: [fixture("setup-throws")], maxThreads: 1 }));
    expect(error).toMatchObject({
      code: "INVALID_TOOL_MODULE",
      message: "setup() of tool module setup-throws.js failed in a worker thread: the database is down",
    });
  });

  test("at create(): a setup() that never settles runs out of setupTimeoutMs, and its signal fires", async () => {
    const report = join(scratchDir(), "setup-signal");
    process.env.TOOLGATE_SETUP_REPORT = report; // a worker thread gets a copy of the environment as it starts
    try {
      const error = await contractError(
        WorkerToolExecutor.create({ modules: [fixture("setup-hangs")], maxThreads: 1, setupTimeoutMs: 200 }),
      );
      expect(error).toMatchObject({
        code: "INVALID_TOOL_MODULE",
        message: "setup() of tool module setup-hangs.js did not finish within 200 ms in a worker thread",
      });
      expect(await waitForFile(report)).toBe("TimeoutError");
    } finally {
      delete process.env.TOOLGATE_SETUP_REPORT;
    }
  });

  test("a setup export that is not a function is refused on the main thread", async () => {
    const error = await contractError(WorkerToolExecutor.create({ modules: [fixture("setup-not-a-function")] }));
    expect(error.code).toBe("INVALID_TOOL_MODULE");
    expect(error.message).toContain("its setup export must be a function (got the number 42)");
  });

  test("after start: the call is TOOL_EXECUTION_FAILED, its thread is replaced, other modules' tools work", async () => {
    const ends: CallEndEvent[] = [];
    const executor = await WorkerToolExecutor.create({
      modules: [fixture("setup-throws"), WORKER_OPERATOR],
      minThreads: 0,
      maxThreads: 1,
      hooks: { onCallEnd: (event) => void ends.push(event) },
    });
    try {
      const first = await executor.executeToolCall(call("needsDatabase", {}, "n1"), neverAborted());
      expect(errorOf(first)).toEqual({
        code: "TOOL_EXECUTION_FAILED",
        message: "setup() of tool module setup-throws.js failed in a worker thread: the database is down",
      });
      expect((await executor.executeToolCall(call("appOf", {}, "ok"), neverAborted())).isError).toBe(false);
      const second = await executor.executeToolCall(call("needsDatabase", {}, "n2"), neverAborted());
      expect(errorOf(second).code).toBe("TOOL_EXECUTION_FAILED");
      expect((await executor.executeToolCall(call("appOf", {}, "ok2"), neverAborted())).isError).toBe(false);
      const threads = ["n1", "ok", "n2", "ok2"].map((id) => ends.find((event) => event.toolCallId === id)?.threadId);
      expect(threads.every((threadId) => typeof threadId === "number")).toBe(true);
      // A thread whose setup failed takes no call after the one that met the failure: it is replaced.
      expect(threads[1]).not.toBe(threads[0]);
      expect(threads[3]).not.toBe(threads[2]);
    } finally {
      await executor.close();
    }
  });
});
