// The serializer and the call snapshot read own members through Annex B's __lookupGetter__,
// captured at load: patching it later cannot make an accessor look like data.
import { defineTool, executeToolCall, isToolContractError, serializeToolOutput, ToolRegistry } from "toolgate";
import { afterEach, describe, expect, test } from "vitest";
import { call, neverAborted, settle } from "../support/helpers.js";

const original = (Object.prototype as unknown as { __lookupGetter__: unknown }).__lookupGetter__;
afterEach(() => {
  Object.defineProperty(Object.prototype, "__lookupGetter__", { value: original, writable: true, configurable: true, enumerable: false });
});

const counted = () => {
  const reads = { count: 0 };
  const object = Object.defineProperty({ plain: 1 }, "secret", {
    get() {
      reads.count += 1;
      return "leaked";
    },
    enumerable: true,
  });
  const array = [1, 2];
  Object.defineProperty(array, 1, {
    get() {
      reads.count += 1;
      return "leaked";
    },
    enumerable: true,
  });
  return { reads, object, array };
};

describe("rule 4 — call snapshot, rule 10 — safe serialization: a patched __lookupGetter__ changes nothing", () => {
  test("the serializer still skips object accessors and renders array accessors as null, calling neither", () => {
    const { reads, object, array } = counted();
    Object.defineProperty(Object.prototype, "__lookupGetter__", { value: () => undefined, writable: true, configurable: true });
    expect(serializeToolOutput({ object, array })).toEqual({ ok: true, content: '{"array":[1,null],"object":{"plain":1}}' });
    expect(reads.count).toBe(0);
  });

  test("the call snapshot still refuses accessors in arguments without calling them", async () => {
    const { reads, object, array } = counted();
    Object.defineProperty(Object.prototype, "__lookupGetter__", { value: () => undefined, writable: true, configurable: true });
    const registry = new ToolRegistry([
      defineTool({
        name: "echo",
        description: "d",
        validate: (a: unknown) => ({ ok: true as const, value: a }),
        execute: (a: unknown) => a,
      }),
    ]);
    for (const args of [{ object }, { array }]) {
      const settled = await settle(executeToolCall(registry, call("echo", args as never), neverAborted()));
      expect(settled.ok).toBe(false);
      expect(isToolContractError(settled.ok ? undefined : settled.reason)).toBe(true);
    }
    expect(reads.count).toBe(0);
  });

  test("a setter-only accessor reads as nothing: omitted from objects, null in arrays, refused in arguments", async () => {
    const setterOnly = Object.defineProperty({ a: 1 }, "b", { set() {}, enumerable: true });
    const list = [1];
    Object.defineProperty(list, 0, { set() {}, enumerable: true });
    expect(serializeToolOutput({ setterOnly, list })).toEqual({ ok: true, content: '{"list":[null],"setterOnly":{"a":1}}' });
    const registry = new ToolRegistry([
      defineTool({
        name: "echo",
        description: "d",
        validate: (a: unknown) => ({ ok: true as const, value: a }),
        execute: (a: unknown) => a,
      }),
    ]);
    const settled = await settle(executeToolCall(registry, call("echo", { setterOnly } as never), neverAborted()));
    expect(settled.ok ? undefined : settled.reason).toMatchObject({ code: "INVALID_TOOL_CALL" });
  });
});
