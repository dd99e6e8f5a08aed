// The README's short Pi example, run from the installed tarball by test/package/pack.test.ts
// against the Pi our lock file has at the top level (docs/adapters.md's longer "Use it with Pi"
// example: pi.ts). From the agent-core import to the "Checks" line this file is the README's
// code block, verbatim (test/package/docs.test.ts holds them together).
import assert from "node:assert/strict";
import { agentLoop, convertToLlm } from "@earendil-works/pi-agent-core";
import { fauxAssistantMessage, fauxProvider, fauxToolCall } from "@earendil-works/pi-ai";
import { defineTool, ToolRegistry } from "toolgate";
import { toPiAgentTools } from "toolgate/pi";
import { typeboxParameters } from "toolgate/typebox";
import Type from "typebox";

const add = defineTool({
  name: "add",
  description: "Adds two numbers.",
  parameters: typeboxParameters(Type.Object({ left: Type.Number(), right: Type.Number() })),
  execute: ({ left, right }) => left + right,
});

// pi-ai's faux provider plays the model, offline: a wrong call, a corrected one, an answer.
const faux = fauxProvider();
faux.setResponses([
  fauxAssistantMessage([fauxToolCall("add", { left: "two", right: 3 }, { id: "call-1" })], { stopReason: "toolUse" }),
  fauxAssistantMessage([fauxToolCall("add", { left: 2, right: 3 }, { id: "call-2" })], { stopReason: "toolUse" }),
  fauxAssistantMessage("2 + 3 = 5"),
]);

const messages = await agentLoop(
  [{ role: "user", content: "What is 2 + 3?", timestamp: Date.now() }],
  { systemPrompt: "You can add numbers.", messages: [], tools: toPiAgentTools(new ToolRegistry([add])) },
  { model: faux.getModel(), convertToLlm },
  new AbortController().signal,
  faux.provider.streamSimple,
).result();
// call-1's tool result is toolgate's TOOL_ARGUMENTS_INVALID error (isError: true), call-2's is "5",
// and the last message is the answer, "2 + 3 = 5".
// Checks

const results = messages.flatMap((message) =>
  message.role === "toolResult"
    ? [[message.toolCallId, message.isError, message.content[0]?.type === "text" ? message.content[0].text : ""]]
    : [],
);
assert.deepEqual(results, [
  ["call-1", true, '{"error":{"code":"TOOL_ARGUMENTS_INVALID","message":"Invalid arguments (1 issue):\\n  - $.left: must be number"}}'],
  ["call-2", false, "5"],
]);
const final = messages.at(-1);
assert.deepEqual(final?.role === "assistant" ? final.content : undefined, [{ type: "text", text: "2 + 3 = 5" }]);
