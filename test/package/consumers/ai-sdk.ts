// The README's AI SDK example, run from the installed tarball by test/package/pack.test.ts.
// From the `ai` import to the "Checks" line this file is the README's code block, verbatim
// (test/package/docs.test.ts holds them together).
import assert from "node:assert/strict";
import { generateText, isStepCount } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { defineTool, ToolRegistry } from "toolgate";
import { toAiSdkTools } from "toolgate/ai-sdk";
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

const result = await generateText({
  model,
  tools: toAiSdkTools(new ToolRegistry([add])),
  prompt: "What is 2 + 3?",
  stopWhen: isStepCount(5),
});
// result.text === "5"; the model read call-1's TOOL_ARGUMENTS_INVALID error as the tool's error text.
// Checks

// The arguments' type is inferred from the zod schema (not `any`).
type Exactly<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const inferred: Exactly<Parameters<typeof add.execute>[0], { left: number; right: number }> = true;
assert.equal(inferred, true);

assert.equal(result.text, "5");
const seen = model.doGenerateCalls[1]?.prompt.flatMap((message) => (message.role === "tool" ? message.content : []));
assert.deepEqual(
  seen?.map((part) => part.type === "tool-result" && [part.toolCallId, part.output.type]),
  [["call-1", "error-text"]],
);
const output = seen?.[0]?.type === "tool-result" ? seen[0].output : undefined;
assert.match(output?.type === "error-text" ? output.value : "", /"code":"TOOL_ARGUMENTS_INVALID"/);
assert.deepEqual(
  result.steps[1]?.toolResults.map((part) => [part.toolCallId, part.output]),
  [["call-2", "5"]],
);
