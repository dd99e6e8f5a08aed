// docs/adapters.md's "Use it with Pi" example, run from the installed tarball by
// test/package/pack.test.ts against Pi 0.85 (the consumer project gets the Pi our lock file
// has at the top level; consumers/pi1.ts runs the same loop against Pi 1.x). From the
// agent-core import to the console.log of the final message this file is the document's code
// block, verbatim; the checks after it hold the run to the output the document shows.
import assert from "node:assert/strict";
import { agentLoop, convertToLlm } from "@earendil-works/pi-agent-core";
import { fauxAssistantMessage, fauxProvider, fauxToolCall } from "@earendil-works/pi-ai";
import { defineTool, ToolRegistry } from "toolgate";
import { toPiAgentTools } from "toolgate/pi";
import { typeboxParameters } from "toolgate/typebox";
import Type from "typebox";

// 1. Define tools once; the model is shown their JSON Schema, toolgate validates.
const registry = new ToolRegistry([
  defineTool({
    name: "add",
    description: "Adds two numbers.",
    parameters: typeboxParameters(Type.Object({ left: Type.Number(), right: Type.Number() })),
    execute: ({ left, right }) => left + right,
  }),
]);

// 2. A scripted model (pi-ai's faux provider): a wrong call, a corrected one, an answer.
const faux = fauxProvider();
faux.setResponses([
  fauxAssistantMessage([fauxToolCall("add", { left: "two", right: 3 }, { id: "call-1" })], { stopReason: "toolUse" }),
  fauxAssistantMessage([fauxToolCall("add", { left: 2, right: 3 }, { id: "call-2" })], { stopReason: "toolUse" }),
  fauxAssistantMessage("2 + 3 = 5"),
]);

// 3. Hand the registry's tools to Pi's own agent loop.
const controller = new AbortController();
const stream = agentLoop(
  [{ role: "user", content: "What is 2 + 3?", timestamp: Date.now() }],
  { systemPrompt: "You can add numbers.", messages: [], tools: toPiAgentTools(registry) },
  { model: faux.getModel(), convertToLlm },
  controller.signal,
  faux.provider.streamSimple,
);
for await (const event of stream) {
  if (event.type === "tool_execution_end") {
    console.log(event.toolCallId, event.isError ? "error:" : "ok:", event.result.content[0].text);
  }
}
const messages = await stream.result();
const final = messages.at(-1);
console.log(final?.role === "assistant" ? final.content : final); // [ { type: 'text', text: '2 + 3 = 5' } ]

// Checks: what the document's output block shows.

// The arguments' type is inferred from the TypeBox schema (not `any`). The block above passes
// its definition inline, so the same definition is named here to read `execute`'s parameter.
const add = defineTool({
  name: "add",
  description: "Adds two numbers.",
  parameters: typeboxParameters(Type.Object({ left: Type.Number(), right: Type.Number() })),
  execute: ({ left, right }) => left + right,
});
type Exactly<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const inferred: Exactly<Parameters<typeof add.execute>[0], { left: number; right: number }> = true;
assert.equal(inferred, true);

const results = messages.flatMap((message) =>
  message.role === "toolResult"
    ? [[message.toolCallId, message.isError, message.content[0]?.type === "text" ? message.content[0].text : ""]]
    : [],
);
assert.deepEqual(results, [
  ["call-1", true, '{"error":{"code":"TOOL_ARGUMENTS_INVALID","message":"Invalid arguments (1 issue):\\n  - $.left: must be number"}}'],
  ["call-2", false, "5"],
]);
assert.deepEqual(final?.role === "assistant" ? final.content : undefined, [{ type: "text", text: "2 + 3 = 5" }]);
