// Issue 28, defect 4: onCallEnd tells what the caller got. The event used to be emitted before
// the pipeline's last abort check, so an abort landing between the two (from onCallEnd itself,
// or from anything that ran in the turns between) gave a "success" event for a call whose
// promise rejected with the abort reason. The interleavings are forced: an abort from inside
// the hook, and an abort at every microtask step after the tool settles.
import { type CallEndEvent, InProcessToolExecutor, type ToolExecutor, ToolRegistry } from "toolgate";
import { afterEach, describe, expect, test } from "vitest";
import { EXECUTORS } from "../support/executors.js";
import { call, fixture, settle } from "../support/helpers.js";

const HOSTILE_PROMISE_TOOLS = fixture("hostile-promise-tools");
const open: ToolExecutor[] = [];
afterEach(async () => {
  for (const executor of open.splice(0)) await executor.close();
});

/** What the caller got, in the event's words. */
function outcomeOf(settled: Awaited<ReturnType<typeof settle>>, reason: unknown): CallEndEvent["outcome"] {
  if (settled.ok) return (settled.value as { isError: boolean }).isError ? "error" : "success";
  return settled.reason === reason ? "aborted" : "rejected";
}

describe.each(EXECUTORS)("issue 28, defect 4 — onCallEnd tells what the caller got (%s)", (_label, make) => {
  test("an abort from inside onCallEnd: the event and the caller's promise agree, and the result stands", async () => {
    const controller = new AbortController();
    const reason = new Error("aborted from onCallEnd");
    const events: CallEndEvent[] = [];
    const executor = await make([HOSTILE_PROMISE_TOOLS], {
      hooks: {
        onCallEnd(event) {
          events.push(event);
          controller.abort(reason);
        },
      },
    });
    open.push(executor);
    const settled = await settle(executor.executeToolCall(call("fine", {}, "call-end-abort"), controller.signal));
    expect(events.map((event) => [event.toolCallId, event.outcome])).toEqual([["call-end-abort", outcomeOf(settled, reason)]]);
    // The event went out after the last abort check: an abort after it is too late to change the call.
    expect(settled).toMatchObject({ ok: true, value: { content: "fine", isError: false } });
  });

  test("in a batch too: each call's event agrees with what the batch got for it", async () => {
    const controller = new AbortController();
    const reason = new Error("aborted from onCallEnd in a batch");
    const events: CallEndEvent[] = [];
    const executor = await make([HOSTILE_PROMISE_TOOLS], {
      hooks: {
        onCallEnd(event) {
          events.push(event);
          controller.abort(reason);
        },
      },
    });
    open.push(executor);
    const settled = await settle(executor.executeBatch([call("fine", {}, "b-0")], controller.signal));
    // The batch's own last check sees the abort: the batch rejects, and its one call's event
    // says how that call ended for the batch (it had its result before the abort).
    expect(settled).toEqual({ ok: false, reason });
    expect(events.map((event) => [event.toolCallId, event.outcome])).toEqual([["b-0", "success"]]);
  });
});

describe("issue 28, defect 4 — an abort at every step after the tool settled, in-process", () => {
  /** Runs `then` after `hops` microtask turns. */
  function afterMicrotasks(hops: number, then: () => void): void {
    let chain = Promise.resolve();
    for (let hop = 0; hop < hops; hop += 1) chain = chain.then(() => {});
    void chain.then(then);
  }

  test("whichever turn the abort lands in, the event says what the caller got", async () => {
    const seen = new Set<string>();
    for (let hops = 0; hops <= 24; hops += 1) {
      const controller = new AbortController();
      const reason = new Error(`aborted after ${hops} microtasks`);
      const events: CallEndEvent[] = [];
      const registry = new ToolRegistry([
        {
          name: "settles",
          description: "Resolves, then has the call aborted `hops` microtasks later.",
          validate: (args: unknown) => ({ ok: true as const, value: args }),
          execute: () => {
            afterMicrotasks(hops, () => controller.abort(reason));
            return Promise.resolve("settled");
          },
        },
      ]);
      const executor = new InProcessToolExecutor(registry, { hooks: { onCallEnd: (event) => void events.push(event) } });
      const settled = await settle(executor.executeToolCall(call("settles", {}, `call-${hops}`), controller.signal));
      const got = outcomeOf(settled, reason);
      seen.add(got);
      expect(
        events.map((event) => event.outcome),
        `abort after ${hops} microtasks`,
      ).toEqual([got]);
    }
    // The sweep crossed the last check: early aborts win, late ones come after the result was handed out.
    expect([...seen].sort()).toEqual(["aborted", "success"]);
  });
});
