// A call's arguments have budgets (docs/contract.md, rule 4 — call snapshot; the table:
// docs/guarantees.md): values, depth, string length, total size, checked before the value is
// listed, refused with INVALID_TOOL_CALL naming the budget and the path; configurable per
// executor and per call.
import {
  defineTool,
  executeToolCall,
  executeToolCalls,
  InProcessToolExecutor,
  type JsonValue,
  Limits,
  type ToolCall,
  ToolRegistry,
} from "toolgate";
import { describe, expect, test } from "vitest";
import { contractError } from "../support/assertions.js";
import { call, neverAborted } from "../support/helpers.js";

const echo = defineTool({
  name: "echo",
  description: "Returns its arguments.",
  validate: (args) => ({ ok: true, value: args }),
  execute: (args) => ({ received: true, keys: Object.keys(args as object).length }),
});
const registry = new ToolRegistry([echo]);

/** The ToolContractError a call rejects with (fails the test when it resolves). */
/** The refusal's code and message, as a plain object the tests compare whole. */
async function refusal(pending: Promise<unknown>): Promise<{ code: string; message: string }> {
  const { code, message } = await contractError(pending);
  return { code, message };
}

const run = (args: Record<string, unknown>, options?: Parameters<typeof executeToolCall>[3]) =>
  executeToolCall(registry, call("echo", args as Record<string, JsonValue>), neverAborted(), options);

describe("rule 4 — call snapshot: the argument budgets refuse before listing", () => {
  test("a 10^6-element array is refused by its length, without reading an element", async () => {
    const huge = new Array(1_000_000).fill(1);
    let reads = 0;
    Object.defineProperty(huge, 999_999, {
      get() {
        reads += 1;
        return 1;
      },
      enumerable: true,
    });
    const started = performance.now();
    const error = await refusal(run({ items: huge }));
    expect(performance.now() - started).toBeLessThan(250); // generous: the refusal reads one length
    expect(reads).toBe(0);
    expect(error).toEqual({
      code: "INVALID_TOOL_CALL",
      message: `arguments.items exceeds the argument budget: 1000000 elements do not fit in ${Limits.MAX_ARGUMENT_NODES} values (2 counted) (argument budget maxNodes)`,
    });
  });

  test("a 100k-key object is refused before any of its values is read", async () => {
    const wide: Record<string, unknown> = {};
    for (let index = 0; index < 100_000; index += 1) wide[`k${index}`] = index;
    let reads = 0;
    Object.defineProperty(wide, "trap", {
      get() {
        reads += 1;
        return 1;
      },
      enumerable: true,
    });
    const error = await refusal(run({ nested: { wide } }));
    expect(reads).toBe(0);
    expect(error.code).toBe("INVALID_TOOL_CALL");
    expect(error.message).toBe(
      `arguments.nested.wide exceeds the argument budget: 100001 keys do not fit in ${Limits.MAX_ARGUMENT_NODES} values (3 counted) (argument budget maxNodes)`,
    );
  });

  test("values are counted across the whole call: many small arrays add up", async () => {
    const rows = Array.from({ length: 10 }, () => [1, 2, 3, 4]); // the root, rows, 10 * (1 + 4): 52 values
    expect((await run({ rows }, { argumentBudgets: { maxNodes: 52 } })).isError).toBe(false);
    const error = await refusal(run({ rows }, { argumentBudgets: { maxNodes: 51 } }));
    // 48 values are counted when rows[9] is reached: its 4 elements cannot fit, and are not read.
    expect(error.message).toBe(
      "arguments.rows[9] exceeds the argument budget: 4 elements do not fit in 51 values (48 counted) (argument budget maxNodes)",
    );
    const scalars = await refusal(run({ a: 1, b: 2, c: 3 }, { argumentBudgets: { maxNodes: 3 } }));
    expect(scalars.message).toBe(
      "arguments exceeds the argument budget: 3 keys do not fit in 3 values (1 counted) (argument budget maxNodes)",
    );
  });

  test("depth: the default is 64 levels, configurable", async () => {
    const nest = (levels: number): JsonValue => {
      let value: JsonValue = 0;
      for (let level = 0; level < levels; level += 1) value = [value];
      return value;
    };
    // The arguments object itself is level 0: 63 more containers fit in 64 levels.
    expect((await run({ deep: nest(Limits.MAX_ARGUMENT_DEPTH - 1) })).isError).toBe(false);
    const error = await refusal(run({ deep: nest(Limits.MAX_ARGUMENT_DEPTH) }));
    expect(error.message).toContain(`nests deeper than ${Limits.MAX_ARGUMENT_DEPTH} levels (argument budget maxDepth)`);
    const shallow = await refusal(run({ deep: nest(3) }, { argumentBudgets: { maxDepth: 3 } }));
    expect(shallow.message).toBe("arguments.deep[0][0] nests deeper than 3 levels (argument budget maxDepth)");
  });

  test("string length counts code units of values and keys, with the path", async () => {
    const options = { argumentBudgets: { maxStringLength: 8 } };
    expect((await run({ text: "12345678" }, options)).isError).toBe(false);
    expect((await refusal(run({ list: ["ok", "123456789"] }, options))).message).toBe(
      "arguments.list[1] exceeds the argument budget: has a string of 9 code units (more than 8) (argument budget maxStringLength)",
    );
    expect((await refusal(run({ abcdefghi: 1 }, options))).message).toBe(
      "arguments.abcdefghi exceeds the argument budget: has a string of 9 code units (more than 8) (argument budget maxStringLength)",
    );
  });

  test("total size: code units of strings and keys plus one per value", async () => {
    // root (1) + key "a" (1) + value (1) + 10 code units = 13
    const args = { a: "0123456789" };
    expect((await run(args, { argumentBudgets: { maxTotalSize: 13 } })).isError).toBe(false);
    expect((await refusal(run(args, { argumentBudgets: { maxTotalSize: 12 } }))).message).toBe(
      "arguments.a exceeds the argument budget: more than 12 in total size (argument budget maxTotalSize)",
    );
  });

  test("the defaults admit a real call: 500 rows of 10 fields and a 100 KB document", async () => {
    const rows = Array.from({ length: 500 }, (_, row) => Object.fromEntries(Array.from({ length: 10 }, (_, field) => [`f${field}`, row])));
    expect((await run({ rows, document: "x".repeat(100_000) })).isError).toBe(false);
  });
});

describe("rule 4 — call snapshot: argument budgets are configurable per executor, per call, and validated up front", () => {
  test("an executor's budgets apply to every call; a call's own budgets override them", async () => {
    const executor = new InProcessToolExecutor(registry, { argumentBudgets: { maxNodes: 3 } });
    const small = call("echo", { a: 1, b: 2 }); // 3 values
    const large = call("echo", { a: 1, b: 2, c: 3 }); // 4 values
    expect((await executor.executeToolCall(small, neverAborted())).isError).toBe(false);
    expect((await refusal(executor.executeToolCall(large, neverAborted()))).message).toContain("argument budget maxNodes");
    expect((await executor.executeToolCall(large, neverAborted(), { argumentBudgets: { maxNodes: 4 } })).isError).toBe(false);
    // ...the override is per field: the executor's other budgets still hold.
    await executor.close();
  });

  test("a batch applies its options' budgets to every call, before any tool runs", async () => {
    let runs = 0;
    const counted = defineTool({ ...echo, name: "counted", execute: () => (runs += 1) });
    const calls: ToolCall[] = [call("counted", { a: 1 }, "first"), call("counted", { list: [1, 2, 3, 4, 5] }, "second")];
    const error = await refusal(executeToolCalls(new ToolRegistry([counted]), calls, neverAborted(), { argumentBudgets: { maxNodes: 5 } }));
    expect(error.message).toContain("arguments.list exceeds the argument budget");
    expect(runs).toBe(0);
  });

  test.each([
    ["an unknown budget", { maxNode: 3 }, 'options.argumentBudgets has an unknown budget "maxNode"'],
    ["zero", { maxNodes: 0 }, "options.argumentBudgets.maxNodes must be an integer from 1 to 10000000 (got the number 0)"],
    [
      "past the upper bound",
      { maxDepth: 1025 },
      "options.argumentBudgets.maxDepth must be an integer from 1 to 1024 (got the number 1025)",
    ],
    [
      "a fraction",
      { maxTotalSize: 1.5 },
      "options.argumentBudgets.maxTotalSize must be an integer from 1 to 2147483647 (got the number 1.5)",
    ],
    [
      "a string",
      { maxStringLength: "10" },
      "options.argumentBudgets.maxStringLength must be an integer from 1 to 536870888 (got a string)",
    ],
    ["not an object", 5, "options.argumentBudgets must be an object of budgets (got the number 5)"],
  ])("%s is INVALID_ARGUMENT naming the option, per call and per executor", async (_label, budgets, message) => {
    const perCall = await refusal(run({}, { argumentBudgets: budgets } as never));
    expect(perCall.code).toBe("INVALID_ARGUMENT");
    expect(perCall.message).toContain(message);
    let thrown: unknown;
    try {
      new InProcessToolExecutor(registry, { argumentBudgets: budgets } as never);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringContaining(message) });
  });

  test("a budget behind a getter is refused without calling it", async () => {
    let reads = 0;
    const budgets = Object.defineProperty({}, "maxNodes", {
      get() {
        reads += 1;
        return 5;
      },
      enumerable: true,
    });
    const error = await refusal(run({}, { argumentBudgets: budgets }));
    expect(error).toEqual({
      code: "INVALID_ARGUMENT",
      message: "options.argumentBudgets.maxNodes must be a data property, not an accessor",
    });
    expect(reads).toBe(0);
  });
});
