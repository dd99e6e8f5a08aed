// The OpenTelemetry example of docs/operations.md, run: one span per tool call, built from
// toolgate's events with @opentelemetry/api (a devDependency; toolgate itself never imports it).
import {
  type Attributes,
  type Span,
  type SpanAttributeValue,
  type SpanContext,
  SpanKind,
  type SpanOptions,
  type SpanStatus,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { InProcessToolExecutor, NonRecoverableToolError, type ToolExecutorHooks, ToolRegistry } from "toolgate";
import { describe, expect, test } from "vitest";
import { call, neverAborted, settle } from "../support/helpers.js";

// ---- the example, as docs/operations.md shows it ----
/** One span per tool call, named and attributed after the OpenTelemetry GenAI conventions. */
function toolSpans(tracer: Pick<Tracer, "startSpan">): ToolExecutorHooks {
  const open = new Map<string, Span>();
  return {
    onCallStart({ toolCallId, toolName }) {
      const span = tracer.startSpan(`execute_tool ${toolName}`, {
        kind: SpanKind.INTERNAL,
        attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": toolName, "gen_ai.tool.call.id": toolCallId },
      });
      open.set(toolCallId, span);
    },
    onCallEnd(event) {
      const span = open.get(event.toolCallId);
      if (span === undefined) return;
      open.delete(event.toolCallId);
      span.setAttributes({
        "toolgate.outcome": event.outcome,
        "toolgate.queue_wait_ms": event.queueWaitMs,
        "toolgate.run_ms": event.runMs,
        "toolgate.thread_killed": event.threadKilled,
        ...(event.threadId === undefined ? {} : { "thread.id": event.threadId }),
        ...(event.code === undefined ? {} : { "error.type": event.code }),
      });
      if (event.outcome !== "success") span.setStatus({ code: SpanStatusCode.ERROR, message: event.code ?? event.outcome });
      span.end();
    },
  };
}
// ---- end of the example ----

/** A span that remembers what was done to it: the in-memory tracer of this test. */
class RecordedSpan implements Span {
  readonly attributes: Attributes;
  status: SpanStatus = { code: SpanStatusCode.UNSET };
  ended = false;
  constructor(
    public name: string,
    options: SpanOptions | undefined,
  ) {
    this.attributes = { ...options?.attributes };
  }
  spanContext(): SpanContext {
    return { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: 1 };
  }
  setAttribute(key: string, value: SpanAttributeValue): this {
    this.attributes[key] = value;
    return this;
  }
  setAttributes(attributes: Attributes): this {
    Object.assign(this.attributes, attributes);
    return this;
  }
  addEvent(): this {
    return this;
  }
  addLink(): this {
    return this;
  }
  addLinks(): this {
    return this;
  }
  setStatus(status: SpanStatus): this {
    this.status = status;
    return this;
  }
  updateName(name: string): this {
    this.name = name;
    return this;
  }
  end(): void {
    this.ended = true;
  }
  isRecording(): boolean {
    return !this.ended;
  }
  recordException(): void {}
}

function memoryTracer(): Pick<Tracer, "startSpan"> & { spans: RecordedSpan[] } {
  const spans: RecordedSpan[] = [];
  return {
    spans,
    startSpan(name, options) {
      const span = new RecordedSpan(name, options);
      spans.push(span);
      return span;
    },
  };
}

const registry = new ToolRegistry([
  { name: "echo", description: "echoes", validate: (a: unknown) => ({ ok: true as const, value: a }), execute: (a: unknown) => a },
  {
    name: "fatal",
    description: "stops the run",
    validate: (a: unknown) => ({ ok: true as const, value: a }),
    execute: () => {
      throw new NonRecoverableToolError("invariant");
    },
  },
]);

describe("docs/operations.md — OpenTelemetry spans: from the events", () => {
  test("every call is one ended span, attributed with its outcome, timings and thread", async () => {
    const tracer = memoryTracer();
    const hooks = toolSpans(tracer);
    const executor = new InProcessToolExecutor(registry, {
      hooks: { ...hooks, beforeExecute: (snapshot) => (snapshot.arguments.deny ? { allow: false, reason: "no" } : { allow: true }) },
    });
    await executor.executeToolCall(call("echo", { a: 1 }, "call-ok"), neverAborted());
    await executor.executeToolCall(call("echo", { deny: true }, "call-denied"), neverAborted());
    await executor.executeToolCall(call("missing", {}, "call-missing"), neverAborted());
    expect((await settle(executor.executeToolCall(call("fatal", {}, "call-fatal"), neverAborted()))).ok).toBe(false);

    expect(tracer.spans.map((span) => [span.name, span.ended])).toEqual([
      ["execute_tool echo", true],
      ["execute_tool echo", true],
      ["execute_tool missing", true],
      ["execute_tool fatal", true],
    ]);
    const [ok, denied, missing, fatal] = tracer.spans as [RecordedSpan, RecordedSpan, RecordedSpan, RecordedSpan];
    expect(ok.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "echo",
      "gen_ai.tool.call.id": "call-ok",
      "toolgate.outcome": "success",
      "toolgate.thread_killed": false,
      "thread.id": expect.any(Number),
    });
    expect(ok.attributes["toolgate.run_ms"]).toBeGreaterThanOrEqual(0);
    expect(ok.status.code).toBe(SpanStatusCode.UNSET);
    expect(denied.attributes["error.type"]).toBe("TOOL_CALL_DENIED");
    expect(denied.status).toEqual({ code: SpanStatusCode.ERROR, message: "TOOL_CALL_DENIED" });
    expect(missing.status).toEqual({ code: SpanStatusCode.ERROR, message: "TOOL_NOT_FOUND" });
    expect("thread.id" in missing.attributes).toBe(false); // it never ran
    expect(fatal.status).toEqual({ code: SpanStatusCode.ERROR, message: "rejected" });
  });

  test("with no SDK registered, the API's no-op tracer makes non-recording spans and calls are unaffected", async () => {
    const noop = trace.getTracer("toolgate-test");
    expect(noop.startSpan("probe").isRecording()).toBe(false);
    const executor = new InProcessToolExecutor(registry, { hooks: toolSpans(noop) });
    const result = await executor.executeToolCall(call("echo", { b: 2 }), neverAborted());
    expect(result).toMatchObject({ content: '{"b":2}', isError: false });
  });
});
