// The README's LangChain.js example, run from the installed tarball by test/package/pack.test.ts.
// From the `langchain` import to the "Checks" line this file is the README's code
// block, verbatim (test/package/docs.test.ts holds them together).
import assert from "node:assert/strict";
import { ToolMessage } from "@langchain/core/messages";
import { AIMessage, createAgent, fakeModel, HumanMessage } from "langchain";
import { defineTool, ToolRegistry } from "toolgate";
import { toLangChainTools } from "toolgate/langchain";
import { z } from "zod";

// zod 4 parameters: the model is shown their JSON Schema; execute gets typed arguments.
const add = defineTool({
  name: "add",
  description: "Adds two numbers.",
  parameters: z.object({ left: z.number(), right: z.number() }),
  execute: ({ left, right }) => left + right,
});

// langchain's fakeModel plays the model, offline (a wrong call, a corrected one, an answer); pass your chat model instead.
const model = fakeModel()
  .respondWithTools([{ name: "add", args: { left: "two", right: 3 }, id: "call-1" }])
  .respondWithTools([{ name: "add", args: { left: 2, right: 3 }, id: "call-2" }])
  .respond(new AIMessage("5"));

const agent = createAgent({ model, tools: toLangChainTools(new ToolRegistry([add])) });
const { messages } = await agent.invoke({ messages: [new HumanMessage("What is 2 + 3?")] });
// messages.at(-1)?.content === "5"; the model read call-1's TOOL_ARGUMENTS_INVALID error as an error ToolMessage.

// Checks (not part of the README example).
assert.equal(messages.at(-1)?.content, "5");
const toolMessages = messages.filter((message) => ToolMessage.isInstance(message));
assert.deepEqual(
  toolMessages.map((message) => [message.tool_call_id, message.status]),
  [
    ["call-1", "error"],
    ["call-2", "success"],
  ],
);
assert.match(String(toolMessages[0]?.content), /^\{"error":\{"code":"TOOL_ARGUMENTS_INVALID"/);
assert.equal(toolMessages[1]?.content, "5");
// The model's third request held both tool messages.
const third = model.calls[2]?.messages ?? [];
assert.deepEqual(
  third.filter((message) => ToolMessage.isInstance(message)).map((message) => message.content),
  toolMessages.map((message) => message.content),
);
