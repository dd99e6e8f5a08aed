// Abort reaches the caller at once in the worker pool (docs/contract.md, rule W2 — abort
// relay): the rejection does not wait for the grace-period kill of a tool that ignores its
// signal (rule W3 — timeout and termination).
import { join } from "node:path";
import { WorkerToolExecutor } from "toolgate/worker";
import { describe, expect, test } from "vitest";
import { call, fixture, scratchDir, settle, waitForFile } from "../support/helpers.js";

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

describe("rule W2 — abort relay: the abort reaches the tool's thread without loading anything there", () => {
  // The abort is the first message a thread's port gets. A port listened to as an EventTarget
  // builds a MessageEvent per message, and since Node 22.3 the first one loads undici (with
  // http, tls, crypto, http2, zlib: 40–300 ms of synchronous work) before the tool's signal can
  // fire: a cooperative tool was killed at the end of a short grace period instead.
  test.each([
    ["an abort", "AbortError", {}],
    ["a timeout", "TimeoutError", { timeoutMs: 300 }],
  ])("%s fires the signal in a fresh thread with no module loaded on the way", async (_label, reasonName, options) => {
    const executor = await WorkerToolExecutor.create({
      modules: [fixture("abort-relay")],
      maxThreads: 1,
      abortGraceMs: 10_000,
      ...options,
    });
    try {
      const dir = scratchDir();
      const startedPath = join(dir, "started");
      const markerPath = join(dir, "aborted");
      const controller = new AbortController();
      const pending = settle(executor.executeToolCall(call("recordAbort", { startedPath, markerPath }), controller.signal));
      expect(await waitForFile(startedPath)).toBe("started");
      if (reasonName === "AbortError") controller.abort("stop now");
      const seen = JSON.parse((await waitForFile(markerPath)) ?? "null") as { reason: string; loaded: string[] } | null;
      expect(seen).toEqual({ reason: reasonName, loaded: [] });
      expect((await pending).ok).toBe(reasonName !== "AbortError");
    } finally {
      await executor.close();
    }
  });
});
