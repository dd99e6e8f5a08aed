// The OpenAI Agents row of the adapter contract suite: the SDK's own Runner loop over
// toOpenAiAgentsTools, with the SDK's scripted model (@openai/agents/testing) playing the model.
import { Agent, type AgentInputItem, Runner, ToolCallError } from "@openai/agents";
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents/testing";
import { toOpenAiAgentsTools, toolCallDenied } from "toolgate/openai-agents";
import { type AdapterDriver, type ModelCall, type ModelRead, readOf, rejectionOf } from "./driver.js";

const runner = new Runner({ tracingDisabled: true });

/** The tool outputs the model was shown in request `index`, as [callId, text]. */
export function toolOutputsSeen(model: ScriptedModel, request: number): [string, string][] {
  const input = model.calls[request]?.request.input;
  if (!Array.isArray(input)) return [];
  return input.flatMap((item: AgentInputItem): [string, string][] => {
    if (item.type !== "function_call_result") return [];
    const output = item.output;
    return typeof output === "object" && !Array.isArray(output) && output.type === "text" ? [[item.callId, output.text]] : [];
  });
}

const FINAL = "done";

/** The scripted model's step: the calls, their arguments as the JSON text the model sent. */
const modelStep = (calls: readonly ModelCall[]) =>
  calls.map(({ id, name, args }) => functionCall(name, JSON.stringify(args), { callId: id }));

const reads = (model: ScriptedModel): ModelRead[] => toolOutputsSeen(model, 1).map(([id, text]) => readOf(id, text));

/** The genuine error of a rejected run: the SDK wraps a tool's rejection in its ToolCallError (documented). */
const unwrapped = (error: unknown): unknown => (error instanceof ToolCallError ? error.error : error);

export const openAiAgentsDriver: AdapterDriver = {
  name: "OpenAI Agents Runner.run",
  progressOption: true,
  make: (source, options) => toOpenAiAgentsTools(source, options),
  schemas: async (source) => toOpenAiAgentsTools(source).map((tool) => tool.parameters as unknown as Record<string, unknown>),
  async step(source, calls, options = {}) {
    const model = new ScriptedModel([modelStep(calls), [assistantMessage(FINAL)]]);
    const tools = toOpenAiAgentsTools(source, options.onProgress === undefined ? {} : { onProgress: options.onProgress });
    const result = await runner.run(
      new Agent({ name: "a", model, tools }),
      "go",
      options.signal === undefined ? {} : { signal: options.signal },
    );
    return { read: reads(model), finished: result.finalOutput === FINAL };
  },
  async fatal(source, call) {
    const model = new ScriptedModel([modelStep([call]), [assistantMessage(FINAL)]]);
    const run = runner.run(new Agent({ name: "a", model, tools: toOpenAiAgentsTools(source) }), "go");
    return { error: unwrapped(await rejectionOf(run)), modelRequests: model.calls.length };
  },
  async aborted(source, call, signal) {
    const model = new ScriptedModel([modelStep([call]), [assistantMessage(FINAL)]]);
    const run = runner.run(new Agent({ name: "a", model, tools: toOpenAiAgentsTools(source) }), "go", { signal });
    return { error: await rejectionOf(run), modelRequests: model.calls.length };
  },
  approvals: {
    async step(source, calls, needsApproval, decide) {
      const model = new ScriptedModel([modelStep(calls), [assistantMessage(FINAL)]]);
      const agent = new Agent({ name: "a", model, tools: toOpenAiAgentsTools(source, { needsApproval }) });
      let result = await runner.run(agent, "go");
      let pauses = 0;
      while (result.interruptions.length > 0 && pauses < 5) {
        pauses += 1;
        // Every pending call at once, each approval bound to its own interruption item.
        for (const item of result.interruptions) {
          const callId = item.rawItem.type === "function_call" ? item.rawItem.callId : "";
          if (decide(callId)) result.state.approve(item);
          else result.state.reject(item, { message: toolCallDenied("denied by the person") });
        }
        result = await runner.run(agent, result.state);
      }
      return { read: reads(model), finished: result.finalOutput === FINAL, pauses };
    },
  },
};
