// The README's OpenTelemetry example (from the `@opentelemetry/api` import to the end of the
// file: the README's code block, verbatim, which test/package/docs.test.ts holds together). Run
// by consumers/telemetry.ts, and against the current OpenTelemetry SDK by
// test/package/peer-matrix.test.ts (test/package/peers/otel-sdk.mjs).
import { type Span, SpanStatusCode, trace } from "@opentelemetry/api";
import { InProcessToolExecutor, type ToolExecutorHooks, type ToolRegistry } from "toolgate";

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
