// The README's Mastra example, run from the installed tarball by test/package/pack.test.ts
// (under Node >= 22.13 only, which @mastra/core 1.x requires). From the `@mastra/core/agent`
// import to the "Checks" line this file is the README's code block, verbatim
// (test/package/docs.test.ts holds them together).
import assert from "node:assert/strict";
import { Agent } from "@mastra/core/agent";
import type { MastraModelConfig } from "@mastra/core/llm";
import { MockLanguageModelV4 } from "ai/test";
import { defineTool, ToolRegistry } from "toolgate";
import { toMastraTools } from "toolgate/mastra";
import { z } from "zod";

// zod 4 parameters: the model is shown their JSON Schema; execute gets typed arguments.
const add = defineTool({
  name: "add",
  description: "Adds two numbers.",
  parameters: z.object({ left: z.number(), right: z.number() }),
  execute: ({ left, right }) => left + right,
});

// ai/test's mock model plays the model, offline (a wrong call, a corrected one, an answer); pass your provider's instead.
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
const callAdd = (toolCallId: string, args: object) => ({
  content: [{ type: "tool-call" as const, toolCallId, toolName: "add", input: JSON.stringify(args) }],
  finishReason: { unified: "tool-calls" as const, raw: undefined },
  usage,
  warnings: [],
});
const model = new MockLanguageModelV4({
  doGenerate: [
    callAdd("call-1", { left: "two", right: 3 }),
    callAdd("call-2", { left: 2, right: 3 }),
    { content: [{ type: "text", text: "5" }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] },
  ],
});

// End the run on a NonRecoverableToolError: abort it, then rethrow the signal's reason after it.
const controller = new AbortController();
const agent = new Agent({
  id: "calculator",
  name: "calculator",
  instructions: "Add numbers with the add tool.",
  model: model as MastraModelConfig, // ai/test's mock and Mastra type the model spec from different @ai-sdk/provider versions
  tools: toMastraTools(new ToolRegistry([add]), { onNonRecoverableError: (error) => controller.abort(error) }),
});
const result = await agent.generate("What is 2 + 3?", { maxSteps: 5, abortSignal: controller.signal });
controller.signal.throwIfAborted();
// result.text === "5"; the model read call-1's TOOL_ARGUMENTS_INVALID error as the tool's error text.

// Checks (not part of the README example).
assert.equal(result.text, "5");
const toolOutputs = (request: number): unknown[] =>
  (model.doGenerateCalls[request]?.prompt ?? [])
    .filter((message) => message.role === "tool")
    .flatMap((message) => message.content.map((part) => (part.type === "tool-result" ? [part.toolCallId, part.output] : [])));
const [first] = toolOutputs(1) as [string, { type: string; value: string }][];
assert.equal(first?.[0], "call-1");
assert.equal(first?.[1].type, "error-text");
assert.match(first?.[1].value ?? "", /^\{"error":\{"code":"TOOL_ARGUMENTS_INVALID"/);
assert.deepEqual(toolOutputs(2).at(-1), ["call-2", { type: "text", value: "5" }]);
