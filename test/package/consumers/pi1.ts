// consumers/pi.ts's loop against Pi 1.x, run from the installed tarball by
// test/package/pack.test.ts: the same toolgate/pi build serves both majors. Pi 1.x is
// installed under npm aliases (pi-agent-core-1, pi-ai-1, as in our devDependencies), beside
// the 0.85 that consumers/pi.ts runs. Pi 1.x's transcript declares tools in system messages
// and has no systemPrompt; otherwise the loop, the faux provider and the results read the same.
import assert from "node:assert/strict";
import { agentLoop } from "pi-agent-core-1";
import { fauxAssistantMessage, fauxProvider, fauxToolCall, PI_AI_VERSION } from "pi-ai-1";
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
const registry = new ToolRegistry([add]);

// A scripted model (pi-ai 1.x's faux provider): a wrong call, a corrected one, an answer.
let shown: readonly { name: string; parameters: unknown }[] = [];
const faux = fauxProvider();
faux.setResponses([
  fauxAssistantMessage([fauxToolCall("add", { left: "two", right: 3 }, { id: "call-1" })], { stopReason: "toolUse" }),
  fauxAssistantMessage([fauxToolCall("add", { left: 2, right: 3 }, { id: "call-2" })], { stopReason: "toolUse" }),
  (context) => {
    // Pi 1.x declares the tools in the transcript's system messages.
    shown = context.messages.flatMap((message) => (message.role === "system" ? (message.toolsAdded ?? []) : []));
    return fauxAssistantMessage("2 + 3 = 5");
  },
]);

const stream = agentLoop(
  [{ role: "user", content: "What is 2 + 3?", timestamp: Date.now() }],
  { messages: [], tools: toPiAgentTools(registry) },
  { model: faux.getModel(), convertToLlm: (messages) => messages },
  new AbortController().signal,
  faux.provider.streamSimple,
);
const ended: [string, boolean][] = [];
for await (const event of stream) {
  if (event.type === "tool_execution_end") ended.push([event.toolCallId, event.isError]);
}
const messages = await stream.result();

// Checks: the major is 1.x, and the run reads as consumers/pi.ts's does under 0.85.
assert.match(PI_AI_VERSION, /^1\./);
assert.deepEqual(ended, [
  ["call-1", true],
  ["call-2", false],
]);
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
// The model was shown toolgate's JSON Schema of the tool.
assert.deepEqual(
  shown.map(({ name, parameters }) => [name, parameters]),
  [
    [
      "add",
      {
        type: "object",
        properties: { left: { type: "number" }, right: { type: "number" } },
        required: ["left", "right"],
      },
    ],
  ],
);
