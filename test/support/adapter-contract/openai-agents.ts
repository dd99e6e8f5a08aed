// The OpenAI Agents row of the adapter contract suite: the SDK's own Runner loop over
// toOpenAiAgentsTools, with the SDK's scripted model (@openai/agents/testing) playing the model.
import { Agent, type AgentInputItem, Runner, ToolCallError } from "@openai/agents";
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents/testing";
import { toOpenAiAgentsTools, toolCallDenied } from "toolgate/openai-agents";
import { type AdapterDriver, type ModelCall, type ModelRead, type ReadPart, readOf, rejectionOf } from "./driver.js";

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

/**
 * What the model read for each call in request 1, part by part: a text output is one text part;
 * a list of parts is sent as `input_text`, `input_image`, `input_file` items.
 */
function partsOf(model: ScriptedModel): Map<string, ReadPart[]> {
  const input = model.calls[1]?.request.input;
  const results = Array.isArray(input) ? input.filter((item: AgentInputItem) => item.type === "function_call_result") : [];
  return new Map(
    results.map((item): [string, ReadPart[]] => {
      const output = item.output as { type: string; text?: unknown } | readonly { type: string; text?: unknown }[];
      const list = Array.isArray(output) ? output : [output as { type: string; text?: unknown }];
      return [
        item.callId,
        list.map((part) => (part.type === "input_text" || part.type === "text" ? { type: "text", text: part.text } : { type: part.type })),
      ];
    }),
  );
}

const FINAL = "done";

/** The scripted model's step: the calls, their arguments as the JSON text the model sent. */
const modelStep = (calls: readonly ModelCall[]) =>
  calls.map(({ id, name, args }) => functionCall(name, JSON.stringify(args), { callId: id }));

/** What the model read for each call in request 1, as text: a list of parts reads as its text parts, each other part as `[type]`. */
const reads = (model: ScriptedModel): ModelRead[] =>
  [...partsOf(model)].map(([id, parts]) => readOf(id, parts.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("")));

/** The genuine error of a rejected run: the SDK wraps a tool's rejection in its ToolCallError (documented). */
const unwrapped = (error: unknown): unknown => (error instanceof ToolCallError ? error.error : error);

export const openAiAgentsDriver: AdapterDriver = {
  name: "OpenAI Agents Runner.run",
  progressOption: true,
  linkPart: false,
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
    return { read: reads(model), finished: result.finalOutput === FINAL, parts: partsOf(model) };
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
