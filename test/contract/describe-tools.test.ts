// describeTools: frozen { name, description, parameters } entries with a JSON Schema
// (draft 2020-12) from zod's Standard JSON Schema, TypeBox (without its markers), an
// explicit jsonSchema, or a validatorFromTypeBox validator; a clear error otherwise.
import { defineTool, describeTools, InProcessToolExecutor, isToolContractError, ToolRegistry } from "toolgate";
import { typeboxParameters, validatorFromTypeBox } from "toolgate/typebox";
import Type from "typebox";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { z } from "zod";

const execute = () => 1;

function contractError(run: () => unknown): { code: string; message: string } {
  try {
    run();
  } catch (error) {
    expect(isToolContractError(error)).toBe(true);
    return error as { code: string; message: string };
  }
  throw new Error("expected a ToolContractError");
}

describe("rule 1 — definition snapshot: describeTools", () => {
  it("zod 4: the schema's own JSON Schema (draft 2020-12), frozen all the way down", () => {
    const registry = new ToolRegistry([
      defineTool({
        name: "order",
        description: "Orders.",
        parameters: z.object({ sku: z.string(), qty: z.number().int().min(1) }),
        execute,
      }),
    ]);
    const [entry, ...rest] = describeTools(registry);
    expect(rest).toEqual([]);
    expect(entry).toEqual({
      name: "order",
      description: "Orders.",
      parameters: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: { sku: { type: "string" }, qty: { type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER } },
        required: ["sku", "qty"],
      },
    });
    expect(Object.isFrozen(entry)).toBe(true);
    expect(Object.isFrozen(entry?.parameters)).toBe(true);
    expect(Object.isFrozen((entry?.parameters as { properties: object } | undefined)?.properties)).toBe(true);
    // made once, then the same frozen object
    expect(describeTools(registry)[0]?.parameters).toBe(entry?.parameters);
  });

  it("TypeBox: the schema without its non-enumerable ~kind markers; a later change to the schema changes nothing", () => {
    const schema = Type.Object({ left: Type.Number(), right: Type.Optional(Type.Number()) });
    const registry = new ToolRegistry([
      defineTool({ name: "add", description: "Adds.", parameters: typeboxParameters(schema), execute }),
      defineTool({ name: "sub", description: "Subtracts.", validate: validatorFromTypeBox(schema), execute }),
    ]);
    (schema.properties as Record<string, unknown>).left = Type.String();
    const described = describeTools(registry);
    const expected = { type: "object", required: ["left"], properties: { left: { type: "number" }, right: { type: "number" } } };
    expect(described.map((entry) => entry.parameters)).toEqual([expected, expected]);
    expect(Reflect.ownKeys(described[0]?.parameters ?? {})).toEqual(["type", "required", "properties"]);
  });

  it("an explicit jsonSchema wins, is copied at definition time and frozen", () => {
    const jsonSchema = { type: "object", properties: { name: { type: "string" } } };
    const registry = new ToolRegistry([
      { name: "greet", description: "Greets.", parameters: v.object({ name: v.string() }), jsonSchema, execute },
      { name: "raw", description: "Raw.", validate: (args: unknown) => ({ ok: true as const, value: args }), jsonSchema, execute },
    ]);
    jsonSchema.properties.name.type = "number";
    const [greet, raw] = describeTools(registry);
    expect(greet?.parameters).toEqual({ type: "object", properties: { name: { type: "string" } } });
    expect(raw?.parameters).toEqual(greet?.parameters);
    expect(greet?.parameters).not.toBe(jsonSchema);
  });

  it("takes any executor through its registry, in registration order", async () => {
    const executor = new InProcessToolExecutor(
      new ToolRegistry([
        defineTool({ name: "b", description: "B.", parameters: z.object({}), execute }),
        defineTool({ name: "a", description: "A.", parameters: z.object({}), execute }),
      ]),
    );
    expect(describeTools(executor).map((entry) => entry.name)).toEqual(["b", "a"]);
    await executor.close();
  });

  it("a tool without a JSON Schema is a clear error naming it, unless withoutSchema is any-object", () => {
    const registry = new ToolRegistry([
      { name: "bare", description: "No schema.", validate: (args: unknown) => ({ ok: true as const, value: args }), execute },
      defineTool({ name: "valibot", description: "valibot has no Standard JSON Schema.", parameters: v.object({}), execute }),
    ]);
    const error = contractError(() => describeTools(registry));
    expect(error.code).toBe("INVALID_TOOL_DEFINITION");
    expect(error.message).toMatch(/^tool "bare" has no JSON Schema/);
    expect(describeTools(registry, { withoutSchema: "any-object" }).map((entry) => entry.parameters)).toEqual([
      { type: "object", additionalProperties: true },
      { type: "object", additionalProperties: true },
    ]);
    expect(contractError(() => describeTools(registry, { withoutSchema: "open" as never })).code).toBe("INVALID_ARGUMENT");
  });

  it("a library that cannot make a JSON Schema: INVALID_TOOL_DEFINITION naming the tool, with the cause", () => {
    const registry = new ToolRegistry([
      defineTool({ name: "dated", description: "zod cannot show a Date.", parameters: z.object({ at: z.date() }), execute }),
    ]);
    const error = contractError(() => describeTools(registry));
    expect(error.message).toBe('tool "dated": its schema library could not make a JSON Schema');
    expect((error as unknown as { cause: unknown }).cause).toBeInstanceOf(Error);
  });

  it("a declared outputSchema is shown as a JSON Schema beside the parameters, frozen, made once; none without one", () => {
    const registry = new ToolRegistry([
      defineTool({
        name: "weather",
        description: "The weather.",
        parameters: z.object({ city: z.string() }),
        outputSchema: z.object({ celsius: z.number(), sky: z.enum(["clear", "cloudy"]) }),
        execute: () => ({ celsius: 20, sky: "clear" }),
      }),
      defineTool({
        name: "count",
        description: "A number.",
        parameters: typeboxParameters(Type.Object({})),
        outputSchema: typeboxParameters(Type.Integer({ minimum: 0 })),
        execute: () => 3,
      }),
      defineTool({ name: "plain", description: "No output schema.", parameters: z.object({}), execute }),
    ]);
    const [weather, count, plain] = describeTools(registry);
    expect(weather?.outputSchema).toEqual({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { celsius: { type: "number" }, sky: { type: "string", enum: ["clear", "cloudy"] } },
      required: ["celsius", "sky"],
      additionalProperties: false,
    });
    expect(Object.isFrozen(weather?.outputSchema)).toBe(true);
    expect(Object.isFrozen((weather?.outputSchema as { properties: object } | undefined)?.properties)).toBe(true);
    expect(describeTools(registry)[0]?.outputSchema).toBe(weather?.outputSchema);
    expect(count?.outputSchema).toEqual({ type: "integer", minimum: 0 });
    expect(plain && "outputSchema" in plain).toBe(false);
    expect(Object.keys(plain ?? {})).toEqual(["name", "description", "parameters"]);
  });

  it("an outputSchema its library cannot describe is left out (the output is still checked); one that fails to is refused", () => {
    const registry = new ToolRegistry([
      defineTool({
        name: "valibot",
        description: "valibot has no Standard JSON Schema.",
        parameters: z.object({}),
        outputSchema: v.object({ ok: v.boolean() }),
        execute,
      }),
    ]);
    const [entry] = describeTools(registry);
    expect(entry && "outputSchema" in entry).toBe(false);
    expect(entry?.parameters).toMatchObject({ type: "object" });
    const dated = new ToolRegistry([
      defineTool({
        name: "dated",
        description: "zod cannot show a Date.",
        parameters: z.object({}),
        outputSchema: z.object({ at: z.date() }),
        execute,
      }),
    ]);
    const error = contractError(() => describeTools(dated));
    expect(error.code).toBe("INVALID_TOOL_DEFINITION");
    expect(error.message).toBe('tool "dated": its schema library could not make a JSON Schema of the output');
  });

  it("hostile generated schemas are refused, never walked through getters or Proxies", () => {
    let getterCalls = 0;
    const hostile = [
      new Proxy({}, {}),
      {
        get type() {
          getterCalls += 1;
          return "object";
        },
      },
      (() => {
        const cyclic: Record<string, unknown> = { type: "object" };
        cyclic.self = cyclic;
        return cyclic;
      })(),
      { type: "object", default: () => 1 },
      { nested: JSON.parse(`${"[".repeat(100)}${"]".repeat(100)}`) },
    ];
    for (const [index, generated] of hostile.entries()) {
      const parameters = {
        "~standard": { version: 1, vendor: "test", validate: (value: unknown) => ({ value }), jsonSchema: { input: () => generated } },
      };
      const registry = new ToolRegistry([defineTool({ name: `t${index}`, description: "d", parameters, execute })]);
      expect(contractError(() => describeTools(registry)).code).toBe("INVALID_TOOL_DEFINITION");
    }
    expect(getterCalls).toBe(0);
  });

  it("the converter is asked for draft 2020-12, and its keys like __proto__ stay plain keys", () => {
    const targets: unknown[] = [];
    const generated = JSON.parse('{"type":"object","__proto__":{"polluted":true}}');
    const parameters = {
      "~standard": {
        version: 1,
        vendor: "test",
        validate: (value: unknown) => ({ value }),
        jsonSchema: {
          input: (options: unknown) => {
            targets.push(options);
            return generated;
          },
        },
      },
    };
    const registry = new ToolRegistry([defineTool({ name: "t", description: "d", parameters, execute })]);
    const schema = describeTools(registry)[0]?.parameters as Record<string, unknown>;
    expect(targets).toEqual([{ target: "draft-2020-12" }]);
    expect(Object.getPrototypeOf(schema)).toBe(Object.prototype);
    expect(Object.hasOwn(schema, "__proto__")).toBe(true);
    expect((schema as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it("refuses a source that is neither a registry nor holds one", () => {
    expect(contractError(() => describeTools({} as never)).code).toBe("INVALID_ARGUMENT");
    expect(contractError(() => describeTools(null as never)).code).toBe("INVALID_ARGUMENT");
  });
});

// Issue 12, item 7: the refused value is named through the one grammar helper (describeValue).
describe("a jsonSchema holding a non-JSON value is refused, naming the value with its article", () => {
  const validate = (args: unknown) => ({ ok: true as const, value: args });
  it.each([
    ["undefined", undefined, 'tool "t": jsonSchema holds undefined, which is not JSON'],
    ["a bigint", 1n, 'tool "t": jsonSchema holds a bigint, which is not JSON'],
    ["a symbol", Symbol("s"), 'tool "t": jsonSchema holds a symbol, which is not JSON'],
    ["a function", () => 1, 'tool "t": jsonSchema holds a function, which is not JSON'],
  ])("%s in an enum", (_label, member, message) => {
    let thrown: unknown;
    try {
      defineTool({ name: "t", description: "d", validate, jsonSchema: { enum: [member] } as never, execute: () => 1 });
    } catch (error) {
      thrown = error;
    }
    expect(isToolContractError(thrown)).toBe(true);
    expect(thrown).toMatchObject({ code: "INVALID_TOOL_DEFINITION", message });
  });
});
