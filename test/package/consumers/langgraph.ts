// LangGraph's own agent over toolgate tools, with @langchain/core and @langchain/langgraph
// alone (no `langchain`: a LangGraph user's project), run from the installed tarball by
// test/package/pack.test.ts and, at both ends of the @langchain/langgraph range, by
// test/package/peer-matrix.test.ts. createReactAgent with the two settings docs/adapters.md
// gives for it: an approval through LangGraph's `interrupt`, resumed with a Command, and a
// ToolNode that does not catch, so a fatal error ends the run with it.
// docs/adapters.md — Use it with LangChain.js and LangGraph.
import assert from "node:assert/strict";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createReactAgent, ToolNode } from "@langchain/langgraph/prebuilt";
import { defineTool, NonRecoverableToolError, ToolRegistry } from "toolgate";
import { toLangChainTools } from "toolgate/langchain";
import { z } from "zod";

/** Plays the model, offline: each request is answered with the next message of the script. */
class ScriptedModel extends BaseChatModel {
  readonly #replies: AIMessage[];

  constructor(replies: AIMessage[]) {
    super({});
    this.#replies = replies;
  }

  _llmType(): string {
    return "scripted";
  }

  // A provider would show the model the tools here; the script needs no showing.
  override bindTools(): this {
    return this;
  }

  async _generate(): Promise<ChatResult> {
    const message = this.#replies.shift();
    if (message === undefined) throw new Error("the script ran out of replies");
    return { generations: [{ message, text: "" }] };
  }
}
const callTool = (name: string, args: Record<string, unknown>, id: string) =>
  new AIMessage({ content: "", tool_calls: [{ name, args, id, type: "tool_call" }] });

const add = defineTool({
  name: "add",
  description: "Adds two numbers.",
  parameters: z.object({ left: z.number(), right: z.number() }),
  execute: ({ left, right }) => left + right,
});

// Approval: the call pauses the graph (under __interrupt__) until a person answers.
const agent = createReactAgent({
  llm: new ScriptedModel([callTool("add", { left: 2, right: 3 }, "call-1"), new AIMessage("5")]),
  tools: toLangChainTools(new ToolRegistry([add]), { needsApproval: true }),
  checkpointer: new MemorySaver(),
});
const thread = { configurable: { thread_id: "thread-1" } };
const paused = await agent.invoke({ messages: [new HumanMessage("What is 2 + 3?")] }, thread);
const { messages } = await agent.invoke(new Command({ resume: { toolCallId: "call-1", allow: true } }), thread);

// A fatal error: with a ToolNode that does not catch, the run rejects with the genuine error.
const fatal = defineTool({
  name: "fatal",
  description: "Loses the disk.",
  parameters: z.object({}),
  execute: () => {
    throw new NonRecoverableToolError("the disk is gone");
  },
});
const fatalAgent = createReactAgent({
  llm: new ScriptedModel([callTool("fatal", {}, "call-f")]),
  tools: new ToolNode(toLangChainTools(new ToolRegistry([fatal])), { handleToolErrors: false }),
});
const ended = await fatalAgent.invoke({ messages: [new HumanMessage("go")] }).then(
  () => "resolved",
  (error: unknown) => error,
);

// Checks
assert.deepEqual(
  (paused as { __interrupt__?: { value: unknown }[] }).__interrupt__?.map(({ value }) => value),
  [{ type: "toolgate_approval", toolCallId: "call-1", toolName: "add", arguments: { left: 2, right: 3 } }],
);
assert.equal(messages.at(-1)?.content, "5");
assert.deepEqual(
  messages.filter((message) => ToolMessage.isInstance(message)).map((message) => [message.tool_call_id, message.status, message.content]),
  [["call-1", "success", "5"]],
);
assert.ok(ended instanceof NonRecoverableToolError, `the run ended with ${String(ended)}`);
assert.equal(ended.message, "the disk is gone");
