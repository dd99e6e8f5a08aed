// The signal a call's tool gets through an adapter: never an object another call sees (issue
// 41, defect 1). Without the framework's signal, a fresh one that never aborts; with a signal
// the framework shares among its calls (a run's, an agent's), one of the call's own that follows
// it; with MCP's per-request signal, that signal. The adapter contract suite runs the polluting
// tools through every framework's loop; here, what only direct calls can force: a tool that
// keeps its signal and changes it while another call runs, and the framework's signal left untouched.
import { getEventListeners } from "node:events";
import { RunContext } from "@openai/agents";
import { defineTool, type ToolContext, ToolRegistry } from "toolgate";
import { toAiSdkTools } from "toolgate/ai-sdk";
import { toLangChainTools } from "toolgate/langchain";
import { toMastraTools } from "toolgate/mastra";
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

/** One call of the adapter's tool, the way its framework calls it, with the framework's signal or none. */
interface Adapter {
  readonly name: string;
  readonly call: (registry: ToolRegistry, id: string, signal?: AbortSignal) => Promise<unknown>;
}

async function drain(output: unknown): Promise<unknown> {
  let last: unknown;
  for await (const value of output as AsyncIterable<unknown>) last = value;
  return last;
}

const toolCallItem = (callId: string) => ({ type: "function_call" as const, callId, name: "probe", arguments: "{}" });

const ADAPTERS: Adapter[] = [
  {
    name: "AI SDK (execute's abortSignal)",
    call: (registry, id, abortSignal) =>
      drain(
        toAiSdkTools(registry).probe?.execute?.(
          {},
          {
            toolCallId: id,
            messages: [],
            context: undefined,
            ...(abortSignal === undefined ? {} : { abortSignal }),
          },
        ),
      ),
  },
  {
    name: "OpenAI Agents (invoke's details.signal)",
    call: (registry, id, signal) =>
      toOpenAiAgentsTools(registry)[0]?.invoke(new RunContext(), "{}", {
        toolCall: toolCallItem(id),
        ...(signal === undefined ? {} : { signal }),
      }) as Promise<unknown>,
  },
  {
    name: "Pi (execute's signal)",
    call: (registry, id, signal) => toPiAgentTools(registry)[0]?.execute(id, {}, signal) as Promise<unknown>,
  },
  {
    name: "LangChain (invoke's config.signal)",
    call: (registry, id, signal) =>
      toLangChainTools(registry)[0]?.invoke(
        { type: "tool_call", id, name: "probe", args: {} },
        signal === undefined ? {} : { signal },
      ) as Promise<unknown>,
  },
  {
    name: "Mastra (execute's abortSignal)",
    call: (registry, id, abortSignal) =>
      toMastraTools(registry).probe?.execute?.({}, {
        agent: { toolCallId: id },
        ...(abortSignal === undefined ? {} : { abortSignal }),
      } as never) as Promise<unknown>,
  },
];

const CALLS = 20;

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** A signal as a fresh one reads: not aborted, AbortSignal's prototype, no own string keys, Node's internal state untouched. */
function pristine(signal: AbortSignal): boolean {
  const aborted = Object.getOwnPropertyDescriptor(AbortSignal.prototype, "aborted")?.get?.call(signal);
  const internalAborted = Object.getOwnPropertySymbols(signal).some(
    (key) => String(key).includes("kAborted") && (signal as unknown as Record<symbol, unknown>)[key] !== false,
  );
  return (
    aborted === false &&
    !internalAborted &&
    Object.getPrototypeOf(signal) === AbortSignal.prototype &&
    Object.isExtensible(signal) &&
    Reflect.ownKeys(signal).every((key) => typeof key === "symbol")
  );
}

/** What a hostile tool does to a signal it kept: an own constructor (Node's EventTarget checks read it), and Node's internal aborted state. */
function spoil(signal: AbortSignal): void {
  Object.defineProperty(signal, "constructor", { value: 1, configurable: true, writable: true });
  for (const key of Object.getOwnPropertySymbols(signal)) {
    if (String(key).includes("kAborted")) (signal as unknown as Record<symbol, unknown>)[key] = true;
  }
}

describe.each(ADAPTERS)("docs/adapters.md — the call's signal: $name", (adapter) => {
  it("without the framework's signal, each call gets a fresh one that never aborts", async () => {
    const { seen, registry } = recordingTool(() => {});
    for (let index = 0; index < CALLS; index += 1) await adapter.call(registry, `call-${index}`);
    expect(seen).toHaveLength(CALLS);
    expect(new Set(seen).size).toBe(CALLS);
    expect(seen.every(pristine)).toBe(true);
  });

  it("a tool that kept its signal and spoils it while another call runs reaches no other call", async () => {
    const kept: AbortSignal[] = [];
    const gate = deferred();
    const running = deferred();
    let turn = 0;
    const { seen, registry } = recordingTool(async (signal) => {
      turn += 1;
      if (turn === 1) {
        kept.push(signal);
        return "kept it";
      }
      running.resolve();
      await gate.promise; // the second call is running while the first call's tool spoils what it kept
      return pristine(signal) ? "clean" : "spoiled";
    });
    expect(await adapter.call(registry, "call-1")).toBeDefined();
    const second = adapter.call(registry, "call-2");
    await running.promise;
    spoil(kept[0] as AbortSignal);
    gate.resolve();
    const outcome = await second.then(
      (value) => JSON.stringify(value),
      (error: unknown) => `rejected: ${String(error)}`,
    );
    expect(outcome).toContain("clean");
    expect(seen[1]).not.toBe(seen[0]);
  });

  it("with a framework's signal its calls share, the tool gets one of its own that follows it: spoiling it leaves the framework's untouched, and the framework's abort still rejects the call with its reason", async () => {
    const controller = new AbortController();
    const started = deferred();
    let turn = 0;
    const { seen, registry } = recordingTool((signal) => {
      turn += 1;
      if (turn === 1) {
        spoil(signal);
        return "spoiled mine";
      }
      started.resolve();
      return new Promise<string>(() => {}); // never settles: only the abort ends it
    });
    // The spoiling call ends as its own business (its signal now reads as aborted).
    await adapter.call(registry, "call-1", controller.signal).catch(() => undefined);
    expect(seen[0]).not.toBe(controller.signal);
    expect(pristine(controller.signal)).toBe(true);
    const reason = new Error("the user left");
    const second = adapter.call(registry, "call-2", controller.signal).then(
      () => "resolved",
      (error: unknown) => error,
    );
    await started.promise;
    expect(pristine(seen[1] as AbortSignal)).toBe(true);
    controller.abort(reason);
    expect(await second).toBe(reason);
    expect(seen[1]?.aborted).toBe(true);
    expect(seen[1]?.reason).toBe(reason);
  });

  it("a framework's signal that has already aborted: the call rejects with its reason and the tool never runs", async () => {
    const { seen, registry } = recordingTool(() => {});
    const reason = new Error("too late");
    const outcome = await adapter.call(registry, "call-late", AbortSignal.abort(reason)).then(
      () => "resolved",
      (error: unknown) => error,
    );
    expect(outcome).toBe(reason);
    expect(seen).toEqual([]);
  });
});

/** A tool that hands its context to `use` (which reads the signal when, and if, it wants). */
function contextTool(use: (context: ToolContext) => unknown) {
  const tool = defineTool({
    name: "probe",
    description: "Hands its context over.",
    parameters: z.object({}),
    execute: (_args, context: ToolContext) => use(context) ?? "ok",
  });
  return new ToolRegistry([tool]);
}

/** The `abort` listeners on a signal (Node's own count: toolgate links one listener per signal it watches). */
function abortListeners(signal: AbortSignal): number {
  return getEventListeners(signal, "abort").length;
}

// Issue 43: the tool's signal of its own is made when something first reads it (executor/own-signal.ts).
describe.each(ADAPTERS)("docs/adapters.md — the call's signal, made on first read: $name", (adapter) => {
  it("a tool that reads its signal twice gets the same object, and each call its own", async () => {
    const controller = new AbortController();
    const pairs: [AbortSignal, AbortSignal][] = [];
    const registry = contextTool((context) => {
      pairs.push([context.signal, context.signal]);
    });
    await adapter.call(registry, "call-1", controller.signal);
    await adapter.call(registry, "call-2", controller.signal);
    expect(pairs).toHaveLength(2);
    const [[first, again], [second]] = pairs as [[AbortSignal, AbortSignal], [AbortSignal, AbortSignal]];
    expect(again).toBe(first);
    expect(second).not.toBe(first);
    expect(first).not.toBe(controller.signal);
    expect(second).not.toBe(controller.signal);
  });

  it("a synchronous tool that never reads its signal links nothing to the framework's; one that reads it, one listener while it follows", async () => {
    const untouched = new AbortController();
    await adapter.call(
      contextTool(() => {}),
      "call-unread",
      untouched.signal,
    );
    expect(abortListeners(untouched.signal)).toBe(0);
    const read = new AbortController();
    let listenersWhileRunning = -1;
    await adapter.call(
      contextTool((context) => {
        void context.signal;
        listenersWhileRunning = abortListeners(read.signal);
      }),
      "call-read",
      read.signal,
    );
    expect(listenersWhileRunning).toBe(1);
  });

  it("a tool that first reads its signal after an await still sees the framework's abort, with its reason, and the call rejects with it", async () => {
    const controller = new AbortController();
    const waiting = deferred();
    const resumed = deferred();
    let signal: AbortSignal | undefined;
    let abortedBeforeRead: boolean | undefined;
    const registry = contextTool(async (context) => {
      waiting.resolve();
      await resumed.promise;
      signal = context.signal;
      abortedBeforeRead = signal.aborted;
      return new Promise<never>(() => {}); // only the abort ends it
    });
    const reason = new Error("the run was cancelled");
    const outcome = adapter.call(registry, "call-late-reader", controller.signal).then(
      () => "resolved",
      (error: unknown) => error,
    );
    await waiting.promise;
    resumed.resolve();
    await new Promise<void>((done) => setImmediate(done)); // the tool has read its signal (nothing else runs in between)
    expect(abortedBeforeRead).toBe(false);
    controller.abort(reason);
    expect(await outcome).toBe(reason);
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBe(reason);
  });

  it("a signal first read after its call settled follows nothing: the framework's later abort leaves it (and one read during the call) unaborted", async () => {
    const controller = new AbortController();
    const contexts: ToolContext[] = [];
    const readDuring: AbortSignal[] = [];
    await adapter.call(
      contextTool((context) => {
        contexts.push(context);
      }),
      "call-kept-context",
      controller.signal,
    );
    await adapter.call(
      contextTool((context) => {
        readDuring.push(context.signal);
      }),
      "call-read-during",
      controller.signal,
    );
    controller.abort(new Error("after the calls"));
    const readAfter = (contexts[0] as ToolContext).signal; // first read only now, after the framework's abort
    expect(readAfter.aborted).toBe(false);
    expect(readAfter).not.toBe(controller.signal);
    expect(readDuring[0]?.aborted).toBe(false);
    expect((contexts[0] as ToolContext).signal).toBe(readAfter);
  });

  it("a tool that ignored the abort and first reads its signal after the call rejected finds it aborted, with the framework's reason", async () => {
    const controller = new AbortController();
    const waiting = deferred();
    const resumed = deferred();
    let signal: AbortSignal | undefined;
    const registry = contextTool(async (context) => {
      waiting.resolve();
      await resumed.promise; // ignores its signal: the call rejects while it waits here
      signal = context.signal;
      return "late";
    });
    const reason = new Error("stop now");
    const outcome = adapter.call(registry, "call-ignoring", controller.signal).then(
      () => "resolved",
      (error: unknown) => error,
    );
    await waiting.promise;
    controller.abort(reason);
    expect(await outcome).toBe(reason);
    resumed.resolve();
    await new Promise<void>((done) => setImmediate(done));
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBe(reason);
  });

  it("a tool that plants own properties on its signal leaves the next call sharing the framework's signal a pristine one", async () => {
    const controller = new AbortController();
    let turn = 0;
    const verdicts: boolean[] = [];
    const registry = contextTool((context) => {
      turn += 1;
      const signal = context.signal;
      verdicts.push(pristine(signal));
      if (turn === 1) {
        Object.defineProperty(signal, "aborted", { value: true });
        Object.defineProperty(signal, "constructor", { value: 1 });
        signal.addEventListener("abort", () => {});
        Object.freeze(signal);
      }
    });
    await adapter.call(registry, "call-planting", controller.signal).catch(() => undefined);
    await adapter.call(registry, "call-next", controller.signal);
    expect(verdicts).toEqual([true, true]);
    expect(pristine(controller.signal)).toBe(true);
  });

  it("a framework's signal with own getters (aborted, reason, throwIfAborted, addEventListener) is never read through them", async () => {
    // toolgate reads a signal through AbortSignal.prototype's own getters (executor/signal.ts).
    const controller = new AbortController();
    const signal = controller.signal;
    const reads: string[] = [];
    for (const key of ["aborted", "reason", "throwIfAborted", "addEventListener", "removeEventListener", "constructor"]) {
      const inherited = Reflect.get(AbortSignal.prototype, key, signal) as unknown;
      Object.defineProperty(signal, key, {
        get: () => {
          reads.push(key);
          return inherited;
        },
        configurable: true,
      });
    }
    let inner: AbortSignal | undefined;
    await adapter.call(
      contextTool((context) => {
        inner = context.signal;
      }),
      "call-counted",
      signal,
    );
    const readsByTheCall = [...reads]; // before any expectation (vitest's own checks read `constructor`)
    expect(inner).not.toBe(signal);
    // Node's own addEventListener reads `constructor` once, as toolgate links its one listener
    // to the signal (the tool read its own): as many reads as when every call made its signal up front.
    expect(readsByTheCall).toEqual(["constructor"]);
  });
});
