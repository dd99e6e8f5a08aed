// Batches run with a concurrency bound (docs/contract.md, rule W6 — batches). The bound is
// observed by a tool that counts how many of its calls run at once, so this runs in-process:
// batch.ts is written once over ToolExecutor, and the worker pool's batches use the same code.
import { defineTool, executeToolCalls, ToolRegistry } from "toolgate";
import { describe, expect, test } from "vitest";
import { call, neverAborted } from "../support/helpers.js";

describe("rule W6 — batches: the concurrency bound", () => {
  test("executeToolCalls never runs more than `concurrency` calls at once", async () => {
    let running = 0;
    let peak = 0;
    const registry = new ToolRegistry([
      defineTool({
        name: "slow",
        description: "Counts how many calls run at once.",
        validate: () => ({ ok: true, value: null }),
        execute: async () => {
          running += 1;
          peak = Math.max(peak, running);
          await new Promise((resolve) => setTimeout(resolve, 20));
          running -= 1;
          return "done";
        },
      }),
    ]);
    const calls = Array.from({ length: 6 }, (_, n) => call("slow", {}, `c${n}`));
    const results = await executeToolCalls(registry, calls, neverAborted(), { concurrency: 2 });
    expect(results.map((result) => result.toolCallId)).toEqual(["c0", "c1", "c2", "c3", "c4", "c5"]);
    expect(peak).toBe(2);
  });
});
