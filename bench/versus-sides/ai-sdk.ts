// The AI SDK side of the versus rows, shared by the wall-time case (bench/cases/versus.ts) and
// the instruction counts (bench/instructions/rows.ts, which imports it only in the AI SDK rows'
// processes): the SDK's mock model, one agent step, the user's own tool, and the SDK's own
// per-call steps (the in-process row's peer).
import { executeTool, safeValidateTypes } from "@ai-sdk/provider-utils";
import {
  type Tool as AiSdkTool,
  tool as aiSdkTool,
  asSchema,
  generateText,
  isStepCount,
  type ToolExecutionOptions,
  type ToolSet,
} from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { pingArguments, versusPing } from "../versus-tools.js";

/** An AI SDK tool that has an `execute` (what the SDK's `executeTool` takes). */
export type ExecutableAiSdkTool = AiSdkTool & { readonly execute: NonNullable<AiSdkTool["execute"]> };

/** The user's own AI SDK tool: the same zod schema and `execute`, no boundary. */
export const sdkPing = (execute: (input: { n: number }) => unknown): ExecutableAiSdkTool =>
  aiSdkTool({ description: versusPing.description, inputSchema: pingArguments, execute }) as ExecutableAiSdkTool;

/** A model that answers every request with one call of `ping` (the SDK's own mock model). */
export function aiSdkModel(): MockLanguageModelV4 {
  const usage = {
    inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 1, text: 1, reasoning: undefined },
  };
  const model = new MockLanguageModelV4({
    doGenerate: async () => {
      model.doGenerateCalls.length = 0; // the mock records every request: keep it from growing over a run
      return {
        content: [{ type: "tool-call", toolCallId: "call-1", toolName: "ping", input: '{"n":1}' }],
        finishReason: { unified: "tool-calls", raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
  return model;
}

/** One agent step: the model calls `ping`, the SDK runs it, the step ends. Returns the tool's output. */
export async function aiSdkStep(model: MockLanguageModelV4, tools: ToolSet): Promise<unknown> {
  const result = await generateText({ model, tools, prompt: "go", stopWhen: isStepCount(1) });
  const part = result.steps[0]?.content.find((item) => item.type === "tool-result" || item.type === "tool-error");
  return part?.type === "tool-result" ? part.output : part;
}

/** JSON round trip of an in-process tool output, as the SDK makes its model output (`toJSONValue` in ai's source). */
function toJsonValue(value: unknown): unknown {
  if (value === undefined) return null;
  const text = JSON.stringify(value);
  return text === undefined ? null : JSON.parse(text);
}

/**
 * The AI SDK's own work per tool call, as ai 7's generateText does it (doParseToolCall,
 * executeToolCall, createToolModelOutput): the tool's schema checked with the SDK's
 * `safeValidateTypes` (after `asSchema`, per call as the SDK does), the SDK's own
 * `executeTool` generator, and the output's JSON round trip. The model's argument text is
 * parsed before both sides (toolgate gets the parsed arguments too), and the SDK's
 * bookkeeping around these steps (callbacks, telemetry wrappers, timing) is left out: this
 * side is a lower bound of the SDK's own per-call cost.
 */
export async function aiSdkOwnSteps(sdkTool: ExecutableAiSdkTool, input: unknown): Promise<unknown> {
  const parsed = await safeValidateTypes({ value: input, schema: asSchema(sdkTool.inputSchema) });
  if (!parsed.success) throw parsed.error;
  let output: unknown;
  // The options the SDK passes for a call without abort signal, tool context or sandbox.
  const options = { toolCallId: "call-1", messages: [], abortSignal: undefined, context: undefined, experimental_sandbox: undefined };
  for await (const part of executeTool({
    tool: sdkTool,
    input: parsed.value,
    options: options as unknown as ToolExecutionOptions<never>,
  })) {
    if (part.type === "final") output = part.output;
  }
  return { type: "json", value: toJsonValue(output) };
}
