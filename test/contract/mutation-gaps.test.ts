// Tests that close gaps found by mutation testing (see the audit report): each one fails
// under a specific, realistic mutation of src/ or workers/ that the rest of the suite missed.
import { inspect } from "node:util";
import {
  COURSE_TOOL_MAX_COLLECTION_VISITS,
  COURSE_TOOL_TRUNCATION_MARKER,
  type CourseToolResultMessage,
  defineTool,
  executeToolCall,
  executeToolCalls,
  NonRecoverableToolError,
  serializeToolOutput,
  ToolRegistry,
} from "toolgate";
import { WorkerToolExecutor } from "toolgate/worker";
import { describe, expect, test } from "vitest";
import { call, fixture, neverAborted, settle } from "../support/helpers.js";

describe("batch concurrency bound (SPEC section 4: batches run with a concurrency bound)", () => {
  test("executeToolCalls never runs more than `concurrency` calls at once", async () => {
    let running = 0;
    let peak = 0;
    const registry = new ToolRegistry([
      defineTool({
        name: "slow",
        description: "Counts how many calls run at once.",
        validate: () => ({ ok: true, value: null }),
        execute: async () => {
          running += 1;
          peak = Math.max(peak, running);
          await new Promise((resolve) => setTimeout(resolve, 20));
          running -= 1;
          return "done";
        },
      }),
    ]);
    const calls = Array.from({ length: 6 }, (_, n) => call("slow", {}, `c${n}`));
    const results = await executeToolCalls(registry, calls, neverAborted(), { concurrency: 2 });
    expect(results.map((result) => result.toolCallId)).toEqual(["c0", "c1", "c2", "c3", "c4", "c5"]);
    expect(peak).toBe(2);
  });
});

describe("worker executor: abort rejects at once, whatever the grace period", () => {
  test("a running call that ignores its signal rejects with the reason long before the grace-period kill", async () => {
    const executor = await WorkerToolExecutor.create({ modules: [fixture("worker-tools")], maxThreads: 1, abortGraceMs: 10_000 });
    try {
      const controller = new AbortController();
      const pending = executor.executeToolCall(call("spin", { ms: 1500 }), controller.signal);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const abortedAt = performance.now();
      controller.abort("stop now");
      await expect(pending).rejects.toBe("stop now");
      // Generous, yet far below both the 1.5 s the tool spins and the 10 s grace period.
      expect(performance.now() - abortedAt).toBeLessThan(750);
    } finally {
      await executor.close(); // waits for the spinning tool to finish its 1.5 s
    }
  });
});

describe("rule 8: abort wins at every boundary (gaps)", () => {
  const registryOf = (execute: (args: unknown, context: { signal: AbortSignal }) => unknown) =>
    new ToolRegistry([defineTool({ name: "t", description: "d", validate: () => ({ ok: true, value: null }), execute })]);

  test("a tool that aborts the run and then throws a NonRecoverableToolError: abort wins (after-settle check)", async () => {
    const controller = new AbortController();
    const reason = new Error("stopped while the tool was failing");
    const registry = registryOf(() => {
      controller.abort(reason);
      throw new NonRecoverableToolError("would escape if abort were not checked first");
    });
    await expect(executeToolCall(registry, call("t"), controller.signal)).rejects.toBe(reason);
    const rejecting = registryOf(async () => {
      controller.abort(reason);
      throw new NonRecoverableToolError("rejected after the abort");
    });
    await expect(executeToolCall(rejecting, call("t"), controller.signal)).rejects.toBe(reason);
  });

  test("a tool that aborts synchronously and returns a promise that never settles rejects at once", async () => {
    const controller = new AbortController();
    const registry = registryOf(() => {
      controller.abort("aborted inside execute");
      return new Promise(() => {});
    });
    const outcome = await Promise.race([
      settle(executeToolCall(registry, call("t"), controller.signal)),
      new Promise((resolve) => setTimeout(() => resolve("still pending after 1 s"), 1000)),
    ]);
    expect(outcome).toEqual({ ok: false, reason: "aborted inside execute" });
  });

  test("an abort that happens while the call's promise is still pending always wins (final check before publishing)", async () => {
    // util.inspect reads a promise's state synchronously: at the moment of the abort we know
    // whether the result had already been published. If it had not, the call must reject.
    const rounds: { pendingAtAbort: boolean; outcome: string }[] = [];
    for (let delay = 0; delay < 24; delay += 1) {
      const controller = new AbortController();
      let pending: Promise<unknown> | undefined;
      let pendingAtAbort = false;
      let aborted: Promise<void> | undefined;
      const registry = registryOf(() => {
        let chain = Promise.resolve();
        for (let tick = 0; tick < delay; tick += 1) chain = chain.then(() => {});
        aborted = chain.then(() => {
          pendingAtAbort = inspect(pending).includes("<pending>");
          controller.abort("late abort");
        });
        return Promise.resolve("done");
      });
      pending = executeToolCall(registry, call("t"), controller.signal);
      const outcome = await pending.then(
        (result) => ((result as CourseToolResultMessage).isError ? "error" : "result"),
        (reason: unknown) => (reason === "late abort" ? "aborted" : "other"),
      );
      await aborted;
      rounds.push({ pendingAtAbort, outcome });
    }
    // The sweep covers both sides of the publication point...
    expect(rounds.some((round) => round.pendingAtAbort)).toBe(true);
    expect(rounds.some((round) => !round.pendingAtAbort)).toBe(true);
    // ...and every abort that came before it won.
    for (const round of rounds) expect(round.outcome).toBe(round.pendingAtAbort ? "aborted" : "result");
  });
});

describe("rule 9: a genuine NonRecoverableToolError escapes from the validator too (gap)", () => {
  test("validate throwing a NonRecoverableToolError rejects with that error, and execute never runs", async () => {
    const fatal = new NonRecoverableToolError("schema registry corrupted");
    let executed = false;
    const registry = new ToolRegistry([
      defineTool({
        name: "t",
        description: "d",
        validate: () => {
          throw fatal;
        },
        execute: () => {
          executed = true;
          return null;
        },
      }),
    ]);
    await expect(executeToolCall(registry, call("t"), neverAborted())).rejects.toBe(fatal);
    expect(executed).toBe(false);
  });
});

describe("rule 10: keys sort by UTF-16 code units at every object size (gap)", () => {
  test.each([5, 16, 17, 40])("an object with %i keys renders its keys in code-unit order", (count) => {
    // Mixed case, digits, punctuation and non-ASCII: code-unit order differs from locale order.
    const alphabet = ["b", "B", "a", "A", "_", "Z", "é", "e", "10", "9", "~", "ß", "Ä", "z", "-", "😀", "ｚ", "0"];
    const keys = Array.from(
      { length: count },
      (_, index) => `${alphabet[index % alphabet.length]}${Math.floor(index / alphabet.length) || ""}`,
    );
    const value = Object.fromEntries(keys.map((key, index) => [key, index]));
    const expected = `{${[...keys]
      .sort()
      .map((key) => `${JSON.stringify(key)}:${value[key]}`)
      .join(",")}}`;
    const outcome = serializeToolOutput(value);
    expect(outcome).toEqual({ ok: true, content: expected });
  });
});

describe("rule 10: arrays are walked by index within the budget, never by listing their keys (gap)", () => {
  test("a four-million-element array is refused in (near) constant time", () => {
    // Listing 4e6 keys takes seconds; the budget check refuses the array before reading any member.
    const huge = new Array(4_000_000).fill(0);
    const started = performance.now();
    const outcome = serializeToolOutput({ huge });
    const elapsed = performance.now() - started;
    expect(outcome).toEqual({
      ok: false,
      message: `output contains more than ${COURSE_TOOL_MAX_COLLECTION_VISITS} collection members at $.huge`,
    });
    expect(elapsed).toBeLessThan(250); // generous: the refusal itself takes microseconds
  });
});

describe("rule 12: a surrogate pair is never split, wherever it sits relative to the cut (gap)", () => {
  // The cut keeps 4096 - 24 (marker) = 4072 code points; offsets around that index put the
  // first pair's high surrogate on the last unit that is kept.
  test.each([4069, 4070, 4071, 4072, 4073])("ASCII then emoji from UTF-16 index %i", (offset) => {
    const outcome = serializeToolOutput("a".repeat(offset) + "😀".repeat(100));
    expect(outcome.ok).toBe(true);
    const content = (outcome as { content: string }).content;
    expect(content.isWellFormed()).toBe(true);
    expect([...content].length).toBe(4096);
    expect(content.endsWith(COURSE_TOOL_TRUNCATION_MARKER)).toBe(true);
  });

  test("the echoed name in TOOL_NOT_FOUND is cut on a code-point boundary too", async () => {
    const name = `${"n".repeat(127)}😀tail`;
    const result = await executeToolCall(new ToolRegistry(), call(name), neverAborted());
    expect(result.content).not.toMatch(/\\ud[89ab]/i); // no escaped lone surrogate in the JSON
    expect(JSON.parse(result.content).error.message).toContain(`${"n".repeat(127)}😀`);
  });
});
