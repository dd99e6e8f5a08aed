// Issue 45 §3, structured output (docs/contract.md — Structured output): a tool's declared
// `outputSchema` is checked where the tool runs (in the worker thread on a pool, on the host
// across the queue), a mismatch is TOOL_EXECUTION_FAILED naming each path, and what is
// serialized is the schema's output. Every executor.
import { defineTool, isToolContractError, type ToolExecutor } from "toolgate";
import { Type } from "typebox";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { z } from "zod";
import { CONTRACT_EXECUTORS } from "../support/executors.js";
import { call, errorOf, fixture, neverAborted } from "../support/helpers.js";

const STRUCTURED_TOOLS = fixture("structured-tools");

describe.each(CONTRACT_EXECUTORS)("docs/contract.md — Structured output (%s)", (label, make) => {
  let executor: ToolExecutor;
  beforeAll(async () => {
    executor = await make([STRUCTURED_TOOLS]);
  });
  afterAll(() => executor.close());

  test("an output the schema accepts is a success; what is serialized is the schema's output (its default applied)", async () => {
    const result = await executor.executeToolCall(call("point"), neverAborted());
    expect(result).toMatchObject({ isError: false, content: '{"label":"origin","x":1,"y":2}' });
  });

  test("a mismatch is TOOL_EXECUTION_FAILED naming each path", async () => {
    const result = await executor.executeToolCall(call("badPoint"), neverAborted());
    expect(errorOf(result).code).toBe("TOOL_EXECUTION_FAILED");
    expect(errorOf(result).message).toMatch(/^the tool's output does not match its outputSchema:\n/);
    expect(errorOf(result).message).toContain("  - $.x: ");
    expect(errorOf(result).message).toContain("  - $.y: ");
    const deep = await executor.executeToolCall(call("deepBad"), neverAborted());
    expect(errorOf(deep).message).toContain("  - $.items[1].id: ");
    const boxed = await executor.executeToolCall(call("boxed"), neverAborted());
    expect(errorOf(boxed).message).toContain("  - $.count: ");
  });

  test("it is checked where the tool runs: in its worker thread on a pool", async () => {
    const result = await executor.executeToolCall(call("stamped"), neverAborted());
    const { ranIn, checkedIn } = JSON.parse(result.content) as { ranIn: number; checkedIn: number };
    expect(checkedIn).toBe(ranIn);
    if (label === "in-process") expect(checkedIn).toBe(0);
    else expect(checkedIn).toBeGreaterThan(0);
  });

  test("an asynchronous output schema fails the call: tool validation is synchronous", async () => {
    const result = await executor.executeToolCall(call("asyncChecked"), neverAborted());
    expect(errorOf(result)).toMatchObject({
      code: "TOOL_EXECUTION_FAILED",
      message: expect.stringContaining("async schemas are not supported"),
    });
  });
});

describe("outputSchema at definition time", () => {
  const base = { name: "t", description: "d.", parameters: z.object({}), execute: () => ({}) };
  const refusal = (definition: object): string => {
    try {
      defineTool(definition as never);
    } catch (error) {
      expect(isToolContractError(error) && error.code).toBe("INVALID_TOOL_DEFINITION");
      return (error as Error).message;
    }
    throw new Error("expected a refusal");
  };

  test("a bare TypeBox schema is refused with the way to wrap it; something not a Standard Schema is refused", () => {
    expect(refusal({ ...base, outputSchema: Type.Object({}) })).toContain(
      "outputSchema is a TypeBox schema; wrap it with typeboxParameters",
    );
    expect(refusal({ ...base, outputSchema: { type: "object" } })).toContain('tool "t": outputSchema: expected a Standard Schema v1');
    expect(refusal({ ...base, outputSchema: new Proxy(z.object({}), {}) })).toContain("expected a Standard Schema v1");
  });

  test("the field is read once, as the other fields are: a getter runs once", () => {
    let reads = 0;
    const definition = Object.defineProperty({ ...base }, "outputSchema", {
      enumerable: true,
      get: () => {
        reads += 1;
        return z.object({});
      },
    });
    defineTool(definition as never);
    expect(reads).toBe(1);
  });
});
