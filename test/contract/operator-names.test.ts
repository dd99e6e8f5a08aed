// The one grammar helper behind every "(got ...)" and "it returned ..." in messages (the plain
// names beside the seed's: compat-names.test.ts).
import { executeToolCall, ToolRegistry } from "toolgate";
import { describe, expect, test } from "vitest";
import { describeValue } from "../../dist/src/contract/grammar.js";
import { call, errorOf, neverAborted } from "../support/helpers.js";

describe("docs/operations.md — Names: describeValue", () => {
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  test.each([
    [undefined, "undefined"],
    [null, "null"],
    ["x", "a string"],
    [true, "a boolean"],
    [10n, "a bigint"],
    [Symbol("s"), "a symbol"],
    [0, "the number 0"],
    [-1.5, "the number -1.5"],
    [Number.NaN, "the number NaN"],
    [{}, "an object"],
    [Object.create(null), "an object"],
    [[], "an array"],
    [() => 1, "a function"],
    [new Proxy([], {}), "a Proxy"],
    [new Proxy(() => 1, {}), "a Proxy"],
  ] as [unknown, string][])("value %# reads %s", (value: unknown, phrase: string) => {
    expect(describeValue(value)).toBe(phrase);
  });

  test("a revoked Proxy is still just a Proxy (no IsArray on it, which would throw)", () => {
    expect(describeValue(revoked.proxy)).toBe("a Proxy");
  });

  test("reads nothing of the value: no getter, trap or toString runs", () => {
    let touched = 0;
    const touch = (): never => {
      touched += 1;
      throw new Error("touched");
    };
    const hostile = new Proxy({}, { get: touch, getPrototypeOf: touch, has: touch, ownKeys: touch });
    const object = { toString: touch, [Symbol.toPrimitive]: touch };
    expect(describeValue(hostile)).toBe("a Proxy");
    expect(describeValue(object)).toBe("an object");
    expect(touched).toBe(0);
  });
});

describe("docs/operations.md — Names: messages use it", () => {
  const validatorReturning = (decision: unknown) =>
    new ToolRegistry([{ name: "v", description: "d", validate: () => decision as never, execute: () => "" }]);

  test.each([
    [undefined, "it returned undefined"],
    [null, "it returned null"],
    [7, "it returned the number 7"],
    ["ok", "it returned a string"],
    [new Proxy({}, {}), "it returned a Proxy"],
  ] as [unknown, string][])("validator decision %#: TOOL_VALIDATION_FAILED says %s", async (decision, phrase) => {
    const result = await executeToolCall(validatorReturning(decision), call("v"), neverAborted());
    expect(errorOf(result)).toEqual({
      code: "TOOL_VALIDATION_FAILED",
      message: `validate must return { ok: true, value } or { ok: false, error } synchronously; ${phrase}`,
    });
  });
});
