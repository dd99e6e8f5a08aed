// In-process timeouts: cooperative, so what they can and cannot do is pinned down here
// (the rule itself and the executor timeout run against every executor: operator-suite).
import { threadId } from "node:worker_threads";
import {
  defineTool,
  executeToolCall,
  InProcessToolExecutor,
  isToolContractError,
  NonRecoverableToolError,
  type ToolContext,
  ToolRegistry,
} from "toolgate";
import { describe, expect, test } from "vitest";
import { call, errorOf, neverAborted, settle } from "../support/helpers.js";

const accept = (args: unknown) => ({ ok: true as const, value: args });

function registryOf(...tools: { name: string; execute: (args: unknown, context: ToolContext) => unknown; timeoutMs?: number }[]) {
  return new ToolRegistry(tools.map((tool) => ({ description: `timeout fixture ${tool.name}`, validate: accept, ...tool })));
}

function thrown(run: () => unknown): { code: string; message: string } {
  try {
    run();
  } catch (error) {
    expect(isToolContractError(error)).toBe(true);
    return error as { code: string; message: string };
  }
  throw new Error("expected a ToolContractError");
}

describe("docs/operations.md — Timeouts: in-process timeouts", () => {
  test("a tool that never settles: the call resolves with TOOL_EXECUTION_TIMEOUT, and the tool's signal fires with a TimeoutError", async () => {
    let seen: AbortSignal | undefined;
    const registry = registryOf({
      name: "hang",
      execute: (_args, context) => {
        seen = context.signal;
        return new Promise(() => {});
      },
    });
    const caller = new AbortController();
    const result = await executeToolCall(registry, call("hang", {}, "call-hang"), caller.signal, { timeoutMs: 30 });
    expect(result).toMatchObject({ toolCallId: "call-hang", isError: true });
    expect(errorOf(result)).toEqual({ code: "TOOL_EXECUTION_TIMEOUT", message: "the tool did not finish within 30 ms" });
    expect(seen?.aborted).toBe(true);
    expect(seen?.reason).toBeInstanceOf(DOMException);
    expect(seen?.reason).toHaveProperty("name", "TimeoutError");
    // The tool's signal is its own: the caller's signal is untouched by the timeout.
    expect(seen).not.toBe(caller.signal);
    expect(caller.signal.aborted).toBe(false);
  });

  test("without any timeoutMs the tool sees the caller's own signal, as before", async () => {
    let seen: AbortSignal | undefined;
    const registry = registryOf({
      name: "look",
      execute: (_args, context) => {
        seen = context.signal;
      },
    });
    const caller = new AbortController();
    await executeToolCall(registry, call("look"), caller.signal);
    expect(seen).toBe(caller.signal);
  });

  test("a spinning tool cannot be stopped in-process: it runs to the end, and its result stands", async () => {
    const registry = registryOf({
      name: "spin",
      timeoutMs: 10,
      execute: () => {
        const until = performance.now() + 150;
        while (performance.now() < until) {
          // blocks the thread: no timer can fire (the worker executor can terminate this)
        }
        return "spun";
      },
    });
    const started = performance.now();
    const result = await executeToolCall(registry, call("spin"), neverAborted());
    expect(performance.now() - started).toBeGreaterThanOrEqual(150);
    expect(result).toMatchObject({ content: "spun", isError: false });
  });

  test("the caller's abort wins over a later timeout, with the reason itself", async () => {
    const registry = registryOf({ name: "hang", execute: () => new Promise(() => {}) });
    const controller = new AbortController();
    const reason = { why: "the user pressed stop" };
    const pending = executeToolCall(registry, call("hang"), controller.signal, { timeoutMs: 5000 });
    setTimeout(() => controller.abort(reason), 10);
    const outcome = await settle(pending);
    expect(outcome).toEqual({ ok: false, reason });
    expect((outcome as { reason: unknown }).reason).toBe(reason);
  });

  test("a NonRecoverableToolError thrown before the limit still rejects under a timeout", async () => {
    const fatal = new NonRecoverableToolError("invariant broken");
    const registry = registryOf({
      name: "fatal",
      execute: async () => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        throw fatal;
      },
    });
    await expect(executeToolCall(registry, call("fatal"), neverAborted(), { timeoutMs: 1000 })).rejects.toBe(fatal);
  });

  test("a tool that rejects late, after its timeout, leaves no unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const listener = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", listener);
    try {
      const registry = registryOf({
        name: "late",
        execute: () => new Promise((_resolve, reject) => setTimeout(() => reject(new Error("late failure")), 30)),
      });
      expect(errorOf(await executeToolCall(registry, call("late"), neverAborted(), { timeoutMs: 5 })).code).toBe("TOOL_EXECUTION_TIMEOUT");
      await new Promise((resolve) => setTimeout(resolve, 60));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", listener);
    }
  });

  test("the executor's timeoutMs is checked when it is made, with upper bounds", () => {
    const registry = registryOf({ name: "noop", execute: () => "" });
    expect(thrown(() => new InProcessToolExecutor(registry, { timeoutMs: 2 ** 31 })).message).toBe(
      "options.timeoutMs must be an integer from 1 to 2147483647 (got the number 2147483648)",
    );
    expect(thrown(() => new InProcessToolExecutor(registry, { timeoutMs: -1 })).code).toBe("INVALID_ARGUMENT");
    expect(thrown(() => new InProcessToolExecutor(registry, "fast" as never)).message).toBe("options must be an object (got a string)");
    expect(() => new InProcessToolExecutor(registry, { timeoutMs: 2 ** 31 - 1 })).not.toThrow();
  });

  test("a definition's timeoutMs: read once as an own property, checked, frozen into the tool", () => {
    let reads = 0;
    const definition = {
      name: "counted",
      description: "d",
      validate: accept,
      execute: () => "",
      get timeoutMs() {
        reads += 1;
        return 250;
      },
    };
    const tool = defineTool(definition);
    expect(reads).toBe(1);
    expect(tool.timeoutMs).toBe(250);
    expect(Object.isFrozen(tool)).toBe(true);
    // An inherited timeoutMs is not the definition's: not read, not applied.
    let inheritedReads = 0;
    const parent = {
      get timeoutMs() {
        inheritedReads += 1;
        return 5;
      },
    };
    const child = Object.assign(Object.create(parent) as object, { name: "child", description: "d", validate: accept, execute: () => "" });
    expect("timeoutMs" in defineTool(child as never)).toBe(false);
    expect(inheritedReads).toBe(0);
    // Absent (or undefined): the snapshot keeps exactly the four fields.
    expect(Object.keys(defineTool({ name: "plain", description: "d", validate: accept, execute: () => "" }))).toEqual([
      "name",
      "description",
      "validate",
      "execute",
    ]);
  });

  test.each([
    [0, "the number 0"],
    [2 ** 31, "the number 2147483648"],
    [Number.NaN, "the number NaN"],
    ["1000", "a string"],
    [null, "null"],
  ])("a definition's timeoutMs of %o is INVALID_TOOL_DEFINITION", (timeoutMs, got) => {
    const error = thrown(() => defineTool({ name: "bad", description: "d", validate: accept, execute: () => "", timeoutMs } as never));
    expect(error.code).toBe("INVALID_TOOL_DEFINITION");
    expect(error.message).toBe(`tool "bad": timeoutMs must be an integer from 1 to 2147483647 (got ${got})`);
  });

  test("the in-process runner reports the calling thread", async () => {
    const ends: number[] = [];
    const executor = new InProcessToolExecutor(registryOf({ name: "noop", execute: () => "" }), {
      hooks: { onCallEnd: (event) => void ends.push(event.threadId as number) },
    });
    await executor.executeToolCall(call("noop"), neverAborted());
    expect(ends).toEqual([threadId]);
  });
});
