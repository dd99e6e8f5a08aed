// The README's OpenTelemetry example (consumers/telemetry/traced-executor.ts), run from the
// installed tarball by test/package/pack.test.ts and, at both ends of the @opentelemetry/api
// range, by test/package/peer-matrix.test.ts. The checks install a recording tracer provider of
// their own, so the spans the hooks made can be read back; they type-check against every API
// version of the range (a Span of 1.3 has no addLink/addLinks, one of 1.10 requires them).
import assert from "node:assert/strict";
import { type Span, SpanStatusCode, trace } from "@opentelemetry/api";
import { ToolRegistry } from "toolgate";
import { tracedExecutor } from "./telemetry/traced-executor.js";

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
  const base: Omit<Span, "addLink" | "addLinks"> = {
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
  // Added, not written in the literal: the API versions without them would refuse the excess properties.
  const span: Span = Object.assign(base, { addLink: () => span, addLinks: () => span });
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

// toolgate records a span of its own for each call (gen_ai.operation.name "execute_tool", docs/operations.md — Tracing)
// beside the ones the example's hooks open: each is checked apart.
const own = recorded.filter(({ attributes }) => attributes["gen_ai.operation.name"] === "execute_tool");
const example = recorded.filter(({ attributes }) => attributes["gen_ai.operation.name"] === undefined);
assert.equal(own.length + example.length, recorded.length);
assert.deepEqual(
  own.map(({ name, attributes, ended }) => [name, attributes["gen_ai.tool.call.id"], ended]),
  [
    ["execute_tool add", "call-1", true],
    ["execute_tool ecko", "call-2", true],
  ],
);
assert.deepEqual(
  example.map(({ name, attributes, status, ended }) => [
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
assert.equal(typeof example[0]?.attributes["toolgate.run_ms"], "number");
