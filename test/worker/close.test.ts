// close() semantics (docs/contract.md, rule W5 — faults are results: close() drains accepted
// calls, then refuses new ones). Accepted before close(): every call and every batch member,
// those not yet started included, gets its own real outcome, never a TOOL_EXECUTION_FAILED
// made up by the close. After close(): EXECUTOR_CLOSED, as a rejection.
import { WorkerToolExecutor } from "toolgate/worker";
import { describe, expect, test } from "vitest";
import { contractError } from "../support/assertions.js";
import { call, errorOf, fixture, neverAborted } from "../support/helpers.js";

const CONTRACT_TOOLS = fixture("contract-tools");

async function closedError(promise: Promise<unknown>): Promise<string> {
  return (await contractError(promise)).code;
}

describe("rule W5 — faults are results: close() drains what it accepted", () => {
  test("during a batch with concurrency 1: every member accepted before close() runs to its own outcome", async () => {
    const executor = await WorkerToolExecutor.create({ modules: [CONTRACT_TOOLS], maxThreads: 2 });
    const calls = Array.from({ length: 5 }, (_, n) => call("delayed", { n, ms: 30 }, `batch-${n}`));
    const batch = executor.executeBatch(calls, neverAborted(), { concurrency: 1 });
    await new Promise((resolve) => setTimeout(resolve, 10)); // the first member is running, four are not dispatched
    const closing = executor.close();
    const results = await batch;
    expect(results.map((result) => result.toolCallId)).toEqual(calls.map((each) => each.id));
    for (const [n, result] of results.entries()) {
      expect(result.isError).toBe(false);
      expect(JSON.parse(result.content)).toEqual({ n, toolCallId: `batch-${n}` });
    }
    await closing;
  });

  test("drains a running call, a queued call and a batch; refuses what comes after, as rejections", async () => {
    const executor = await WorkerToolExecutor.create({ modules: [CONTRACT_TOOLS], maxThreads: 1 });
    const running = executor.executeToolCall(call("delayed", { n: 1, ms: 100 }, "running"), neverAborted());
    const queued = executor.executeToolCall(call("delayed", { n: 2, ms: 1 }, "queued"), neverAborted());
    const batch = executor.executeBatch([call("echo", { n: 3 }, "member-0"), call("missing", {}, "member-1")], neverAborted());
    const closing = executor.close();
    expect(executor.close()).toBe(closing); // idempotent
    expect(await closedError(executor.executeToolCall(call("echo"), neverAborted()))).toBe("EXECUTOR_CLOSED");
    expect(await closedError(executor.executeBatch([call("echo")], neverAborted()))).toBe("EXECUTOR_CLOSED");
    await expect(running).resolves.toMatchObject({ toolCallId: "running", isError: false });
    await expect(queued).resolves.toMatchObject({ toolCallId: "queued", isError: false });
    const [member0, member1] = await batch;
    expect(member0).toMatchObject({ toolCallId: "member-0", content: '{"n":3}' });
    expect(errorOf(member1 as NonNullable<typeof member1>).code).toBe("TOOL_NOT_FOUND");
    await closing;
    expect(executor.threadCount).toBe(0);
  });

  test("waits for a task whose caller moved on (aborted) before it terminates the threads", async () => {
    const executor = await WorkerToolExecutor.create({ modules: [CONTRACT_TOOLS], maxThreads: 1, abortGraceMs: 50 });
    const controller = new AbortController();
    const aborted = executor.executeToolCall(call("delayed", { n: 1, ms: 80 }), controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort("gone");
    await expect(aborted).rejects.toBe("gone");
    await executor.close(); // settles: the grace-period kill or the tool's end frees the slot
    expect(executor.threadCount).toBe(0);
  });
});
