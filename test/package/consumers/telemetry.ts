// The README's OpenTelemetry example, run from the installed tarball by test/package/pack.test.ts:
// from the `@opentelemetry/api` import to the "Checks" line this file is the README's code block,
// verbatim (test/package/docs.test.ts holds them together). The checks install a recording
// tracer provider of their own, so the spans the hooks made can be read back.
import assert from "node:assert/strict";
import { type Span, SpanStatusCode, trace } from "@opentelemetry/api";
import { InProcessToolExecutor, type ToolExecutorHooks, ToolRegistry } from "toolgate";

// One span per tool call, opened and closed by toolgate's events (no dependency of toolgate's).
export function tracedExecutor(registry: ToolRegistry): InProcessToolExecutor {
  const tracer = trace.getTracer("my-agent");
  const spans = new Map<string, Span>();
  const hooks: ToolExecutorHooks = {
    onCallStart({ toolCallId, toolName }) {
      spans.set(toolCallId, tracer.startSpan(`execute_tool ${toolName}`, { attributes: { "gen_ai.tool.call.id": toolCallId } }));
    },
    onCallEnd({ toolCallId, outcome, code, runMs }) {
      const span = spans.get(toolCallId);
      spans.delete(toolCallId);
      span?.setAttributes({ "toolgate.outcome": outcome, "toolgate.run_ms": runMs });
      if (outcome !== "success") span?.setStatus({ code: SpanStatusCode.ERROR, message: code ?? outcome });
      span?.end();
    },
  };
  return new InProcessToolExecutor(registry, { hooks });
}
// Checks

/** What a recorded span was named, given and told, and whether it ended. */
interface Recorded {
  name: string;
  attributes: Record<string, unknown>;
  status?: { code: SpanStatusCode; message?: string };
  ended: boolean;
}
const recorded: Recorded[] = [];
const recordingSpan = (entry: Recorded): Span => {
  const span: Span = {
    spanContext: () => ({ traceId: "0".repeat(31) + "1", spanId: "0".repeat(15) + "1", traceFlags: 1 }),
    setAttribute: (key, value) => {
      entry.attributes[key] = value;
      return span;
    },
    setAttributes: (attributes) => {
      Object.assign(entry.attributes, attributes);
      return span;
    },
    addEvent: () => span,
    addLink: () => span,
    addLinks: () => span,
    setStatus: (status) => {
      entry.status = status;
      return span;
    },
    updateName: (name) => {
      entry.name = name;
      return span;
    },
    end: () => {
      entry.ended = true;
    },
    isRecording: () => true,
    recordException: () => undefined,
  };
  return span;
};
trace.setGlobalTracerProvider({
  getTracer: () => ({
    startSpan: (name, options) => {
      const entry: Recorded = { name, attributes: { ...options?.attributes }, ended: false };
      recorded.push(entry);
      return recordingSpan(entry);
    },
    startActiveSpan: () => {
      throw new Error("not used by the example");
    },
  }),
});

const registry = new ToolRegistry([
  {
    name: "add",
    description: "Adds two numbers.",
    validate: (args: unknown) => ({ ok: true as const, value: args as { left: number; right: number } }),
    execute: ({ left, right }: { left: number; right: number }) => left + right,
  },
]);
const executor = tracedExecutor(registry);
const signal = new AbortController().signal;
await executor.executeToolCall({ type: "toolCall", id: "call-1", name: "add", arguments: { left: 2, right: 3 } }, signal);
await executor.executeToolCall({ type: "toolCall", id: "call-2", name: "ecko", arguments: {} }, signal);
await executor.close();

assert.deepEqual(
  recorded.map(({ name, attributes, status, ended }) => [
    name,
    attributes["gen_ai.tool.call.id"],
    attributes["toolgate.outcome"],
    status,
    ended,
  ]),
  [
    ["execute_tool add", "call-1", "success", undefined, true],
    ["execute_tool ecko", "call-2", "error", { code: SpanStatusCode.ERROR, message: "TOOL_NOT_FOUND" }, true],
  ],
);
assert.equal(typeof recorded[0]?.attributes["toolgate.run_ms"], "number");
