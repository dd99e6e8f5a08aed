// Budgets against every executor: a tool's own output budgets travel with its definition
// (into a worker too), and a call's argument budgets apply wherever the call runs.
import { isToolContractError, Limits, type ToolExecutor } from "toolgate";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { tableRows } from "../fixtures/budget-tools.js";
import { EXECUTORS } from "../support/executors.js";
import { call, codePoints, errorOf, fixture, neverAborted, settle } from "../support/helpers.js";

describe.each(EXECUTORS)("rule 11 — work budgets: budgets, %s", (_label, make) => {
  let executor: ToolExecutor;
  beforeAll(async () => {
    executor = await make([fixture("budget-tools")]);
  });
  afterAll(() => executor.close());

  test("the default output budgets accept 30 rows of 4 fields (151 values)", async () => {
    const result = await executor.executeToolCall(call("rows"), neverAborted());
    expect(result.isError).toBe(false);
    expect(result.content).toBe(
      JSON.stringify(tableRows().map((row) => ({ active: row.active, id: row.id, name: row.name, score: row.score }))),
    );
  });

  test("a tool's own budgets apply where it runs", async () => {
    const refused = await executor.executeToolCall(call("tinyRows"), neverAborted());
    expect(errorOf(refused)).toEqual({
      code: "TOOL_OUTPUT_SERIALIZATION_FAILED",
      message: "output contains more than 20 values at $[3].score",
    });
    const short = await executor.executeToolCall(call("shortContent"), neverAborted());
    expect(codePoints(short.content)).toBe(64);
    expect(short.content.endsWith(Limits.TRUNCATION_MARKER)).toBe(true);
  });

  test("a call's argument budgets refuse it before it is dispatched", async () => {
    const settled = await settle(
      executor.executeToolCall(call("rows", { list: [1, 2, 3] }), neverAborted(), { argumentBudgets: { maxNodes: 3 } }),
    );
    expect(settled.ok).toBe(false);
    const reason = settled.ok ? undefined : settled.reason;
    expect(isToolContractError(reason)).toBe(true);
    expect(reason).toMatchObject({
      code: "INVALID_TOOL_CALL",
      message: expect.stringContaining("arguments.list exceeds the argument budget"),
    });
  });

  test("a 10^6-element argument is refused by the default budget", async () => {
    const settled = await settle(executor.executeToolCall(call("rows", { list: new Array(1_000_000).fill(0) }), neverAborted()));
    expect(settled.ok ? undefined : settled.reason).toMatchObject({
      code: "INVALID_TOOL_CALL",
      message: expect.stringContaining("(argument budget maxNodes)"),
    });
  });
});
