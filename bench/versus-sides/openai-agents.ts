// The OpenAI Agents SDK side of the versus rows (bench/cases/versus.ts, bench/instructions/rows.ts):
// a model that always calls `ping`, one agent turn, and the user's own tool.
import { type Agent, type Model, type ModelResponse, tool as openAiTool, type Runner, Usage } from "@openai/agents";
import { functionCall } from "@openai/agents/testing";
import { pingArguments, pong, versusPing } from "../versus-tools.js";

/** A model that answers every request with one call of `ping`. */
export const openAiModel: Model = {
  getResponse: async (): Promise<ModelResponse> => ({
    output: [functionCall("ping", { n: 1 }, { callId: "call-1" })],
    usage: new Usage({ requests: 1 }),
    responseId: "response-1",
  }),
  getStreamedResponse: () => {
    throw new Error("versus benchmark: the model does not stream");
  },
};

/** One agent turn: the model calls `ping`, the SDK runs it, and the run stops on that tool's output. */
export async function openAiStep(runner: Runner, agent: Agent): Promise<unknown> {
  const result = await runner.run(agent, "go");
  return result.finalOutput;
}

/** The user's own tool: the SDK's `tool()` with the same zod schema and `pong`. */
export const openAiOwnPing = () =>
  openAiTool({ name: "ping", description: versusPing.description, parameters: pingArguments, execute: (input) => pong(input) });
