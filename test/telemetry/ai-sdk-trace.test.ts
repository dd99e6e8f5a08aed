// docs/operations.md — Tracing, under the AI SDK: its OpenTelemetry integration (@ai-sdk/otel,
// passed in experimental_telemetry) runs each tool's execute inside its own `execute_tool`
// span; toolgate's span for the same call is a child of it, in the same trace as the SDK's run.
import { generateText, isStepCount } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { defineTool, ToolRegistry } from "toolgate";
import { toAiSdkTools } from "toolgate/ai-sdk";
import { beforeAll, expect, test } from "vitest";
import { z } from "zod";
import { answer, toolCall } from "../support/adapter-contract/ai-sdk.js";
import { type OtelSdk, registerOtelSdk } from "../support/otel-sdk.js";

let sdk: OtelSdk;
beforeAll(() => {
  sdk = registerOtelSdk();
}, 300_000);

const add = defineTool({
  name: "add",
  description: "Adds two numbers.",
  parameters: z.object({ left: z.number(), right: z.number() }),
  execute: ({ left, right }) => left + right,
});

test("toolgate's execute_tool span is a child of the AI SDK's tool-call span, in the run's trace", async () => {
  const { OpenTelemetry } = sdk.require("@ai-sdk/otel") as { OpenTelemetry: new () => object };
  const result = await generateText({
    model: new MockLanguageModelV4({ doGenerate: [toolCall("call-1", "add", { left: 2, right: 3 }), answer("5")] }),
    tools: toAiSdkTools(new ToolRegistry([add])),
    prompt: "What is 2 + 3?",
    stopWhen: isStepCount(3),
    experimental_telemetry: { isEnabled: true, integrations: [new OpenTelemetry() as never] },
  });
  expect(result.text).toBe("5");
  const spans = sdk.exporter.getFinishedSpans();
  const ours = spans.filter((span) => span.instrumentationScope?.name === "toolgate");
  const theirs = spans.filter((span) => span.instrumentationScope?.name !== "toolgate" && span.name === "execute_tool add");
  expect(ours).toHaveLength(1);
  expect(theirs).toHaveLength(1);
  const [mine, sdkSpan] = [ours[0], theirs[0]];
  expect(mine?.attributes).toMatchObject({ "gen_ai.tool.call.id": "call-1", "gen_ai.tool.name": "add" });
  expect(mine?.parentSpanContext?.spanId).toBe(sdkSpan?.spanContext().spanId);
  expect(mine?.spanContext().traceId).toBe(sdkSpan?.spanContext().traceId);
  // The SDK's span itself hangs off the run's root span: one trace from generateText down to the tool.
  const root = spans.find((span) => span.parentSpanContext === undefined);
  expect(root?.spanContext().traceId).toBe(mine?.spanContext().traceId);
});
