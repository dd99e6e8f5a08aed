// toolgate/typebox: validators from TypeBox 1.x schemas, alone and inside the boundary.

import { executeToolCall, isToolContractError, type ToolContractError, ToolRegistry } from "toolgate";
import { typeBoxSchemaOf, validatorFromTypeBox } from "toolgate/typebox";
import Type from "typebox";
import { Compile } from "typebox/compile";
import { Settings } from "typebox/system";
import { describe, expect, it, vi } from "vitest";

// Counts compilations while still compiling for real.
vi.mock("typebox/compile", async (importOriginal) => {
  const actual = await importOriginal<typeof import("typebox/compile")>();
  return { ...actual, Compile: vi.fn(actual.Compile) };
});

const Add = Type.Object({ left: Type.Number(), right: Type.Number() }, { additionalProperties: false });
const signal = () => new AbortController().signal;

function refusal(decision: ReturnType<ReturnType<typeof validatorFromTypeBox>>): string {
  if (decision.ok) throw new Error("expected the arguments to be refused");
  expect(typeof decision.error).toBe("string");
  return decision.error as string;
}

function contractError(run: () => unknown): ToolContractError {
  try {
    run();
  } catch (error) {
    expect(isToolContractError(error)).toBe(true);
    return error as ToolContractError;
  }
  throw new Error("expected a ToolContractError");
}

describe("docs/adapters.md — Validators: validatorFromTypeBox", () => {
  it("accepts matching arguments and hands over the very same value", () => {
    const args = { left: 2, right: 3 };
    const decision = validatorFromTypeBox(Add)(args);
    expect(decision).toEqual({ ok: true, value: args });
    expect(decision.ok && decision.value).toBe(args);
  });

  it("refuses with a readable path + message per issue", () => {
    expect(refusal(validatorFromTypeBox(Add)({ left: "two", right: 3 }))).toBe("Invalid arguments (1 issue):\n  - $.left: must be number");
    const message = refusal(validatorFromTypeBox(Add)({ left: 1, extra: true }));
    expect(message).toMatch(/^Invalid arguments \(2 issues\):\n/);
    expect(message).toContain("  - $: must have required properties right");
    expect(message).toContain("  - $: must not have additional properties");
  });

  it("lists at most maxIssues issues and states the total", () => {
    const Wide = Type.Object(Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`field${index}`, Type.Number()])));
    const wrong = (count: number) =>
      Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`field${index}`, index < count ? "x" : 1]));
    const five = refusal(validatorFromTypeBox(Wide, { maxIssues: 2 })(wrong(5))).split("\n");
    expect(five).toEqual([
      "Invalid arguments (5 issues):",
      "  - $.field0: must be number",
      "  - $.field1: must be number",
      "  - … and 3 more",
    ]);
  });

  it("says 'at least' when TypeBox stopped collecting errors (its global maxErrors, 8 by default)", () => {
    const Wide = Type.Object(Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`field${index}`, Type.Number()])));
    const bad = Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`field${index}`, "x"]));
    const byDefault = refusal(validatorFromTypeBox(Wide)(bad)).split("\n");
    expect(byDefault[0]).toBe("Invalid arguments (at least 8 issues):");
    expect(byDefault.filter((line) => line.endsWith(": must be number"))).toHaveLength(8);
    expect(byDefault.at(-1)).toBe("  - … and possibly more");
    const three = refusal(validatorFromTypeBox(Wide, { maxIssues: 3 })(bad)).split("\n");
    expect(three).toHaveLength(1 + 3 + 1);
    expect(three.at(-1)).toBe("  - … and at least 5 more");
    Settings.Set({ maxErrors: 64 });
    try {
      const all = refusal(validatorFromTypeBox(Wide, { maxIssues: 64 })(bad)).split("\n");
      expect(all[0]).toBe("Invalid arguments (20 issues):");
      expect(all).toHaveLength(21);
    } finally {
      Settings.Reset();
    }
  });

  it("cuts a huge path (the model chooses the keys) to a bounded line", () => {
    const Numbers = Type.Record(Type.String(), Type.Number());
    const key = "k".repeat(100_000);
    const message = refusal(validatorFromTypeBox(Numbers)({ [key]: "x" }));
    expect(message.length).toBeLessThan(400);
    expect(message).toContain(`  - $.${"k".repeat(126)}…: must be number`);
  });

  it("does not coerce unless asked", () => {
    expect(validatorFromTypeBox(Add)({ left: "2", right: "3" }).ok).toBe(false);
    expect(validatorFromTypeBox(Add, { coerce: false })({ left: "2", right: 3 }).ok).toBe(false);
  });

  it("with coerce: true, checks and returns a converted copy, leaving the input alone", () => {
    const args = Object.freeze({ left: "2", right: 3 });
    const decision = validatorFromTypeBox(Add, { coerce: true })(args);
    expect(decision).toEqual({ ok: true, value: { left: 2, right: 3 } });
    expect(args).toEqual({ left: "2", right: 3 });
    const Flags = Type.Object({ on: Type.Boolean(), label: Type.String() });
    expect(validatorFromTypeBox(Flags, { coerce: true })({ on: "true", label: 7 })).toEqual({ ok: true, value: { on: true, label: "7" } });
  });

  it("with coerce: true, still refuses what cannot be converted", () => {
    expect(refusal(validatorFromTypeBox(Add, { coerce: true })({ left: "two", right: 3 }))).toBe(
      "Invalid arguments (1 issue):\n  - $.left: must be number",
    );
  });

  it("compiles each schema once, however many validators are made from it", () => {
    const compile = vi.mocked(Compile);
    const Once = Type.Object({ id: Type.String() });
    const before = compile.mock.calls.length;
    const first = validatorFromTypeBox(Once);
    const second = validatorFromTypeBox(Once, { coerce: true });
    for (let index = 0; index < 50; index += 1) {
      first({ id: String(index) });
      second({ id: index });
    }
    expect(compile.mock.calls.length - before).toBe(1);
    validatorFromTypeBox(Type.Object({ id: Type.String() }));
    expect(compile.mock.calls.length - before).toBe(2);
  });

  it("records the schema behind the validator", () => {
    const validate = validatorFromTypeBox(Add);
    expect(typeBoxSchemaOf(validate)).toBe(Add);
    expect(typeBoxSchemaOf(() => ({ ok: true, value: 1 }))).toBeUndefined();
    expect(typeBoxSchemaOf(undefined)).toBeUndefined();
  });

  it("refuses a schema that is not an object or does not compile, at creation time", () => {
    expect(contractError(() => validatorFromTypeBox(null as never)).code).toBe("INVALID_TOOL_DEFINITION");
    const broken = contractError(() => validatorFromTypeBox(Type.String({ pattern: "(" })));
    expect(broken.code).toBe("INVALID_TOOL_DEFINITION");
    expect(broken.cause).toBeInstanceOf(SyntaxError);
  });

  it("refuses a bad maxIssues option", () => {
    for (const maxIssues of [0, -1, 1.5, 65, Number.NaN]) {
      expect(contractError(() => validatorFromTypeBox(Add, { maxIssues })).code).toBe("INVALID_ARGUMENT");
    }
  });
});

describe("docs/adapters.md — Validators: validatorFromTypeBox inside the boundary", () => {
  function registryWith(coerce: boolean) {
    const seen: unknown[] = [];
    const registry = new ToolRegistry([
      {
        name: "add",
        description: "Adds two numbers.",
        validate: validatorFromTypeBox(Add, { coerce }),
        execute: (args: { left: number; right: number }) => {
          seen.push(args);
          return args.left + args.right;
        },
      },
    ]);
    return { registry, seen };
  }

  it("invalid arguments give TOOL_ARGUMENTS_INVALID with the issue list, and never reach execute", async () => {
    const { registry, seen } = registryWith(false);
    const result = await executeToolCall(
      registry,
      { type: "toolCall", id: "c1", name: "add", arguments: { left: "2", right: 3 } },
      signal(),
    );
    expect(result.isError).toBe(true);
    expect(JSON.parse(result.content)).toEqual({
      error: { code: "TOOL_ARGUMENTS_INVALID", message: "Invalid arguments (1 issue):\n  - $.left: must be number" },
    });
    expect(seen).toEqual([]);
  });

  it("with coercion, execute receives the converted arguments", async () => {
    const { registry, seen } = registryWith(true);
    const result = await executeToolCall(
      registry,
      { type: "toolCall", id: "c2", name: "add", arguments: { left: "2", right: 3 } },
      signal(),
    );
    expect(result).toMatchObject({ isError: false, content: "5" });
    expect(seen).toEqual([{ left: 2, right: 3 }]);
  });
});
