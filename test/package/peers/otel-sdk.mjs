// The README's OpenTelemetry example under the current OpenTelemetry SDK, in the project
// test/package/peer-matrix.test.ts installs with @opentelemetry/sdk-trace-base (newest) and
// the newest @opentelemetry/api it accepts: the SDK's own tracer provider, registered
// globally, records the spans the example's hooks open and close. Run from that project's
// folder, beside out/ (the consumers compiled there).
import assert from "node:assert/strict";
import { SpanStatusCode, trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { ToolRegistry } from "toolgate";
import { tracedExecutor } from "./out/telemetry/traced-executor.js";

const exporter = new InMemorySpanExporter();
assert.equal(trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })), true);

const executor = tracedExecutor(
  new ToolRegistry([
    {
      name: "add",
      description: "Adds two numbers.",
      validate: (args) => ({ ok: true, value: args }),
      execute: ({ left, right }) => left + right,
    },
  ]),
);
const signal = new AbortController().signal;
await executor.executeToolCall({ type: "toolCall", id: "call-1", name: "add", arguments: { left: 2, right: 3 } }, signal);
await executor.executeToolCall({ type: "toolCall", id: "call-2", name: "ecko", arguments: {} }, signal);
await executor.close();

// toolgate's own spans (gen_ai.operation.name "execute_tool", docs/operations.md — Tracing) beside the example's.
const spans = exporter.getFinishedSpans();
const own = spans.filter((span) => span.attributes["gen_ai.operation.name"] === "execute_tool");
const example = spans.filter((span) => span.attributes["gen_ai.operation.name"] === undefined);
assert.equal(own.length + example.length, spans.length);
assert.deepEqual(
  own.map((span) => [span.name, span.attributes["gen_ai.tool.call.id"], span.status.code]),
  [
    ["execute_tool add", "call-1", SpanStatusCode.UNSET],
    ["execute_tool ecko", "call-2", SpanStatusCode.ERROR],
  ],
);
assert.deepEqual(
  example.map((span) => [
    span.name,
    span.attributes["gen_ai.tool.call.id"],
    span.attributes["toolgate.outcome"],
    span.status.code,
    span.status.message,
  ]),
  [
    ["execute_tool add", "call-1", "success", SpanStatusCode.UNSET, undefined],
    ["execute_tool ecko", "call-2", "error", SpanStatusCode.ERROR, "TOOL_NOT_FOUND"],
  ],
);
assert.equal(typeof example[0]?.attributes["toolgate.run_ms"], "number");
