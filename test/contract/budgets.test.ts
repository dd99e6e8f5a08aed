// Every serializer budget is configurable (docs/contract.md, rule 11 — work budgets; the
// table: docs/guarantees.md): per executor, per tool, and on serializeToolOutput itself,
// validated up front, and the defaults accept common shapes.
import {
  defineTool,
  executeToolCall,
  InProcessToolExecutor,
  Limits,
  type OutputBudgets,
  serializeToolOutput,
  ToolRegistry,
} from "toolgate";
import { describe, expect, test } from "vitest";
import { call, codePoints, errorOf, neverAborted } from "../support/helpers.js";

const refusedWith = (value: unknown, budgets: OutputBudgets) => {
  const outcome = serializeToolOutput(value, budgets);
  if (outcome.ok) throw new Error(`expected a refusal, got ${outcome.content}`);
  return outcome.message;
};

describe("rule 11 — work budgets: the defaults accept common result shapes and still bound work", () => {
  test("30 rows of 4 fields and a page of 50 search results render in full", () => {
    const rows = Array.from({ length: 30 }, (_, id) => ({ id, name: `n${id}`, ok: true, score: id }));
    expect(serializeToolOutput(rows)).toEqual({ ok: true, content: JSON.stringify(rows) });
    const results = Array.from({ length: 50 }, (_, rank) => ({ rank, title: `t${rank}`, url: `https://e.x/${rank}` }));
    const page = { query: "q", total: 50, results };
    const outcome = serializeToolOutput(page);
    expect(outcome.ok).toBe(true); // 204 values; long enough to be cut at the content cap, never refused
  });

  test("the node budget is still a bound: one value more than the default is refused", () => {
    const values = Array.from({ length: Limits.MAX_NODES }, () => 0); // the array itself is one more
    expect(serializeToolOutput(values)).toEqual({
      ok: false,
      message: `output contains more than ${Limits.MAX_NODES} values at $[${Limits.MAX_NODES - 1}]`,
    });
  });
});

describe("rule 11 — work budgets: each output budget is configurable", () => {
  test("maxDepth", () => {
    expect(serializeToolOutput([[1]], { maxDepth: 2 })).toEqual({ ok: true, content: "[[1]]" });
    expect(refusedWith([[[1]]], { maxDepth: 2 })).toBe("output contains nesting deeper than 2 containers at $[0][0]");
  });

  test("maxNodes", () => {
    expect(serializeToolOutput({ a: 1, b: 2 }, { maxNodes: 3 })).toEqual({ ok: true, content: '{"a":1,"b":2}' });
    expect(refusedWith({ a: 1, b: 2, c: 3 }, { maxNodes: 3 })).toBe("output contains more than 3 values at $.c");
  });

  test("maxMembers counts omitted members before reading them", () => {
    expect(serializeToolOutput({ a: 1, f: () => 1 }, { maxMembers: 2 })).toEqual({ ok: true, content: '{"a":1}' });
    expect(refusedWith({ a: 1, f: () => 1, g: undefined }, { maxMembers: 2 })).toBe("output contains more than 2 collection members at $");
    expect(
      refusedWith(
        new Map([
          [1, 2],
          [3, 4],
          [5, 6],
        ]),
        { maxMembers: 2 },
      ),
    ).toBe("output contains more than 2 collection members at $");
  });

  test("maxStringCodePoints cuts strings and keys (never a surrogate pair) and marks the content", () => {
    const outcome = serializeToolOutput({ "😀😀😀": "😀😀😀" }, { maxStringCodePoints: 2 });
    expect(outcome).toEqual({ ok: true, content: `{"😀😀":"😀😀"}${Limits.TRUNCATION_MARKER}` });
  });

  test("maxBigIntBits", () => {
    expect(serializeToolOutput(255n, { maxBigIntBits: 8 })).toEqual({ ok: true, content: "255" });
    expect(refusedWith({ n: 256n }, { maxBigIntBits: 8 })).toBe("output contains a BigInt larger than 8 bits at $.n");
    expect(refusedWith({ n: -256n }, { maxBigIntBits: 8 })).toBe("output contains a BigInt larger than 8 bits at $.n");
  });

  test("maxContentCodePoints: exactly that many code points, ending with the marker", () => {
    const capped = serializeToolOutput("😀".repeat(100), { maxContentCodePoints: 40 });
    if (!capped.ok) throw new Error("refused");
    expect(codePoints(capped.content)).toBe(40);
    expect(capped.content).toBe("😀".repeat(40 - Limits.TRUNCATION_MARKER.length) + Limits.TRUNCATION_MARKER);
    expect(serializeToolOutput("x".repeat(40), { maxContentCodePoints: 40 })).toEqual({ ok: true, content: "x".repeat(40) });
    const large = serializeToolOutput("x".repeat(10_000), { maxContentCodePoints: 10_000, maxStringCodePoints: 10_000 });
    expect(large).toEqual({ ok: true, content: "x".repeat(10_000) });
  });

  test("text past the content cap is not scanned, yet the content is the same as a full rendering's", () => {
    // A key placed before a huge member must still be shown; members after the cut are refused as usual.
    const value = { a: "x".repeat(50_000), b: "y".repeat(10), c: { d: "z" } };
    const outcome = serializeToolOutput(value, { maxStringCodePoints: 100_000 });
    const full = JSON.stringify(value);
    const keep = Limits.MAX_CONTENT_CODE_POINTS - Limits.TRUNCATION_MARKER.length;
    expect(outcome).toEqual({ ok: true, content: full.slice(0, keep) + Limits.TRUNCATION_MARKER });
    const keyFirst = serializeToolOutput({ key: "x".repeat(50_000) }, { maxStringCodePoints: 100_000 });
    expect(keyFirst.ok && keyFirst.content.startsWith('{"key":"xxx')).toBe(true);
    const proxyLater = { a: "x".repeat(50_000), z: new Proxy({}, {}) };
    expect(refusedWith(proxyLater, { maxStringCodePoints: 100_000 })).toBe("output contains a Proxy at $.z");
  });
});

describe("rule 11 — work budgets: output budgets are validated up front", () => {
  test.each([
    ["an unknown budget", { maxValues: 3 }, ' has an unknown budget "maxValues"'],
    ["zero", { maxNodes: 0 }, ".maxNodes must be an integer from 1 to 1000000 (got the number 0)"],
    ["past the upper bound", { maxDepth: 257 }, ".maxDepth must be an integer from 1 to 256 (got the number 257)"],
    [
      "a content cap the marker cannot fit in",
      { maxContentCodePoints: 24 },
      ".maxContentCodePoints must be an integer from 25 to 16777216 (got the number 24)",
    ],
    ["NaN", { maxMembers: Number.NaN }, ".maxMembers must be an integer from 1 to 1000000 (got the number NaN)"],
    ["a symbol key", { [Symbol("x")]: 1 }, " has an unknown budget (a symbol)"],
  ])("%s: INVALID_ARGUMENT for serializeToolOutput and an executor, INVALID_TOOL_DEFINITION for a tool", (_label, budgets, message) => {
    expect(() => serializeToolOutput(1, budgets as OutputBudgets)).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT", message: expect.stringContaining(`budgets${message}`) }),
    );
    expect(() => new InProcessToolExecutor(new ToolRegistry(), { outputBudgets: budgets as OutputBudgets })).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT", message: expect.stringContaining(`options.outputBudgets${message}`) }),
    );
    const definition = { name: "t", description: "d", validate: () => ({ ok: true as const, value: 1 }), execute: () => 1, budgets };
    expect(() => defineTool(definition as never)).toThrow(
      expect.objectContaining({ code: "INVALID_TOOL_DEFINITION", message: expect.stringContaining(`tool "t": budgets${message}`) }),
    );
  });

  test("a tool's budgets are read once as an own property; an inherited one is not read", () => {
    let reads = 0;
    const base = { name: "t", description: "d", validate: () => ({ ok: true as const, value: 1 }), execute: () => [1, 2, 3] };
    const withGetter = Object.defineProperty({ ...base }, "budgets", {
      get() {
        reads += 1;
        return { maxNodes: 2 };
      },
      enumerable: true,
    });
    const tool = defineTool(withGetter);
    expect(reads).toBe(1);
    expect(tool.budgets).toEqual({ maxNodes: 2 });
    expect(Object.isFrozen(tool.budgets)).toBe(true);
    let inheritedReads = 0;
    const proto = Object.defineProperty({}, "budgets", {
      get() {
        inheritedReads += 1;
        return { maxNodes: 1 };
      },
    });
    const inheriting = Object.assign(Object.create(proto) as object, base);
    expect("budgets" in defineTool(inheriting as never)).toBe(false);
    expect(inheritedReads).toBe(0);
  });

  test("the tool keeps a copy: changing the caller's budgets object afterwards changes nothing", async () => {
    const budgets = { maxNodes: 2 };
    const tool = defineTool({
      name: "three",
      description: "d",
      validate: (a: unknown) => ({ ok: true as const, value: a }),
      execute: () => [1, 2, 3],
      budgets,
    });
    budgets.maxNodes = 100;
    const result = await executeToolCall(new ToolRegistry([tool]), call("three"), neverAborted());
    expect(errorOf(result).message).toBe("output contains more than 2 values at $[1]");
  });
});

describe("rule 11 — work budgets: executor budgets, and the tool's over them", () => {
  const wide = defineTool({ name: "wide", description: "d", validate: (a) => ({ ok: true, value: a }), execute: () => [1, 2, 3, 4] });
  const ownBudget = defineTool({ ...wide, name: "ownBudget", budgets: { maxNodes: 10 } });
  const registry = new ToolRegistry([wide, ownBudget]);

  test("an executor's outputBudgets apply to its calls; a tool's own budget field wins over it", async () => {
    const executor = new InProcessToolExecutor(registry, { outputBudgets: { maxNodes: 3 } });
    expect(errorOf(await executor.executeToolCall(call("wide"), neverAborted()))).toEqual({
      code: "TOOL_OUTPUT_SERIALIZATION_FAILED",
      message: "output contains more than 3 values at $[2]",
    });
    expect((await executor.executeToolCall(call("ownBudget"), neverAborted())).content).toBe("[1,2,3,4]");
    // The free function and a default executor keep the defaults.
    expect((await executeToolCall(registry, call("wide"), neverAborted())).content).toBe("[1,2,3,4]");
    expect((await new InProcessToolExecutor(registry).executeToolCall(call("wide"), neverAborted())).content).toBe("[1,2,3,4]");
    await executor.close();
  });

  test("the content cap applies to error content too", async () => {
    const failing = defineTool({
      ...wide,
      name: "fails",
      execute: () => {
        throw new Error("e".repeat(500));
      },
      budgets: { maxContentCodePoints: 80 },
    });
    const result = await executeToolCall(new ToolRegistry([failing]), call("fails"), neverAborted());
    expect(result.isError).toBe(true);
    expect(codePoints(result.content)).toBe(80);
    expect(result.content.startsWith('{"error":{"code":"TOOL_EXECUTION_FAILED"')).toBe(true);
  });

  test("the member budget default is documented by its constant", () => {
    const omitted = Object.fromEntries(Array.from({ length: Limits.MAX_COLLECTION_VISITS }, (_, index) => [`f${index}`, () => index]));
    expect(serializeToolOutput(omitted)).toEqual({ ok: true, content: "{}" });
  });
});

// Issue 12, item 7: a refused budget value is named through describeValue ("got null", not "got object").
describe("a budget that is not a number is named with its article", () => {
  test.each([
    ["null", null, "(got null)"],
    ["an array", [8], "(got an array)"],
    ["a bigint", 8n, "(got a bigint)"],
    ["a symbol", Symbol("8"), "(got a symbol)"],
    ["a function", () => 8, "(got a function)"],
    ["a fraction", 1.5, "(got the number 1.5)"],
  ])("maxDepth set to %s", (_label, maxDepth, got) => {
    expect(() => serializeToolOutput(1, { maxDepth } as unknown as OutputBudgets)).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT", message: `budgets.maxDepth must be an integer from 1 to 256 ${got}` }),
    );
  });
  test("a refused argument budget reads the same way", () => {
    expect(() => new InProcessToolExecutor(new ToolRegistry(), { argumentBudgets: { maxDepth: null } } as never)).toThrow(
      expect.objectContaining({ message: "options.argumentBudgets.maxDepth must be an integer from 1 to 1024 (got null)" }),
    );
  });
});
