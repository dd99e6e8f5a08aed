// Pi's side of the versus rows (bench/cases/versus.ts, bench/instructions/rows.ts): a stream
// function that always calls `ping`, one turn of Pi's agent loop, and Pi's own TypeBox tool.
import { type AgentTool, agentLoop } from "@earendil-works/pi-agent-core";
import {
  createAssistantMessageEventStream,
  fauxAssistantMessage,
  fauxToolCall,
  type Message,
  type Model as PiModel,
} from "@earendil-works/pi-ai";
import Type from "typebox";
import { pong, versusPing } from "../versus-tools.js";

/** Pi's stream function, answering every request with one call of `ping` (no token chunking: the same on both sides). */
export const piStream = () => {
  const stream = createAssistantMessageEventStream();
  stream.push({
    type: "done",
    reason: "toolUse",
    message: fauxAssistantMessage([fauxToolCall("ping", { n: 1 }, { id: "call-1" })], { stopReason: "toolUse" }),
  });
  return stream;
};

/** One turn of Pi's agent loop: the model calls `ping`, Pi checks and runs it, the loop stops. Returns the tool result's text. */
export async function piStep(tools: AgentTool[], model: PiModel<string>): Promise<unknown> {
  const stream = agentLoop(
    [{ role: "user", content: "go", timestamp: 0 }],
    { systemPrompt: "", messages: [], tools },
    { model, convertToLlm: (messages) => messages as Message[], shouldStopAfterTurn: () => true },
    undefined,
    piStream,
  );
  for await (const _event of stream) {
    // a loop's caller reads its events; both sides emit the same ones
  }
  const messages = await stream.result();
  const result = messages.find((message) => "role" in message && message.role === "toolResult");
  if (result === undefined || !("content" in result) || !Array.isArray(result.content)) return undefined;
  return result.isError ? result : (result.content[0] as { text?: string } | undefined)?.text;
}

/** Pi's own tool: the TypeBox schema Pi checks, and the same `pong` as text. */
export const piOwnPing: AgentTool = {
  name: "ping",
  label: "ping",
  description: versusPing.description,
  parameters: Type.Object({ n: Type.Number() }),
  execute: async (_toolCallId, params) => ({
    content: [{ type: "text", text: JSON.stringify(pong(params as { n: number })) }],
    details: {},
  }),
};
