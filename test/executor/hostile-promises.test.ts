// Promises that `Promise.prototype.then` cannot subscribe to (issue 28, defect 2): a native
// promise whose `constructor` getter throws, and an instance of a Promise subclass whose
// constructor needs arguments (then's species construction throws). Returned by a tool, a
// validator or a hook, on every executor: each must stay inside the three outcomes. A tool's
// is TOOL_EXECUTION_FAILED, a validator's TOOL_VALIDATION_FAILED, beforeExecute's a denial
// (fails closed), an observer's an onHookError report; never a plain Error rejection, and
// never an unhandled rejection (every test here checks that).
import type { HookName, ToolExecutor, ToolExecutorHooks } from "toolgate";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { labelled, throwingConstructor } from "../fixtures/hostile-promise-tools.js";
import { EXECUTORS } from "../support/executors.js";
import { call, errorOf, fixture, neverAborted, settle } from "../support/helpers.js";

const HOSTILE_PROMISE_TOOLS = fixture("hostile-promise-tools");
const APPROVAL_FAILED = { code: "TOOL_CALL_DENIED", message: "the call could not be approved: the approval hook failed" };

let unhandled: unknown[];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
const open: ToolExecutor[] = [];
beforeEach(() => {
  unhandled = [];
  process.on("unhandledRejection", onUnhandled);
});
afterEach(async () => {
  await new Promise((resolve) => setTimeout(resolve, 20)); // a late rejection surfaces within a few turns
  process.off("unhandledRejection", onUnhandled);
  for (const executor of open.splice(0)) await executor.close();
  expect(unhandled).toEqual([]);
});

/** The two hostile promises, fulfilled with `value`; `reads` counts the constructor getter's reads. */
function hostile<T>(value: T, reads: { count: number }): ReadonlyArray<readonly [string, () => Promise<T>]> {
  return [
    [
      "a throwing constructor getter",
      () =>
        throwingConstructor(value, "the constructor getter threw", () => {
          reads.count += 1;
        }),
    ],
    ["a subclass whose constructor needs a label", () => labelled(value)],
  ];
}

describe.each(EXECUTORS)("issue 28, defect 2 — a promise whose species cannot be read (%s)", (_label, make) => {
  async function executorWith(hooks?: ToolExecutorHooks): Promise<ToolExecutor> {
    const executor = await make([HOSTILE_PROMISE_TOOLS], hooks === undefined ? undefined : { hooks });
    open.push(executor);
    return executor;
  }

  test("returned by a tool: TOOL_EXECUTION_FAILED naming what the species lookup threw", async () => {
    const executor = await executorWith();
    const getter = await settle(executor.executeToolCall(call("throwingConstructor"), neverAborted()));
    const subclass = await settle(executor.executeToolCall(call("subclassNeedsLabel"), neverAborted()));
    expect(getter.ok && errorOf(getter.value)).toEqual({ code: "TOOL_EXECUTION_FAILED", message: "the constructor getter threw" });
    expect(subclass.ok && errorOf(subclass.value)).toEqual({
      code: "TOOL_EXECUTION_FAILED",
      message: "TypeError: LabelledPromise needs a label (got undefined)",
    });
    // The executor serves on.
    expect((await executor.executeToolCall(call("fine"), neverAborted())).content).toBe("fine");
  });

  test("returned by a validator: TOOL_VALIDATION_FAILED, as any promise from validate", async () => {
    const executor = await executorWith();
    const outcome = await settle(executor.executeToolCall(call("hostileValidator"), neverAborted()));
    expect(outcome.ok && errorOf(outcome.value)).toEqual({
      code: "TOOL_VALIDATION_FAILED",
      message: "validate must return { ok: true, value } or { ok: false, error } synchronously; it returned a Promise",
    });
  });

  test("returned by beforeExecute: the call is denied (fails closed) and onHookError is told", async () => {
    const reads = { count: 0 };
    for (const [what, make] of hostile({ allow: true }, reads)) {
      const reported: [string, HookName][] = [];
      const executor = await executorWith({
        beforeExecute: () => make() as never,
        onHookError: (error, hook) => void reported.push([String(error), hook]),
      });
      const outcome = await settle(executor.executeToolCall(call("fine"), neverAborted()));
      expect(outcome.ok && errorOf(outcome.value), what).toEqual(APPROVAL_FAILED);
      expect(
        reported.map(([, hook]) => hook),
        what,
      ).toEqual(["beforeExecute"]);
    }
    expect(reads.count).toBeGreaterThan(0); // the getter was reached: the hostile path ran
  });

  test("returned by onCallStart and onCallEnd: the call's outcome is untouched, and each failure is reported", async () => {
    const reads = { count: 0 };
    for (const [what, make] of hostile(undefined, reads)) {
      const reported: [string, HookName][] = [];
      const ends: string[] = [];
      const executor = await executorWith({
        onCallStart: () => make(),
        onCallEnd: (event) => {
          ends.push(event.outcome);
          return make();
        },
        onHookError: (error, hook) => void reported.push([String(error), hook]),
      });
      const outcome = await settle(executor.executeToolCall(call("fine"), neverAborted()));
      expect(outcome.ok && outcome.value.content, what).toBe("fine");
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(ends, what).toEqual(["success"]);
      expect(reported.map(([, hook]) => hook).sort(), what).toEqual(["onCallEnd", "onCallStart"]);
    }
    expect(reads.count).toBeGreaterThan(0);
  });

  test("returned by onHookError itself: dropped, nothing escapes", async () => {
    const reads = { count: 0 };
    for (const [what, make] of hostile(undefined, reads)) {
      const executor = await executorWith({
        onCallStart() {
          throw new Error("exporter down");
        },
        onHookError: () => make(),
      });
      const outcome = await settle(executor.executeToolCall(call("fine"), neverAborted()));
      expect(outcome.ok && outcome.value.content, what).toBe("fine");
    }
  });
});
