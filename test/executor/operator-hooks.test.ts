// Hostile hooks, in-process: throwing, slow, aborted, returning garbage, Proxies and thenables.
// None of them may change a call's outcome (beforeExecute's decision aside, read strictly and
// failing closed) or leave an unhandled rejection.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { threadId } from "node:worker_threads";
import {
  type CallEndEvent,
  type HookName,
  InProcessToolExecutor,
  isToolContractError,
  NonRecoverableToolError,
  type ToolContext,
  type ToolExecutorHooks,
  ToolRegistry,
} from "toolgate";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { call, errorOf, neverAborted, scratchDir, settle } from "../support/helpers.js";

const accept = (args: unknown) => ({ ok: true as const, value: args as Record<string, unknown> });
let dir: string;
let ran: string[];

function registry(): ToolRegistry {
  const tool = (name: string, execute: (args: Record<string, unknown>, context: ToolContext) => unknown) => ({
    name,
    description: `hooks fixture ${name}`,
    validate: accept,
    execute: (args: Record<string, unknown>, context: ToolContext) => {
      ran.push(name);
      return execute(args, context);
    },
  });
  return new ToolRegistry([
    tool("echo", (args) => args),
    tool("fatal", () => {
      throw new NonRecoverableToolError("stop the run");
    }),
    tool("fails", () => {
      throw new Error("tool broke");
    }),
  ]);
}

const executorWith = (hooks: ToolExecutorHooks) => new InProcessToolExecutor(registry(), { hooks });
const APPROVAL_FAILED = { code: "TOOL_CALL_DENIED", message: "the call could not be approved: the approval hook failed" };

// Every test here also fails on any unhandled rejection during it.
let unhandled: unknown[];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
beforeEach(() => {
  unhandled = [];
  ran = [];
  dir = scratchDir();
  process.on("unhandledRejection", onUnhandled);
});
afterEach(async () => {
  await new Promise((resolve) => setTimeout(resolve, 10)); // let late rejections surface
  process.off("unhandledRejection", onUnhandled);
  expect(unhandled).toEqual([]);
});

describe("docs/operations.md — Hooks: beforeExecute", () => {
  test("receives the frozen call snapshot, the tool and a frozen { signal, toolCallId } on this thread", async () => {
    const seen: unknown[] = [];
    const signal = neverAborted();
    const executor = executorWith({
      beforeExecute(snapshot, tool, context) {
        seen.push(snapshot, tool.name, context, threadId);
        return { allow: true };
      },
    });
    await executor.executeToolCall(call("echo", { a: 1 }, "call-1"), signal);
    const [snapshot, name, context, thread] = seen as [Record<string, unknown>, string, Record<string, unknown>, number];
    expect(snapshot).toEqual({ type: "toolCall", id: "call-1", name: "echo", arguments: { a: 1 } });
    expect(Object.isFrozen(snapshot) && Object.isFrozen(snapshot.arguments) && Object.isFrozen(context)).toBe(true);
    expect(name).toBe("echo");
    expect(context).toEqual({ signal, toolCallId: "call-1" });
    expect(context.signal).toBe(signal);
    expect(thread).toBe(threadId);
  });

  test.each([
    ["undefined", undefined],
    ["true", true],
    ["a string", "yes"],
    ["allow as a string", { allow: "true" }],
    ["an inherited allow", Object.create({ allow: true })],
    ["allow behind a getter", Object.defineProperty({}, "allow", { get: () => true })],
    ["a Proxy", new Proxy({ allow: true }, {})],
    [
      "a revoked Proxy",
      (() => {
        const { proxy, revoke } = Proxy.revocable({ allow: true }, {});
        revoke();
        return proxy;
      })(),
    ],
    ["a function", () => ({ allow: true })],
  ])("returning %s fails closed: denied, the tool never runs, onHookError is told", async (_label, decision) => {
    const errors: [unknown, HookName][] = [];
    const executor = executorWith({
      beforeExecute: () => decision as never,
      onHookError: (error, hook) => void errors.push([error, hook]),
    });
    const result = await executor.executeToolCall(call("echo"), neverAborted());
    expect(errorOf(result)).toEqual(APPROVAL_FAILED);
    expect(ran).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.[1]).toBe("beforeExecute");
    expect(String(errors[0]?.[0])).toContain("beforeExecute must give { allow: true } or { allow: false, reason }");
  });

  test("a throw or a rejection denies the call without showing the model the hook's error", async () => {
    for (const beforeExecute of [
      () => {
        throw new Error("secret internal detail");
      },
      () => Promise.reject(new Error("secret internal detail")),
      async () => {
        throw new Proxy(
          {},
          {
            get: () => {
              throw new Error("trap");
            },
          },
        ); // a hostile thrown value
      },
    ]) {
      const errors: unknown[] = [];
      const result = await executorWith({ beforeExecute, onHookError: (error) => void errors.push(error) }).executeToolCall(
        call("echo"),
        neverAborted(),
      );
      expect(errorOf(result)).toEqual(APPROVAL_FAILED);
      expect(result.content).not.toContain("secret");
      expect(errors).toHaveLength(1);
    }
    expect(ran).toEqual([]);
  });

  test("a denial's reason is what the model reads, bounded; a missing reason gets a plain one", async () => {
    const long = "x".repeat(10_000);
    const reasons = [long, 42, undefined, ""];
    for (const reason of reasons) {
      const result = await executorWith({ beforeExecute: () => ({ allow: false, reason }) as never }).executeToolCall(
        call("echo"),
        neverAborted(),
      );
      expect(result.content.startsWith('{"error":{"code":"TOOL_CALL_DENIED"')).toBe(true);
      if (reason === long) {
        expect([...result.content].length).toBe(4096);
        expect(result.content.endsWith("\n[Tool output truncated]")).toBe(true);
      } else expect(errorOf(result).message).toBe("the call was denied");
    }
    expect(ran).toEqual([]);
  });

  test("thenables are awaited: one resolving to allow runs the call; one whose then throws denies it", async () => {
    // biome-ignore lint/suspicious/noThenProperty: a thenable decision is the input under test.
    const allowing = { then: (resolve: (value: unknown) => void) => resolve({ allow: true }) };
    expect(
      (await executorWith({ beforeExecute: () => allowing as never }).executeToolCall(call("echo", { a: 1 }), neverAborted())).content,
    ).toBe('{"a":1}');
    const throwing = {
      // biome-ignore lint/suspicious/noThenProperty: as above.
      then() {
        throw new Error("then exploded");
      },
    };
    expect(errorOf(await executorWith({ beforeExecute: () => throwing as never }).executeToolCall(call("echo"), neverAborted()))).toEqual(
      APPROVAL_FAILED,
    );
    // A `then` getter is not called: the object is the decision itself (and malformed).
    let thenReads = 0;
    // biome-ignore lint/suspicious/noThenProperty: a `then` getter is the input under test.
    const getter = Object.defineProperty({ allow: true }, "then", {
      get() {
        thenReads += 1;
      },
    });
    expect((await executorWith({ beforeExecute: () => getter as never }).executeToolCall(call("echo"), neverAborted())).isError).toBe(
      false,
    );
    expect(thenReads).toBe(0);
    expect(ran).toEqual(["echo", "echo"]);
  });

  test("a slow approval respects abort: the call rejects with the reason at once, and the tool never runs", async () => {
    const controller = new AbortController();
    let approvalSignal: AbortSignal | undefined;
    const executor = executorWith({
      beforeExecute: (_call, _tool, context) => {
        approvalSignal = context.signal;
        return new Promise(() => {}); // waits for a person who never answers
      },
    });
    const reason = new Error("user left");
    const pending = executor.executeToolCall(call("echo"), controller.signal);
    setTimeout(() => controller.abort(reason), 10);
    await expect(pending).rejects.toBe(reason);
    expect(approvalSignal?.aborted).toBe(true);
    expect(ran).toEqual([]);
  });

  test("an approval that resolves allow after the abort still does not run the tool", async () => {
    const controller = new AbortController();
    const executor = executorWith({
      beforeExecute: () => new Promise((resolve) => setTimeout(() => resolve({ allow: true }), 30)),
    });
    const pending = executor.executeToolCall(call("echo"), controller.signal);
    setTimeout(() => controller.abort("stop"), 5);
    await expect(pending).rejects.toBe("stop");
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(ran).toEqual([]);
  });

  test("a hook that aborts the run itself rejects the call with that reason, synchronously or not", async () => {
    for (const late of [false, true]) {
      const controller = new AbortController();
      const executor = executorWith({
        beforeExecute: async () => {
          if (late) await Promise.resolve();
          controller.abort("aborted by the approval");
          return { allow: true };
        },
      });
      await expect(executor.executeToolCall(call("echo"), controller.signal)).rejects.toBe("aborted by the approval");
    }
    expect(ran).toEqual([]);
  });

  test("a rejection after the abort is still observed (no unhandled rejection)", async () => {
    const controller = new AbortController();
    const executor = executorWith({
      beforeExecute: () => new Promise((_resolve, reject) => setTimeout(() => reject(new Error("late")), 20)),
    });
    const pending = executor.executeToolCall(call("echo"), controller.signal);
    controller.abort("now");
    await expect(pending).rejects.toBe("now");
    await new Promise((resolve) => setTimeout(resolve, 40)); // afterEach checks nothing went unhandled
  });

  test("the decision is read once: changing the hooks object later changes nothing", async () => {
    const hooks: ToolExecutorHooks = { beforeExecute: () => ({ allow: false, reason: "frozen in" }) };
    const executor = executorWith(hooks);
    hooks.beforeExecute = () => ({ allow: true });
    expect(errorOf(await executor.executeToolCall(call("echo"), neverAborted())).message).toBe("frozen in");
  });
});

describe("docs/operations.md — Hooks: events", () => {
  test("a class instance works: its inherited methods are called with it as `this`", async () => {
    class Recorder implements ToolExecutorHooks {
      readonly ends: string[] = [];
      onCallEnd(event: CallEndEvent): void {
        this.ends.push(`${event.toolCallId}:${event.outcome}`);
      }
    }
    const recorder = new Recorder();
    await executorWith(recorder).executeToolCall(call("echo", {}, "c1"), neverAborted());
    expect(recorder.ends).toEqual(["c1:success"]);
  });

  test("observers that throw, reject, return thenables or spin never change the outcome", async () => {
    const errors: HookName[] = [];
    let thenCalls = 0;
    const executor = executorWith({
      onCallStart() {
        throw new Error("start exporter down");
      },
      onCallEnd: () =>
        ({
          // biome-ignore lint/suspicious/noThenProperty: a thenable returned by an observer is the input under test.
          then() {
            thenCalls += 1; // a thenable returned by an observer is not awaited or adopted
          },
        }) as never,
      onHookError(_error, hook) {
        errors.push(hook);
        throw new Error("and the error reporter is broken too");
      },
    });
    const result = await executor.executeToolCall(call("echo", { kept: true }), neverAborted());
    expect(result).toMatchObject({ content: '{"kept":true}', isError: false });
    expect(thenCalls).toBe(0);
    expect(errors).toEqual(["onCallStart"]);
    const rejecting = executorWith({
      onCallEnd: () => Promise.reject(new Error("async exporter down")),
      onHookError: (_e, hook) => void errors.push(hook),
    });
    expect((await rejecting.executeToolCall(call("echo"), neverAborted())).isError).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(errors).toEqual(["onCallStart", "onCallEnd"]);
    // Spinning: observers that busy-wait 30 ms each hold this thread that long (they are
    // synchronous code), and change nothing else.
    const spin = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until) {
        // a slow synchronous exporter
      }
    };
    const spinning = executorWith({
      onCallStart: () => spin(30),
      onCallEnd: () => spin(30),
      onHookError: (_e, hook) => void errors.push(hook),
    });
    const started = performance.now();
    const spun = await spinning.executeToolCall(call("echo", { spun: true }, "call-spun"), neverAborted());
    const elapsed = performance.now() - started;
    expect(spun).toMatchObject({ toolCallId: "call-spun", content: '{"spun":true}', isError: false });
    expect(elapsed).toBeGreaterThanOrEqual(59);
    expect(elapsed).toBeLessThan(1000);
    expect(errors).toEqual(["onCallStart", "onCallEnd"]);
  });

  test("an observer cannot change the event others see, nor the result", async () => {
    const seen: CallEndEvent[] = [];
    const executor = executorWith({
      onCallEnd(event) {
        seen.push(event);
        (event as { outcome: string }).outcome = "success"; // frozen: throws, swallowed
      },
    });
    const result = await executor.executeToolCall(call("fails"), neverAborted());
    expect(result.isError).toBe(true);
    expect(seen[0]).toMatchObject({ outcome: "error", code: "TOOL_EXECUTION_FAILED" });
  });

  test("every started call ends exactly once, in a batch too, with its own outcome", async () => {
    const starts: string[] = [];
    const ends: string[] = [];
    const executor = executorWith({
      onCallStart: (event) => void starts.push(event.toolCallId),
      onCallEnd: (event) => void ends.push(`${event.toolCallId}:${event.outcome}:${event.code ?? "-"}`),
    });
    await executor.executeBatch([call("echo", {}, "b1"), call("fails", {}, "b2"), call("missing", {}, "b3")], neverAborted(), {
      concurrency: 1,
    });
    expect(starts).toEqual(["b1", "b2", "b3"]);
    expect(ends).toEqual(["b1:success:-", "b2:error:TOOL_EXECUTION_FAILED", "b3:error:TOOL_NOT_FOUND"]);
    const fatal = await settle(executor.executeToolCall(call("fatal", {}, "f1"), neverAborted()));
    expect(fatal.ok).toBe(false);
    expect(ends.at(-1)).toBe("f1:rejected:-");
  });

  test("a malformed call has no events (it has no id to carry)", async () => {
    const starts: unknown[] = [];
    const executor = executorWith({ onCallStart: (event) => void starts.push(event) });
    const outcome = await settle(executor.executeToolCall({ type: "toolCall", id: "", name: "echo", arguments: {} }, neverAborted()));
    expect(isToolContractError((outcome as { reason: unknown }).reason)).toBe(true);
    expect(starts).toEqual([]);
  });

  test.each([
    ["not an object", "nope", "options.hooks must be an object (got a string)"],
    ["a Proxy", new Proxy({}, {}), "options.hooks must be an object (got a Proxy)"],
    ["a non-function hook", { onCallEnd: "log" }, "options.hooks.onCallEnd must be a function (got a string)"],
    [
      "a Proxy hook",
      { beforeExecute: new Proxy(() => ({ allow: true }), {}) },
      "options.hooks.beforeExecute must be a function (got a Proxy)",
    ],
    [
      "an accessor hook",
      Object.defineProperty({}, "onCallStart", { get: () => () => {} }),
      "options.hooks.onCallStart must be a data property, not an accessor",
    ],
  ])("hooks that are %s are refused when the executor is made", (_label, hooks, message) => {
    let error: unknown;
    try {
      new InProcessToolExecutor(registry(), { hooks: hooks as never });
    } catch (caught) {
      error = caught;
    }
    expect(isToolContractError(error)).toBe(true);
    expect(error).toMatchObject({ code: "INVALID_ARGUMENT", message });
  });
});

describe("docs/operations.md — Hooks: side effects stay behind the approval", () => {
  test("a denied write never happens; an approved one does", async () => {
    const { writeFileSync } = await import("node:fs");
    const tools = new ToolRegistry([
      {
        name: "write",
        description: "writes a file",
        validate: accept,
        execute: (args: Record<string, unknown>) => {
          writeFileSync(args.path as string, "x");
          return "written";
        },
      },
    ]);
    const executor = new InProcessToolExecutor(tools, {
      hooks: {
        beforeExecute: (snapshot) =>
          String(snapshot.arguments.path).endsWith("ok") ? { allow: true } : { allow: false, reason: "not that file" },
      },
    });
    const refused = join(dir, "secret");
    expect(errorOf(await executor.executeToolCall(call("write", { path: refused }), neverAborted())).message).toBe("not that file");
    expect(existsSync(refused)).toBe(false);
    const allowed = join(dir, "ok");
    expect((await executor.executeToolCall(call("write", { path: allowed }), neverAborted())).content).toBe("written");
    expect(existsSync(allowed)).toBe(true);
  });
});
