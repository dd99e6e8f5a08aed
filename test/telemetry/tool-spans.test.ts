// docs/operations.md — Tracing: every executor records `execute_tool {name}` through the global
// OpenTelemetry API, here under the real SDK (BasicTracerProvider, in-memory exporter, the
// AsyncLocalStorage context manager; test/support/otel-sdk.ts), in this process.
import { InProcessToolExecutor, isToolContractError, NonRecoverableToolError, ToolRegistry } from "toolgate";
import { WorkerToolExecutor } from "toolgate/worker";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { ToolSpan } from "../../src/executor/tracing.js";
import { call, errorOf, fixture, neverAborted, settle } from "../support/helpers.js";
import { type FinishedSpan, type OtelSdk, registerOtelSdk } from "../support/otel-sdk.js";

const ERROR = 2;
const INTERNAL = 0;

let sdk: OtelSdk;
beforeAll(() => {
  sdk = registerOtelSdk();
}, 300_000);
beforeEach(() => sdk.exporter.reset());

const spans = (): FinishedSpan[] => sdk.exporter.getFinishedSpans();
const spanOf = (id: string): FinishedSpan => {
  const found = spans().filter((span) => span.attributes["gen_ai.tool.call.id"] === id);
  expect(found).toHaveLength(1);
  return found[0] as FinishedSpan;
};

/** Tools of this file: each says how its call ends. */
function registry(): ToolRegistry {
  return new ToolRegistry([
    {
      name: "add",
      description: "Adds two numbers.",
      validate: (a: unknown) => ({ ok: true as const, value: a }),
      execute: (a) => {
        const { left, right } = a as { left: number; right: number };
        return left + right;
      },
    },
    {
      name: "nested",
      description: "Starts a span of its own.",
      validate: (a: unknown) => ({ ok: true as const, value: a }),
      execute: () => sdk.api.trace.getTracer("tool").startActiveSpan("inside the tool", (span) => span.end()),
    },
    {
      name: "progress",
      description: "Reports twice.",
      validate: (a: unknown) => ({ ok: true as const, value: a }),
      execute: async (_a, { reportProgress }) => {
        reportProgress({ progress: 1, total: 2, message: "half" });
        await new Promise((resolve) => setTimeout(resolve, 80)); // past the throttle: the second is delivered too
        reportProgress({ progress: 2, total: 2 });
        return "done";
      },
    },
    {
      name: "hang",
      description: "Waits for its signal.",
      validate: (a: unknown) => ({ ok: true as const, value: a }),
      execute: (_a, { signal }) => new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
    },
    {
      name: "fatal",
      description: "Stops the run.",
      validate: (a: unknown) => ({ ok: true as const, value: a }),
      execute: () => {
        throw new NonRecoverableToolError("invariant");
      },
    },
  ]);
}

describe("docs/operations.md — Tracing: in-process", () => {
  test("one span per call, named and attributed after the GenAI conventions, a child of the context active at the call", async () => {
    const executor = new InProcessToolExecutor(registry());
    const tracer = sdk.api.trace.getTracer("agent");
    const parent = tracer.startSpan("the agent's step");
    const result = await sdk.api.context.with(sdk.api.trace.setSpan(sdk.api.context.active(), parent), () =>
      executor.executeToolCall(call("add", { left: 2, right: 3 }, "call-add"), neverAborted()),
    );
    parent.end();
    expect(result.content).toBe("5");
    const span = spanOf("call-add");
    expect(span.name).toBe("execute_tool add");
    expect(span.kind).toBe(INTERNAL);
    expect(span.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "add",
      "gen_ai.tool.call.id": "call-add",
      "gen_ai.tool.description": "Adds two numbers.",
      "thread.id": expect.any(Number),
    });
    // Opt-in attributes are absent unless asked for; no error on success.
    expect(span.attributes["gen_ai.tool.call.arguments"]).toBeUndefined();
    expect(span.attributes["gen_ai.tool.call.result"]).toBeUndefined();
    expect(span.attributes["error.type"]).toBeUndefined();
    expect(span.status.code).toBe(0);
    expect(span.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(span.spanContext().traceId).toBe(parent.spanContext().traceId);
  });

  test("a batch: one span per member, each a child of the context active at executeBatch", async () => {
    const executor = new InProcessToolExecutor(registry());
    const parent = sdk.api.trace.getTracer("agent").startSpan("the agent's step");
    const results = await sdk.api.context.with(sdk.api.trace.setSpan(sdk.api.context.active(), parent), () =>
      executor.executeBatch(
        [call("add", { left: 1, right: 1 }, "batch-1"), call("add", { left: 2, right: 2 }, "batch-2")],
        neverAborted(),
        {
          concurrency: 1,
        },
      ),
    );
    parent.end();
    expect(results.map((result) => result.content)).toEqual(["2", "4"]);
    for (const id of ["batch-1", "batch-2"]) expect(spanOf(id).parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
  });

  test("a call made outside any span is a root span; the tool's own spans are children of execute_tool", async () => {
    const executor = new InProcessToolExecutor(registry());
    await executor.executeToolCall(call("nested", {}, "call-nested"), neverAborted());
    const span = spanOf("call-nested");
    expect(span.parentSpanContext).toBeUndefined();
    const inside = spans().find((each) => each.name === "inside the tool");
    expect(inside?.parentSpanContext?.spanId).toBe(span.spanContext().spanId);
  });

  test("a denial, a timeout, an unknown tool, an abort and a fatal error each end the span with their own error.type", async () => {
    const executor = new InProcessToolExecutor(registry(), {
      hooks: { beforeExecute: (snapshot) => (snapshot.id === "call-denied" ? { allow: false, reason: "not today" } : { allow: true }) },
    });
    await executor.executeToolCall(call("add", { left: 1, right: 1 }, "call-denied"), neverAborted());
    await executor.executeToolCall(call("hang", {}, "call-timeout"), neverAborted(), { timeoutMs: 30 });
    await executor.executeToolCall(call("ad", {}, "call-missing"), neverAborted());
    const controller = new AbortController();
    const aborted = executor.executeToolCall(call("hang", {}, "call-aborted"), controller.signal);
    controller.abort(new Error("the user left"));
    expect((await settle(aborted)).ok).toBe(false);
    expect((await settle(executor.executeToolCall(call("fatal", {}, "call-fatal"), neverAborted()))).ok).toBe(false);

    const ended = (id: string) => [spanOf(id).attributes["error.type"], spanOf(id).status.code, spanOf(id).status.message];
    expect(ended("call-denied")).toEqual(["TOOL_CALL_DENIED", ERROR, "TOOL_CALL_DENIED"]);
    expect(ended("call-timeout")).toEqual(["TOOL_EXECUTION_TIMEOUT", ERROR, "TOOL_EXECUTION_TIMEOUT"]);
    expect(ended("call-missing")).toEqual(["TOOL_NOT_FOUND", ERROR, "TOOL_NOT_FOUND"]);
    expect(ended("call-aborted")).toEqual(["aborted", ERROR, "the call was aborted"]);
    expect(ended("call-fatal")).toEqual(["NonRecoverableToolError", ERROR, "the call failed without a result"]);
    // The unknown tool has no description to give.
    expect(spanOf("call-missing").attributes["gen_ai.tool.description"]).toBeUndefined();
    expect(spans().every((span) => span.ended)).toBe(true);
  });

  test("progress reports are span events, whether the caller listens or not; the caller still gets them", async () => {
    const executor = new InProcessToolExecutor(registry());
    const heard: number[] = [];
    await executor.executeToolCall(call("progress", {}, "call-listened"), neverAborted(), { onProgress: (p) => heard.push(p.progress) });
    await executor.executeToolCall(call("progress", {}, "call-unheard"), neverAborted());
    expect(heard).toEqual([1, 2]);
    for (const id of ["call-listened", "call-unheard"]) {
      expect(spanOf(id).events.map((event) => [event.name, event.attributes])).toEqual([
        ["toolgate.progress", { "toolgate.progress": 1, "toolgate.progress.total": 2, "toolgate.progress.message": "half" }],
        ["toolgate.progress", { "toolgate.progress": 2, "toolgate.progress.total": 2 }],
      ]);
    }
  });

  test("arguments and results are recorded only when opted in, cut to maxRecordedCodePoints", async () => {
    const executor = new InProcessToolExecutor(registry(), {
      tracing: { recordArguments: true, recordResults: true, maxRecordedCodePoints: 12 },
    });
    await executor.executeToolCall(call("add", { left: 20, right: 22 }, "call-recorded"), neverAborted());
    expect(spanOf("call-recorded").attributes).toMatchObject({
      "gen_ai.tool.call.arguments": '{"left":20,"',
      "gen_ai.tool.call.result": "42",
    });
  });

  test("options.tracing is validated like every option", () => {
    const refusal = (tracing: unknown): string => {
      try {
        new InProcessToolExecutor(registry(), { tracing } as never);
      } catch (error) {
        expect(isToolContractError(error) && error.code).toBe("INVALID_ARGUMENT");
        return (error as Error).message;
      }
      throw new Error("expected a refusal");
    };
    expect(refusal({ recordArgument: true })).toMatch(
      /^options\.tracing has an unknown option "recordArgument" \(did you mean "recordArguments"\?\)/,
    );
    expect(refusal({ recordResults: "yes" })).toBe("options.tracing.recordResults must be a boolean (got a string)");
    expect(refusal({ maxRecordedCodePoints: 4097 })).toMatch(/^options\.tracing\.maxRecordedCodePoints must be an integer from 1 to 4096/);
    expect(refusal(true)).toMatch(/^options\.tracing must be an object/);
    const reads: string[] = [];
    const getter = Object.defineProperty({}, "recordResults", { get: () => reads.push("read"), enumerable: true });
    expect(refusal(getter)).toMatch(/must be a data property/);
    expect(reads).toEqual([]);
  });

  test("a span whose every method throws (a broken processor, say) changes nothing for the call", () => {
    const broken = {
      spanContext: () => {
        throw new Error("spanContext");
      },
      setAttribute: () => {
        throw new Error("setAttribute");
      },
      addEvent: () => {
        throw new Error("addEvent");
      },
      setStatus: () => {
        throw new Error("setStatus");
      },
      isRecording: () => true,
      end: () => {
        throw new Error("end");
      },
    };
    const span = new ToolSpan(sdk.api as never, broken, sdk.api.context.active(), {
      recordArguments: true,
      recordResults: true,
      maxRecordedCodePoints: 10,
    });
    const snapshot = Object.freeze(call("add", { left: 1, right: 2 }));
    const tool = registry().get("add");
    expect(() => {
      if (tool !== undefined) span.described(tool, snapshot);
      span.waited(1);
      span.ranOn(1);
      span.threadKilled();
      span.progressListener(undefined)({ toolCallId: "c", toolName: "add", progress: 1, total: undefined, message: undefined });
      span.ended({ role: "toolResult", id: "tool-result-c", toolCallId: "c", toolName: "add", content: "3", isError: false });
      span.rejected(new Error("late"), false);
    }).not.toThrow();
  });
});

describe("docs/operations.md — Tracing: the worker pool", () => {
  let executor: WorkerToolExecutor;
  beforeAll(async () => {
    executor = await WorkerToolExecutor.create({
      modules: [fixture("worker-operator"), fixture("operator-tools")],
      maxThreads: 1,
      abortGraceMs: 100,
    });
  });
  afterAll(() => executor.close());

  test("the span covers the wait for a thread and the run; it names the thread and the wait", async () => {
    const parent = sdk.api.trace.getTracer("agent").startSpan("step");
    const active = sdk.api.trace.setSpan(sdk.api.context.active(), parent);
    const first = sdk.api.context.with(active, () => executor.executeToolCall(call("wait", { ms: 200 }, "call-first"), neverAborted()));
    const second = sdk.api.context.with(active, () => executor.executeToolCall(call("appOf", {}, "call-second"), neverAborted()));
    const app = JSON.parse((await second).content) as { threadId: number };
    await first;
    parent.end();
    const span = spanOf("call-second");
    expect(span.attributes["thread.id"]).toBe(app.threadId);
    expect(span.attributes["toolgate.queue_wait_ms"]).toBeGreaterThanOrEqual(150);
    expect(span.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    // Started when the call was made, before it waited: its duration holds the wait.
    const durationMs = (s: FinishedSpan) => {
      const [seconds, nanos] = (s as unknown as { duration: [number, number] }).duration;
      return seconds * 1000 + nanos / 1e6;
    };
    expect(durationMs(span)).toBeGreaterThanOrEqual(150);
  });

  test("a thread that dies under its call: the span says the thread was killed, with the call's error", async () => {
    const result = await executor.executeToolCall(call("exit", {}, "call-exit"), neverAborted());
    expect(errorOf(result).code).toBe("TOOL_EXECUTION_FAILED");
    const span = spanOf("call-exit");
    expect(span.attributes).toMatchObject({
      "toolgate.thread_killed": true,
      "error.type": "TOOL_EXECUTION_FAILED",
      "thread.id": expect.any(Number),
    });
    expect(span.events.map((event) => event.name)).toContain("toolgate.thread_killed");
    expect(span.status.code).toBe(ERROR);
  });

  test("a timeout on a thread and an abort each end the span with their own status", async () => {
    await executor.executeToolCall(call("wait", { ms: 5000 }, "call-late"), neverAborted(), { timeoutMs: 50 });
    const controller = new AbortController();
    const pending = executor.executeToolCall(call("wait", { ms: 5000 }, "call-stopped"), controller.signal);
    setTimeout(() => controller.abort(), 50);
    expect((await settle(pending)).ok).toBe(false);
    expect(spanOf("call-late").attributes["error.type"]).toBe("TOOL_EXECUTION_TIMEOUT");
    expect(spanOf("call-stopped").attributes["error.type"]).toBe("aborted");
  });

  test("a tool's progress in its thread: span events", async () => {
    const counting = await WorkerToolExecutor.create({ modules: [fixture("progress-tools")], maxThreads: 1 });
    await counting.executeToolCall(call("count", { to: 1, waitMs: 100 }, "call-count"), neverAborted());
    expect(spanOf("call-count").events.map((event) => event.attributes)).toEqual([
      { "toolgate.progress": 1, "toolgate.progress.total": 1, "toolgate.progress.message": "step 1" },
    ]);
    await counting.close();
  });
});
