// Type-level tests: `execute`'s arguments are inferred from `parameters` (zod 4, valibot 1,
// TypeBox through typeboxParameters), without annotation or cast. `npm test` type-checks
// this file (tsc --noEmit); vitest runs it too, so each inferred tool is also called once.
import { defineTool, executeToolCall, type Tool, type ToolContext, ToolRegistry } from "toolgate";
import { typeboxParameters } from "toolgate/typebox";
import Type from "typebox";
import * as v from "valibot";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";

const signal = () => new AbortController().signal;

describe("rule 1 — definition snapshot: schema-first defineTool infers execute's arguments", () => {
  it("zod 4: the schema's output type (transforms and defaults applied)", async () => {
    const tool = defineTool({
      name: "order",
      description: "Places an order.",
      parameters: z.object({
        items: z.array(z.object({ sku: z.string(), qty: z.number().int() })),
        note: z.string().optional(),
        rush: z.boolean().default(false),
        code: z.string().transform((code) => code.length),
      }),
      execute: (args, context) => {
        expectTypeOf(args).toEqualTypeOf<{
          items: { sku: string; qty: number }[];
          note?: string | undefined;
          rush: boolean;
          code: number;
        }>();
        expectTypeOf(context).toEqualTypeOf<ToolContext>();
        return args.items.length + args.code;
      },
    });
    expectTypeOf(tool).toEqualTypeOf<
      Tool<{ items: { sku: string; qty: number }[]; note?: string | undefined; rush: boolean; code: number }, number, "order">
    >();
    const result = await executeToolCall(
      new ToolRegistry([tool]),
      { type: "toolCall", id: "c1", name: "order", arguments: { items: [{ sku: "a", qty: 1 }], code: "xyz" } },
      signal(),
    );
    expect(result.content).toBe("4");
  });

  it("valibot 1: the schema's output type", async () => {
    const tool = defineTool({
      name: "greet",
      description: "Greets.",
      parameters: v.object({ name: v.string(), times: v.optional(v.number(), 1) }),
      jsonSchema: { type: "object", properties: { name: { type: "string" }, times: { type: "number" } }, required: ["name"] },
      execute: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ name: string; times: number }>();
        return `${args.name}×${args.times}`;
      },
    });
    const result = await executeToolCall(
      new ToolRegistry([tool]),
      { type: "toolCall", id: "c1", name: "greet", arguments: { name: "ada" } },
      signal(),
    );
    expect(result.content).toBe("ada×1");
  });

  it("TypeBox 1.x through typeboxParameters: Static<typeof schema>", async () => {
    const tool = defineTool({
      name: "add",
      description: "Adds.",
      parameters: typeboxParameters(Type.Object({ left: Type.Number(), right: Type.Number(), label: Type.Optional(Type.String()) })),
      execute: ({ left, right, label }) => {
        expectTypeOf(left).toEqualTypeOf<number>();
        expectTypeOf(label).toEqualTypeOf<string | undefined>();
        return left + right;
      },
    });
    expectTypeOf(tool.execute).returns.toEqualTypeOf<number | Promise<number>>();
    const result = await executeToolCall(
      new ToolRegistry([tool]),
      { type: "toolCall", id: "c1", name: "add", arguments: { left: 2, right: 3 } },
      signal(),
    );
    expect(result.content).toBe("5");
  });

  it("the validate form still infers from validate, and a wrong use does not compile", () => {
    const tool = defineTool({
      name: "echo",
      description: "Echoes.",
      validate: (args: unknown) => ({ ok: true as const, value: String(args) }),
      execute: (text) => {
        expectTypeOf(text).toEqualTypeOf<string>();
        return text;
      },
    });
    expectTypeOf(tool).toEqualTypeOf<Tool<string, string, "echo">>();
    defineTool({
      name: "wrong",
      description: "Uses an argument the schema does not have.",
      parameters: z.object({ q: z.string() }),
      execute: (args) => {
        // @ts-expect-error -- `q` is a string, not a number
        const n: number = args.q;
        // @ts-expect-error -- there is no `missing` argument
        return n + args.missing;
      },
    });
    expect(tool.name).toBe("echo");
  });
});
