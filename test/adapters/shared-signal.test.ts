// The signal an adapter gives a call when the framework passes none: calls share one that
// never aborts (making one per call cost as much as the rest of a trivial call), but nothing a
// tool leaves on it piles up over later calls, and a framework's own signal still aborts the call.
import { getEventListeners } from "node:events";
import { RunContext } from "@openai/agents";
import { type CallOptions, defineTool, InProcessToolExecutor, type ToolContext, type ToolExecutor, ToolRegistry } from "toolgate";
import { toAiSdkTools } from "toolgate/ai-sdk";
import { toLangChainTools } from "toolgate/langchain";
import { toOpenAiAgentsTools } from "toolgate/openai-agents";
import { toPiAgentTools } from "toolgate/pi";
import { describe, expect, it } from "vitest";
import { z } from "zod";

type Use = (signal: AbortSignal) => unknown;

/** A tool that records the signal of each call and does `use` with it (its result, else "ok", is the tool's). */
function recordingTool(use: Use) {
  const seen: AbortSignal[] = [];
  const tool = defineTool({
    name: "probe",
    description: "Records its signal.",
    parameters: z.object({}),
    execute: (_args, { signal }: ToolContext) => {
      seen.push(signal);
      return use(signal) ?? "ok";
    },
  });
  return { seen, registry: new ToolRegistry([tool]) };
}

type Source = ToolRegistry | Pick<ToolExecutor, "registry" | "executeToolCall">;

/** One call of the adapter's tool, the way its framework calls it when it has no signal to pass. */
interface Adapter {
  readonly name: string;
  readonly call: (source: Source, id: string) => Promise<unknown>;
  /** The same call with the framework's signal. */
  readonly callWith: (source: Source, id: string, signal: AbortSignal) => Promise<unknown>;
}

async function drain(output: unknown): Promise<unknown> {
  let last: unknown;
  for await (const value of output as AsyncIterable<unknown>) last = value;
  return last;
}

const adapters: Adapter[] = [
  {
    name: "AI SDK (execute without abortSignal)",
    call: (source, id) => drain(toAiSdkTools(source).probe?.execute?.({}, { toolCallId: id, messages: [], context: undefined })),
    callWith: (source, id, abortSignal) =>
      drain(toAiSdkTools(source).probe?.execute?.({}, { toolCallId: id, messages: [], context: undefined, abortSignal })),
  },
  {
    name: "OpenAI Agents (invoke without details.signal)",
    call: (source, id) =>
      toOpenAiAgentsTools(source)[0]?.invoke(new RunContext(), "{}", { toolCall: toolCallItem(id) }) as Promise<unknown>,
    callWith: (source, id, signal) =>
      toOpenAiAgentsTools(source)[0]?.invoke(new RunContext(), "{}", { toolCall: toolCallItem(id), signal }) as Promise<unknown>,
  },
  {
    name: "Pi (execute without a signal)",
    call: (source, id) => toPiAgentTools(source)[0]?.execute(id, {}) as Promise<unknown>,
    callWith: (source, id, signal) => toPiAgentTools(source)[0]?.execute(id, {}, signal) as Promise<unknown>,
  },
  {
    name: "LangChain (invoke without config.signal)",
    call: (source, id) => toLangChainTools(source)[0]?.invoke({ type: "tool_call", id, name: "probe", args: {} }) as Promise<unknown>,
    callWith: (source, id, signal) =>
      toLangChainTools(source)[0]?.invoke({ type: "tool_call", id, name: "probe", args: {} }, { signal }) as Promise<unknown>,
  },
];

function toolCallItem(callId: string) {
  return { type: "function_call" as const, callId, name: "probe", arguments: "{}" };
}

const CALLS = 40;

describe.each(adapters)("the signal of a call without the framework's: $name", (adapter) => {
  it("calls that leave nothing on it share one signal, which never aborts", async () => {
    const { seen, registry } = recordingTool(() => {});
    for (let index = 0; index < CALLS; index += 1) await adapter.call(registry, `call-${index}`);
    expect(seen).toHaveLength(CALLS);
    expect(new Set(seen).size).toBe(1);
    expect(seen[0]?.aborted).toBe(false);
  });

  it("a tool that adds an abort listener on every call never finds more than one on its signal", async () => {
    const found: number[] = [];
    const { seen, registry } = recordingTool((signal) => {
      found.push(getEventListeners(signal, "abort").length);
      signal.addEventListener("abort", () => {});
    });
    for (let index = 0; index < CALLS; index += 1) await adapter.call(registry, `call-${index}`);
    expect(Math.max(...found)).toBeLessThanOrEqual(1);
    expectNoPileUp(seen);
  });

  it("calls running at once that each leave a listener do not pile them up either", async () => {
    const release = deferred();
    const { seen, registry } = recordingTool(async (signal) => {
      signal.addEventListener("abort", () => {});
      await release.promise;
    });
    const running: Promise<unknown>[] = [];
    for (let index = 0; index < CALLS; index += 1) running.push(adapter.call(registry, `call-${index}`));
    release.resolve();
    await Promise.all(running);
    expect(seen).toHaveLength(CALLS);
    expectNoPileUp(seen);
  });

  it("a signal that `AbortSignal.any` was given (Node keeps its dependants on it) is not handed out again", async () => {
    const { seen, registry } = recordingTool((signal) => {
      AbortSignal.any([signal]);
    });
    for (let index = 0; index < 10; index += 1) await adapter.call(registry, `call-${index}`);
    expect(new Set(seen).size).toBe(10);
  });

  it("a signal a tool froze, or gave another prototype, is not handed out again", async () => {
    let turn = 0;
    const { seen, registry } = recordingTool((signal) => {
      turn += 1;
      if (turn === 1) Object.freeze(signal);
      if (turn === 2) Object.setPrototypeOf(signal, EventTarget.prototype);
    });
    for (let index = 0; index < 3; index += 1) await adapter.call(registry, `call-${index}`);
    expect(new Set(seen).size).toBe(3);
    for (const signal of seen.slice(2)) expect(Object.getPrototypeOf(signal)).toBe(AbortSignal.prototype);
  });

  it("a `listeners` method a tool put on its signal is never called, and that signal is not handed out again", async () => {
    let called = 0;
    const listeners = (): unknown[] => {
      called += 1;
      return [];
    };
    const { seen, registry } = recordingTool((signal) => {
      Object.defineProperty(signal, "listeners", { value: listeners, configurable: true });
    });
    for (let index = 0; index < 3; index += 1) await adapter.call(registry, `call-${index}`);
    expect(called).toBe(0);
    expect(new Set(seen).size).toBe(3);
  });

  it("a `listeners` planted on EventTarget.prototype is never called, and no signal is shared meanwhile", async () => {
    let called = 0;
    const listeners = (): unknown[] => {
      called += 1;
      return [];
    };
    const { seen, registry } = recordingTool(() => {});
    Object.defineProperty(EventTarget.prototype, "listeners", { value: listeners, configurable: true });
    try {
      for (let index = 0; index < 3; index += 1) await adapter.call(registry, `call-${index}`);
    } finally {
      delete (EventTarget.prototype as { listeners?: unknown }).listeners;
    }
    expect(called).toBe(0);
    expect(new Set(seen).size).toBe(3);
    await adapter.call(registry, "call-after");
    await adapter.call(registry, "call-after-2");
    expect(seen[4]).toBe(seen[3]); // shared again once nothing is planted
  });

  it("the boundary's own abort watcher (a call timeout) does not keep calls from sharing the signal", async () => {
    const { seen, registry } = recordingTool(() => {});
    const executor = new InProcessToolExecutor(registry, { timeoutMs: 60_000 });
    const passed: AbortSignal[] = [];
    const source = {
      registry: executor.registry,
      executeToolCall: (call: unknown, signal: AbortSignal, options?: CallOptions) => {
        passed.push(signal);
        return executor.executeToolCall(call, signal, options);
      },
    };
    for (let index = 0; index < 10; index += 1) await adapter.call(source, `call-${index}`);
    expect(seen).toHaveLength(10); // the tool saw the timeout's own signal
    // The first call may get a signal an earlier test left a listener on; from the second on, one signal with the watcher alone.
    expect(new Set(passed.slice(1)).size).toBe(1);
    expect(getEventListeners(passed[9] as AbortSignal, "abort")).toHaveLength(1);
    await executor.close();
  });

  it("with the framework's signal, the tool sees that signal, and aborting it rejects the call with its reason", async () => {
    const started = deferred();
    const { seen, registry } = recordingTool(() => {
      started.resolve();
      return new Promise<string>(() => {});
    });
    const controller = new AbortController();
    const reason = new Error("stop");
    const call = adapter.callWith(registry, "call-abort", controller.signal).then(
      () => "resolved",
      (error: unknown) => error,
    );
    await started.promise;
    controller.abort(reason);
    const outcome = await call;
    expect(seen).toEqual([controller.signal]);
    // OpenAI Agents wraps a tool's rejection in its ToolCallError when the Runner calls it; invoked directly, it is the reason itself.
    expect(outcome).toBe(reason);
  });
});

/**
 * A signal is handed out only while it holds at most one abort listener, so here (each call
 * leaves its listener before the next call starts) no signal goes to more than two calls, and
 * none ends with more than three listeners: one from before, the two calls', and the boundary's
 * own watcher (added once per signal when a call is asynchronous). Without the check one
 * signal would go to all 40 calls and hold 40.
 */
function expectNoPileUp(seen: readonly AbortSignal[]): void {
  const calls = new Map<AbortSignal, number>();
  for (const signal of seen) calls.set(signal, (calls.get(signal) ?? 0) + 1);
  expect(Math.max(...calls.values())).toBeLessThanOrEqual(2);
  for (const signal of calls.keys()) expect(getEventListeners(signal, "abort").length).toBeLessThanOrEqual(3);
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}
