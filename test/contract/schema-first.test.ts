// Schema-first definitions: defineTool({ name, description, parameters, execute }) with a
// Standard Schema (zod 4, valibot 1) or TypeBox (typeboxParameters): exactly one of
// validate / parameters, async schemas refused up front where the library says so, issues
// listed with `$` paths and bounded, and the schema captured once at definition time.
import { defineTool, executeToolCall, isToolContractError, ToolRegistry } from "toolgate";
import { typeboxParameters } from "toolgate/typebox";
import Type from "typebox";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { call, errorOf, neverAborted } from "../support/helpers.js";

function definitionError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(isToolContractError(error)).toBe(true);
    expect((error as { code: string }).code).toBe("INVALID_TOOL_DEFINITION");
    return (error as Error).message;
  }
  throw new Error("expected INVALID_TOOL_DEFINITION");
}

const Order = z.object({ items: z.array(z.object({ sku: z.string(), qty: z.number() })) });

describe("rule 1 — definition snapshot: defineTool with parameters", () => {
  it("invalid arguments never reach execute; the model reads each issue with its $ path", async () => {
    const seen: unknown[] = [];
    const tool = defineTool({ name: "order", description: "Orders.", parameters: Order, execute: (args) => seen.push(args) });
    const args = { items: [{ sku: "a", qty: 1 }, { sku: "b", qty: 2 }, { sku: "c", qty: "three" }, { qty: 4 }] };
    const result = await executeToolCall(new ToolRegistry([tool]), call("order", args), neverAborted());
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toEqual({
      code: "TOOL_ARGUMENTS_INVALID",
      message:
        "Invalid arguments (2 issues):\n" +
        "  - $.items[2].qty: Invalid input: expected number, received string\n" +
        "  - $.items[3].sku: Invalid input: expected string, received undefined",
    });
    expect(seen).toEqual([]);
  });

  it("valid arguments: execute receives the schema's output (defaults and transforms applied)", async () => {
    const tool = defineTool({
      name: "shout",
      description: "Shouts.",
      parameters: z.object({ text: z.string().transform((text) => text.toUpperCase()), times: z.number().default(2) }),
      execute: ({ text, times }) => text.repeat(times),
    });
    const result = await executeToolCall(new ToolRegistry([tool]), call("shout", { text: "hi" }), neverAborted());
    expect(result).toMatchObject({ isError: false, content: "HIHI" });
  });

  it("the issue list is bounded: at most 8 lines, the rest counted, every line cut", async () => {
    const tool = defineTool({
      name: "many",
      description: "Many numbers.",
      parameters: z.object({ values: z.array(z.number()) }),
      execute: () => "ran",
    });
    const longKey = "k".repeat(10_000);
    const args = { values: Array.from({ length: 500 }, () => "x") };
    const result = await executeToolCall(new ToolRegistry([tool]), call("many", args), neverAborted());
    const lines = errorOf(result).message.split("\n");
    expect(lines[0]).toBe("Invalid arguments (500 issues):");
    expect(lines).toHaveLength(1 + 8 + 1);
    expect(lines.at(-1)).toBe("  - … and 492 more");
    const keyed = defineTool({ name: "keyed", description: "Records.", parameters: z.record(z.string(), z.number()), execute: () => 1 });
    const cut = await executeToolCall(new ToolRegistry([keyed]), call("keyed", { [longKey]: "x" }), neverAborted());
    const message = errorOf(cut).message;
    expect(message.length).toBeLessThan(500);
    expect(message).toContain(`  - $.${"k".repeat(126)}…: `);
  });

  it("paths: identifier keys with dots, other keys quoted, array indexes in brackets", async () => {
    const tool = defineTool({
      name: "paths",
      description: "Paths.",
      parameters: z.object({ "a b": z.array(z.number()), ok: z.object({ $x: z.number() }) }),
      execute: () => 1,
    });
    const result = await executeToolCall(new ToolRegistry([tool]), call("paths", { "a b": [1, "2"], ok: { $x: "y" } }), neverAborted());
    expect(errorOf(result).message).toContain('  - $["a b"][1]: ');
    expect(errorOf(result).message).toContain("  - $.ok.$x: ");
  });

  it("valibot: path segments ({ key }) read the same way", async () => {
    const tool = defineTool({
      name: "v",
      description: "Valibot.",
      parameters: v.object({ items: v.array(v.object({ qty: v.number() })) }),
      execute: () => 1,
    });
    const result = await executeToolCall(new ToolRegistry([tool]), call("v", { items: [{ qty: 1 }, { qty: "2" }] }), neverAborted());
    expect(errorOf(result).message).toBe(
      'Invalid arguments (1 issue):\n  - $.items[1].qty: Invalid type: Expected number but received "2"',
    );
  });

  it("TypeBox through typeboxParameters: array indexes told from object keys by the value", async () => {
    const tool = defineTool({
      name: "tb",
      description: "TypeBox.",
      parameters: typeboxParameters(
        Type.Object({ items: Type.Array(Type.Object({ qty: Type.Number() })), byKey: Type.Record(Type.String(), Type.Number()) }),
      ),
      execute: ({ items }) => items.length,
    });
    const registry = new ToolRegistry([tool]);
    const bad = await executeToolCall(registry, call("tb", { items: [{ qty: 1 }, { qty: "x" }], byKey: { "2": "y" } }), neverAborted());
    expect(errorOf(bad).message).toContain("  - $.items[1].qty: must be number");
    expect(errorOf(bad).message).toContain('  - $["2"]: must be number'.replace("$", "$.byKey"));
    const good = await executeToolCall(registry, call("tb", { items: [{ qty: 1 }], byKey: {} }), neverAborted());
    expect(good).toMatchObject({ isError: false, content: "1" });
  });

  it("typeboxParameters with coerce: execute receives the converted copy", async () => {
    const tool = defineTool({
      name: "tb",
      description: "TypeBox.",
      parameters: typeboxParameters(Type.Object({ n: Type.Number() }), { coerce: true }),
      execute: ({ n }) => n + 1,
    });
    const result = await executeToolCall(new ToolRegistry([tool]), call("tb", { n: "41" }), neverAborted());
    expect(result.content).toBe("42");
  });
});

describe("rule 1 — definition snapshot: exactly one of validate and parameters", () => {
  const execute = () => 1;
  const validate = (args: unknown) => ({ ok: true as const, value: args });

  it("both is INVALID_TOOL_DEFINITION naming the tool", () => {
    const definition = { name: "both", description: "d", validate, parameters: Order, execute };
    expect(definitionError(() => defineTool(definition as never))).toBe('tool "both": give either "validate" or "parameters", not both');
  });

  it("neither is INVALID_TOOL_DEFINITION naming the tool", () => {
    expect(definitionError(() => defineTool({ name: "none", description: "d", execute } as never))).toMatch(
      /^tool "none": needs an own "validate" function or an own "parameters" schema/,
    );
  });

  it("an inherited parameters is not read (its getter never runs): the definition has neither", () => {
    let reads = 0;
    const proto = {
      get parameters() {
        reads += 1;
        return Order;
      },
    };
    const definition = Object.assign(Object.create(proto), { name: "inherited", description: "d", execute });
    definitionError(() => defineTool(definition));
    expect(reads).toBe(0);
  });

  it("a raw TypeBox schema is refused with a pointer to typeboxParameters", () => {
    const definition = { name: "raw", description: "d", parameters: Type.Object({}), execute };
    expect(definitionError(() => defineTool(definition as never))).toMatch(/typeboxParameters\(schema\) from "toolgate\/typebox"/);
  });

  it("something that is not a Standard Schema is refused at definition time", () => {
    for (const parameters of [{}, { "~standard": { version: 2, validate } }, { "~standard": { version: 1 } }, 42, new Proxy({}, {})]) {
      expect(definitionError(() => defineTool({ name: "odd", description: "d", parameters, execute } as never))).toMatch(
        /^tool "odd": parameters: expected a Standard Schema v1/,
      );
    }
  });

  it("a schema whose ~standard getter throws is INVALID_TOOL_DEFINITION with the cause", () => {
    const boom = new Error("boom");
    const parameters = {
      get "~standard"() {
        throw boom;
      },
    };
    try {
      defineTool({ name: "throws", description: "d", parameters, execute } as never);
      expect.unreachable();
    } catch (error) {
      expect((error as { code: string }).code).toBe("INVALID_TOOL_DEFINITION");
      expect((error as Error).cause).toBe(boom);
    }
  });

  it("an async valibot schema is refused at definition time, before any call", () => {
    const parameters = v.objectAsync({ name: v.string() });
    expect(definitionError(() => defineTool({ name: "async", description: "d", parameters, execute } as never))).toMatch(
      /async schemas are not supported/,
    );
  });

  it("zod's async refinement (not known up front) gives TOOL_VALIDATION_FAILED at the call, no unhandled rejection", async () => {
    const tool = defineTool({
      name: "asyncRefine",
      description: "d",
      parameters: z.object({ n: z.number() }).refine(async () => true),
      execute,
    });
    const result = await executeToolCall(new ToolRegistry([tool]), call("asyncRefine", { n: 1 }), neverAborted());
    expect(errorOf(result).code).toBe("TOOL_VALIDATION_FAILED");
    expect(errorOf(result).message).toMatch(/^async schemas are not supported/);
  });
});

describe("rule 1 — definition snapshot: defineTool captures the schema once", () => {
  it("reads ~standard and its validate once; later changes to the schema object change nothing", async () => {
    let standardReads = 0;
    let validateReads = 0;
    const calls: unknown[] = [];
    const props = {
      version: 1,
      vendor: "test",
      get validate() {
        validateReads += 1;
        return (value: unknown) => {
          calls.push(value);
          return { value: "original" };
        };
      },
    };
    const schema: Record<string, unknown> = {
      get "~standard"() {
        standardReads += 1;
        return props;
      },
    };
    const tool = defineTool({ name: "once", description: "d", parameters: schema as never, execute: (value: unknown) => value });
    expect([standardReads, validateReads]).toEqual([1, 1]);
    Object.defineProperty(schema, "~standard", { value: { version: 1, vendor: "x", validate: () => ({ value: "swapped" }) } });
    const result = await executeToolCall(new ToolRegistry([tool]), call("once", { a: 1 }), neverAborted());
    expect(result.content).toBe("original");
    expect(calls).toEqual([{ a: 1 }]);
    expect([standardReads, validateReads]).toEqual([1, 1]);
  });

  it("a definition's own fields are each read once, getters included", () => {
    const reads: string[] = [];
    const definition = {};
    for (const [key, value] of Object.entries({ name: "counted", description: "d", parameters: Order, execute: () => 1 })) {
      Object.defineProperty(definition, key, {
        enumerable: true,
        get() {
          reads.push(key);
          return value;
        },
      });
    }
    defineTool(definition as never);
    expect(reads.sort()).toEqual(["description", "execute", "name", "parameters"]);
  });

  it("the validator is called with the library's props as this, not through Function.prototype.call", async () => {
    // A hand-made Standard Schema: zod itself calls Function.prototype methods inside.
    const seenThis: unknown[] = [];
    const props = {
      version: 1 as const,
      vendor: "test",
      validate(this: unknown, value: unknown) {
        seenThis.push(this);
        return { value: value as { items: unknown[] } };
      },
    };
    const tool = defineTool({
      name: "p",
      description: "d",
      parameters: { "~standard": props },
      execute: (args) => (args as { items: unknown[] }).items.length,
    });
    const originalCall = Function.prototype.call;
    const originalApply = Function.prototype.apply;
    Function.prototype.call = () => {
      throw new Error("patched call");
    };
    Function.prototype.apply = () => {
      throw new Error("patched apply");
    };
    let result: Awaited<ReturnType<typeof executeToolCall>>;
    try {
      result = await executeToolCall(new ToolRegistry([tool]), call("p", { items: [] }), neverAborted());
    } finally {
      Function.prototype.call = originalCall;
      Function.prototype.apply = originalApply;
    }
    expect(result).toMatchObject({ isError: false, content: "0" });
    expect(seenThis).toEqual([props]);
  });
  it("the schema's result is read as data even with `then` and `issues` planted on Object.prototype (no getter runs)", async () => {
    // A hand-made Standard Schema returning the common `{ value }`: its result has neither key of its own.
    const props = { version: 1 as const, vendor: "test", validate: (value: unknown) => ({ value }) };
    const tool = defineTool({ name: "p", description: "d", parameters: { "~standard": props }, execute: () => "ran" });
    const registry = new ToolRegistry([tool]);
    let thenReads = 0;
    // biome-ignore lint/suspicious/noThenProperty: a `then` getter planted on Object.prototype is the input under test.
    Object.defineProperty(Object.prototype, "then", {
      configurable: true,
      get() {
        thenReads += 1;
        return undefined;
      },
    });
    let withThen: Awaited<ReturnType<typeof executeToolCall>>;
    try {
      withThen = await executeToolCall(registry, call("p", { n: 1 }), neverAborted());
    } finally {
      delete (Object.prototype as { then?: unknown }).then;
    }
    expect(withThen).toMatchObject({ isError: false, content: "ran" });
    expect(thenReads).toBe(0);
    // An inherited data `issues` is read as readDataProperty reads it: the arguments are refused with it.
    Object.defineProperty(Object.prototype, "issues", { configurable: true, value: [{ message: "planted", path: [] }] });
    let withIssues: Awaited<ReturnType<typeof executeToolCall>>;
    try {
      withIssues = await executeToolCall(registry, call("p", { n: 1 }), neverAborted());
    } finally {
      delete (Object.prototype as { issues?: unknown }).issues;
    }
    expect(withIssues.isError).toBe(true);
    expect(errorOf(withIssues)).toMatchObject({ code: "TOOL_ARGUMENTS_INVALID" });
    expect(errorOf(withIssues).message).toContain("planted");
  });
});
