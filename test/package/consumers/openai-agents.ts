// The README's OpenAI Agents SDK example, run from the installed tarball by
// test/package/pack.test.ts. From the `@openai/agents` import to the "Checks" line this
// file is the README's code block, verbatim (test/package/docs.test.ts holds them together).
import assert from "node:assert/strict";
import { Agent, Runner } from "@openai/agents";
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents/testing";
import { defineTool, ToolRegistry } from "toolgate";
import { toOpenAiAgentsTools } from "toolgate/openai-agents";
import { z } from "zod";

// zod 4 parameters: the model is shown their JSON Schema; execute gets typed arguments.
const add = defineTool({
  name: "add",
  description: "Adds two numbers.",
  parameters: z.object({ left: z.number(), right: z.number() }),
  execute: ({ left, right }) => left + right,
});

// The SDK's ScriptedModel plays the model, offline (a wrong call, a corrected one, an answer); leave it out for the default.
const model = new ScriptedModel([
  [functionCall("add", { left: "two", right: 3 }, { callId: "call-1" })],
  [functionCall("add", { left: 2, right: 3 }, { callId: "call-2" })],
  [assistantMessage("5")],
]);
const agent = new Agent({
  name: "calculator",
  instructions: "Add numbers with the add tool.",
  model,
  tools: toOpenAiAgentsTools(new ToolRegistry([add])),
});

const result = await new Runner({ tracingDisabled: true }).run(agent, "What is 2 + 3?");
// result.finalOutput === "5"; the model read call-1's TOOL_ARGUMENTS_INVALID error as the tool's output.
// Checks

// The arguments' type is inferred from the zod schema (not `any`).
type Exactly<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const inferred: Exactly<Parameters<typeof add.execute>[0], { left: number; right: number }> = true;
assert.equal(inferred, true);

assert.equal(result.finalOutput, "5");
const outputs = (input: unknown): unknown[] =>
  Array.isArray(input) ? input.filter((item) => item.type === "function_call_result").map((item) => [item.callId, item.output?.text]) : [];
const [first] = outputs(model.calls[1]?.request.input);
assert.equal((first as unknown[])[0], "call-1");
assert.match(String((first as unknown[])[1]), /"code":"TOOL_ARGUMENTS_INVALID"/);
assert.deepEqual(outputs(model.calls[2]?.request.input).at(-1), ["call-2", "5"]);

// The tools fit an agent with a typed run context (toolgate tools ignore it).
const scoped = new Agent<{ userId: string }>({ name: "scoped", tools: toOpenAiAgentsTools(new ToolRegistry([add])) });
assert.equal(scoped.tools.length, 1);
