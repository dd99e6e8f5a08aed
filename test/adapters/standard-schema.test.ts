// toolgate/standard-schema: validators from Standard Schema v1 libraries (zod 4, valibot 1).
import { executeToolCall, isToolContractError, ToolRegistry } from "toolgate";
import { ASYNC_SCHEMA_MESSAGE, type StandardSchemaV1, validatorFromStandardSchema } from "toolgate/standard-schema";
import * as v from "valibot";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";

const signal = () => new AbortController().signal;

/** Collects unhandled rejections while a test runs (vitest would also fail the run on one). */
let unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};
beforeEach(() => {
  unhandled = [];
  process.on("unhandledRejection", onUnhandled);
});
afterEach(() => {
  process.off("unhandledRejection", onUnhandled);
});
/** Lets pending promise jobs and one timer turn run, so an unhandled rejection would be reported. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

function refusal(decision: { ok: boolean; error?: unknown }): string {
  expect(decision.ok).toBe(false);
  expect(typeof decision.error).toBe("string");
  return decision.error as string;
}

function contractCode(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(isToolContractError(error)).toBe(true);
    return (error as { code: string }).code;
  }
  throw new Error("expected a ToolContractError");
}

/** Runs one call of a tool validated by `validate` through the boundary; reports what execute saw. */
async function runThroughBoundary(validate: (args: unknown) => unknown, args: Record<string, never> | Record<string, unknown>) {
  const executed: unknown[] = [];
  const registry = new ToolRegistry([
    {
      name: "tool",
      description: "A test tool.",
      validate: validate as (args: unknown) => { ok: true; value: unknown },
      execute: (value: unknown) => {
        executed.push(value);
        return "ran";
      },
    },
  ]);
  const result = await executeToolCall(registry, { type: "toolCall", id: "c1", name: "tool", arguments: args as never }, signal());
  return {
    result,
    executed,
    body: result.isError ? (JSON.parse(result.content) as { error: { code: string; message: string } }) : undefined,
  };
}

describe("docs/adapters.md — Validators: validatorFromStandardSchema with zod 4", () => {
  const User = z.object({
    name: z
      .string()
      .min(1)
      .transform((name) => name.toUpperCase()),
    tags: z.array(z.number()).default([]),
  });

  it("accepts valid arguments and hands over the schema's output (transforms and defaults applied)", () => {
    expect(validatorFromStandardSchema(User)({ name: "ada" })).toEqual({ ok: true, value: { name: "ADA", tags: [] } });
  });

  it("refuses with readable '$.path: message' lines", () => {
    expect(refusal(validatorFromStandardSchema(User)({ name: "", tags: [1, "x"] }))).toBe(
      "Invalid arguments (2 issues):\n" +
        "  - $.name: Too small: expected string to have >=1 characters\n" +
        "  - $.tags[1]: Invalid input: expected number, received string",
    );
  });

  it("bounds the list with maxIssues", () => {
    const Many = z.object(Object.fromEntries(Array.from({ length: 12 }, (_, index) => [`f${index}`, z.number()])));
    const lines = refusal(validatorFromStandardSchema(Many)({})).split("\n");
    expect(lines[0]).toBe("Invalid arguments (12 issues):");
    expect(lines).toHaveLength(1 + 8 + 1);
    expect(lines.at(-1)).toBe("  - … and 4 more");
    expect(refusal(validatorFromStandardSchema(Many, { maxIssues: 1 })({})).split("\n")).toHaveLength(3);
  });

  it("inside the boundary: TOOL_ARGUMENTS_INVALID, and execute never runs", async () => {
    const { body, executed } = await runThroughBoundary(validatorFromStandardSchema(User), { name: 5 });
    expect(body).toEqual({
      error: {
        code: "TOOL_ARGUMENTS_INVALID",
        message: "Invalid arguments (1 issue):\n  - $.name: Invalid input: expected string, received number",
      },
    });
    expect(executed).toEqual([]);
  });

  it("an async schema gives TOOL_VALIDATION_FAILED saying async schemas are not supported, with no unhandled rejection", async () => {
    let refinements = 0;
    const Async = z.object({
      name: z.string().refine(async (name) => {
        refinements += 1;
        return name.length > 0;
      }),
    });
    const { body, executed } = await runThroughBoundary(validatorFromStandardSchema(Async), { name: "ada" });
    expect(body).toEqual({ error: { code: "TOOL_VALIDATION_FAILED", message: ASYNC_SCHEMA_MESSAGE } });
    expect(body?.error.message).toMatch(/^async schemas are not supported/);
    expect(executed).toEqual([]);
    await settle();
    expect(refinements).toBeGreaterThan(0); // it really went asynchronous
    expect(unhandled).toEqual([]);
  });

  it("zod decides per input: the same async schema answers synchronously when a sync check already fails", async () => {
    const Async = z.object({ name: z.string().refine(async (name) => name.length > 0) });
    const { body } = await runThroughBoundary(validatorFromStandardSchema(Async), { name: 42 });
    expect(body?.error.code).toBe("TOOL_ARGUMENTS_INVALID");
  });
});

describe("docs/adapters.md — Validators: validatorFromStandardSchema with valibot 1", () => {
  const User = v.object({ name: v.pipe(v.string(), v.minLength(1)), tags: v.array(v.number()) });

  it("accepts valid arguments", () => {
    expect(validatorFromStandardSchema(User)({ name: "ada", tags: [1] })).toEqual({ ok: true, value: { name: "ada", tags: [1] } });
  });

  it("reads valibot's path segments ({ key }) into '$.path' lines", () => {
    expect(refusal(validatorFromStandardSchema(User)({ name: "", tags: [1, "x"] }))).toBe(
      "Invalid arguments (2 issues):\n" +
        "  - $.name: Invalid length: Expected >=1 but received 0\n" +
        '  - $.tags[1]: Invalid type: Expected number but received "x"',
    );
  });

  it("refuses a schema valibot marks as async, at definition time", () => {
    const Async = v.objectAsync({
      name: v.pipeAsync(
        v.string(),
        v.checkAsync(async (name) => name.length > 0),
      ),
    });
    expect(contractCode(() => validatorFromStandardSchema(Async))).toBe("INVALID_TOOL_DEFINITION");
    expect(() => validatorFromStandardSchema(Async)).toThrow(/async schemas are not supported/);
  });
});

describe("docs/adapters.md — Validators: validatorFromStandardSchema with a hand-written Standard Schema", () => {
  function schema(validate: (value: unknown) => unknown, vendor = "hand-made"): StandardSchemaV1 {
    return { "~standard": { version: 1, vendor, validate: validate as StandardSchemaV1["~standard"]["validate"] } };
  }

  it("observes a rejecting Promise: TOOL_VALIDATION_FAILED and no unhandled rejection", async () => {
    const { body } = await runThroughBoundary(
      validatorFromStandardSchema(schema(() => Promise.reject(new Error("remote check failed")))),
      {},
    );
    expect(body).toEqual({ error: { code: "TOOL_VALIDATION_FAILED", message: ASYNC_SCHEMA_MESSAGE } });
    await settle();
    expect(unhandled).toEqual([]);
  });

  it("treats a promise-like (a thenable result) the same way, and observes it", async () => {
    const observed: string[] = [];
    // biome-ignore lint/suspicious/noThenProperty: a thenable is the input under test.
    const thenable = { then: (_resolve: unknown, reject: unknown) => observed.push(typeof reject) };
    const { body } = await runThroughBoundary(validatorFromStandardSchema(schema(() => thenable)), {});
    expect(body?.error).toEqual({ code: "TOOL_VALIDATION_FAILED", message: ASYNC_SCHEMA_MESSAGE });
    expect(observed).toEqual(["function"]);
  });

  it("calls validate with its own props object as `this`", () => {
    let self: unknown;
    const standard = schema(function (this: unknown, value: unknown) {
      self = this;
      return { value };
    });
    validatorFromStandardSchema(standard)({ a: 1 });
    expect(self).toBe(standard["~standard"]);
  });

  it("a validate that throws or returns garbage gives TOOL_VALIDATION_FAILED", async () => {
    const thrown = await runThroughBoundary(
      validatorFromStandardSchema(
        schema(() => {
          throw new Error("schema bug");
        }),
      ),
      {},
    );
    expect(thrown.body?.error).toEqual({ code: "TOOL_VALIDATION_FAILED", message: "schema bug" });
    const garbage = await runThroughBoundary(validatorFromStandardSchema(schema(() => 42)), {});
    expect(garbage.body?.error.code).toBe("TOOL_VALIDATION_FAILED");
  });

  it("an empty issue list is still a refusal, described", () => {
    expect(refusal(validatorFromStandardSchema(schema(() => ({ issues: [] })))({}))).toBe(
      "Invalid arguments (1 issue):\n  - $: does not match the schema",
    );
  });

  it("an `async: true` flag counts only for valibot (other libraries may mean something else)", () => {
    const flagged = Object.assign(
      schema((value) => ({ value })),
      { async: true },
    );
    expect(validatorFromStandardSchema(flagged)({ a: 1 })).toEqual({ ok: true, value: { a: 1 } });
  });

  it("refuses anything that is not a Standard Schema v1, at definition time", () => {
    for (const candidate of [
      null,
      42,
      {},
      { "~standard": null },
      { "~standard": { version: 2, vendor: "x", validate: () => ({}) } },
      { "~standard": { version: 1, vendor: "x" } },
    ]) {
      expect(contractCode(() => validatorFromStandardSchema(candidate as never))).toBe("INVALID_TOOL_DEFINITION");
    }
  });
});
