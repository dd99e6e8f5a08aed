// A `then` planted on Object.prototype must never adopt a published result (docs/contract.md,
// rule 13 — frozen, linked results): resolving a promise with an object looks `then` up on it, and a result that inherited
// one would be handed to that function instead of to the caller. Both executors. The tools'
// validators return null-prototype decisions: the validator's own thenable check (rule 6)
// is not what this file is about.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { EXECUTORS } from "../support/executors.js";
import { call, fixture, neverAborted } from "../support/helpers.js";

type Executor = Awaited<ReturnType<(typeof EXECUTORS)[number][1]>>;

let hijacks = 0;

/** A result, an outcome on its way to one, or an array of results: what toolgate publishes. */
function isToolgateRecord(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0 && isToolgateRecord(value[0]);
  if (typeof value !== "object" || value === null) return false;
  return typeof Reflect.get(value, "content") === "string" || typeof Reflect.get(value, "toolCallId") === "string";
}

/**
 * Plants a hostile Object.prototype.then that takes over whatever is resolved with it. While
 * it is there, the test itself resolves no promise with an object (it only awaits promises and
 * stores results in variables). Node's own internals also look `then` up (on an event
 * listener's return value): only toolgate's records are counted.
 */
function plantThen(): void {
  hijacks = 0;
  // biome-ignore lint/suspicious/noThenProperty: planting a hostile `then` is what this test is about.
  Object.defineProperty(Object.prototype, "then", {
    configurable: true,
    writable: true,
    value: function plantedThen(this: unknown, resolve: unknown) {
      if (isToolgateRecord(this)) hijacks += 1;
      if (typeof resolve === "function") resolve("hijacked");
    },
  });
}

function removeThen(): void {
  delete (Object.prototype as { then?: unknown }).then;
}

describe.each(EXECUTORS)("rule 13 — frozen, linked results: on %s, a published result is never adopted as a thenable", (_label, make) => {
  let executor: Executor;
  beforeAll(async () => {
    executor = await make([fixture("contract-tools")]);
  });
  afterAll(() => executor.close());

  test("executeToolCall, a success and an error result", async () => {
    const value: unknown[] = [];
    plantThen();
    try {
      value[0] = await executor.executeToolCall(call("bareEcho", { a: 1 }, "call-ok"), neverAborted());
      value[1] = await executor.executeToolCall(call("bareFails", {}, "call-error"), neverAborted());
      value[2] = await executor.executeToolCall(call("missing", {}, "call-unknown"), neverAborted());
    } finally {
      removeThen();
    }
    expect(hijacks).toBe(0);
    expect(value[0]).toMatchObject({ toolCallId: "call-ok", content: '{"a":1}', isError: false });
    expect(value[1]).toMatchObject({ toolCallId: "call-error", isError: true });
    expect((value[1] as { content: string }).content).toContain("RangeError: disk full");
    expect(value[2]).toMatchObject({ toolCallId: "call-unknown", isError: true });
  });

  test("executeBatch: neither the results nor their array", async () => {
    let value: Awaited<ReturnType<Executor["executeBatch"]>> | undefined;
    plantThen();
    try {
      value = await executor.executeBatch([call("bareEcho", { b: 2 }, "b0"), call("bareEcho", { c: 3 }, "b1")], neverAborted());
    } finally {
      removeThen();
    }
    expect(hijacks).toBe(0);
    expect(Array.isArray(value)).toBe(true);
    expect(value?.map((result) => result.toolCallId)).toEqual(["b0", "b1"]);
    expect(value?.[0]?.content).toBe('{"b":2}');
  });

  test("a then planted after the result was made (by an onCallEnd hook) adopts nothing either", async () => {
    const hooked = await make([fixture("contract-tools")], { hooks: { onCallEnd: () => plantThen() } });
    let value: unknown;
    try {
      value = await hooked.executeToolCall(call("bareEcho", { d: 4 }, "call-hook"), neverAborted());
    } finally {
      removeThen();
      await hooked.close();
    }
    expect(hijacks).toBe(0);
    expect(value).toMatchObject({ toolCallId: "call-hook", content: '{"d":4}', isError: false });
    expect(Object.keys(value as object)).toEqual(["role", "id", "toolCallId", "toolName", "content", "isError"]);
  });

  test("an attachments list planted on Object.prototype is no result's: text results stay text", async () => {
    let value: unknown;
    Object.defineProperty(Object.prototype, "attachments", { configurable: true, writable: true, value: [{ type: "image" }] });
    try {
      value = await executor.executeToolCall(call("bareEcho", { e: 5 }, "call-planted"), neverAborted());
    } finally {
      delete (Object.prototype as { attachments?: unknown }).attachments;
    }
    expect(value).toMatchObject({ toolCallId: "call-planted", content: '{"e":5}', isError: false });
    expect(Object.hasOwn(value as object, "attachments")).toBe(false);
  });

  test("a result still looks like a plain object: its own keys and JSON are the six fields", async () => {
    const result = await executor.executeToolCall(call("echo", {}, "call-shape"), neverAborted());
    expect(Object.keys(result)).toEqual(["role", "id", "toolCallId", "toolName", "content", "isError"]);
    expect(JSON.parse(JSON.stringify(result))).toEqual({
      role: "toolResult",
      id: "tool-result-call-shape",
      toolCallId: "call-shape",
      toolName: "echo",
      content: "{}",
      isError: false,
    });
    expect(Object.isFrozen(result)).toBe(true);
  });
});
