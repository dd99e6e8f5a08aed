// Abort reaches the caller at once in the worker pool (docs/contract.md, rule W2 — abort
// relay): the rejection does not wait for the grace-period kill of a tool that ignores its
// signal (rule W3 — timeout and termination).
import { WorkerToolExecutor } from "toolgate/worker";
import { describe, expect, test } from "vitest";
import { call, fixture } from "../support/helpers.js";

describe("rule W2 — abort relay: the call rejects at once, whatever the grace period", () => {
  test("a running call that ignores its signal rejects with the reason long before the grace-period kill", async () => {
    const executor = await WorkerToolExecutor.create({ modules: [fixture("worker-tools")], maxThreads: 1, abortGraceMs: 10_000 });
    try {
      const controller = new AbortController();
      const pending = executor.executeToolCall(call("spin", { ms: 1500 }), controller.signal);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const abortedAt = performance.now();
      controller.abort("stop now");
      await expect(pending).rejects.toBe("stop now");
      // Generous, yet far below both the 1.5 s the tool spins and the 10 s grace period.
      expect(performance.now() - abortedAt).toBeLessThan(750);
    } finally {
      await executor.close(); // waits for the spinning tool to finish its 1.5 s
    }
  });
});
