// The AI SDK row of the adapter contract suite: generateText's own loop over toAiSdkTools, with
// the SDK's mock language model (ai/test) playing the model. The model helpers are shared with
// test/adapters/ai-sdk-e2e.test.ts.
import { generateText, isStepCount, type ModelMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { hasNonRecoverableToolError, throwIfNonRecoverable, toAiSdkTools, toolCallDenied } from "toolgate/ai-sdk";
import { type AdapterDriver, type ModelCall, type ModelRead, type ReadPart, readOf, rejectionOf, textParts } from "./driver.js";

export type GenerateResult = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>;
export type AiSdkCallOptions = Parameters<MockLanguageModelV4["doGenerate"]>[0];

export const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** A model response making `calls` (their arguments as JSON text, as a provider sends them). */
export const toolCalls = (calls: readonly ModelCall[]): GenerateResult => ({
  content: calls.map(({ id, name, args }) => ({ type: "tool-call", toolCallId: id, toolName: name, input: JSON.stringify(args) })),
  finishReason: { unified: "tool-calls", raw: undefined },
  usage,
  warnings: [],
});
export const toolCall = (toolCallId: string, toolName: string, input: unknown): GenerateResult =>
  toolCalls([{ id: toolCallId, name: toolName, args: input }]);
export const answer = (text: string): GenerateResult => ({
  content: [{ type: "text", text }],
  finishReason: { unified: "stop", raw: undefined },
  usage,
  warnings: [],
});

/** The tool results the model was shown in a request's prompt, as [toolCallId, output]. */
export function toolResultsSeen(options: AiSdkCallOptions): [string, unknown][] {
  return options.prompt.flatMap((message) =>
    message.role === "tool"
      ? message.content.filter((part) => part.type === "tool-result").map((part): [string, unknown] => [part.toolCallId, part.output])
      : [],
  );
}

/** What the model read for each call in request `options`, as text. */
function readsOf(options: AiSdkCallOptions | undefined): ModelRead[] {
  if (options === undefined) return [];
  return toolResultsSeen(options).map(([id, output]) => {
    const { value, reason } = output as { value?: unknown; reason?: unknown };
    const text = typeof value === "string" ? value : typeof reason === "string" ? reason : JSON.stringify(output);
    return readOf(id, text);
  });
}

/** What the model read for each call in request `options`, part by part: a `content` output's parts, else its one text. */
function partsOf(options: AiSdkCallOptions | undefined): Map<string, ReadPart[]> {
  return new Map(
    (options === undefined ? [] : toolResultsSeen(options)).map(([id, output]) => {
      const { type, value } = output as { type?: unknown; value?: unknown };
      if (type === "content") return [id, textParts(value as { type: string; text?: unknown }[])];
      return [id, [{ type: "text", text: typeof value === "string" ? value : JSON.stringify(value) }]];
    }),
  );
}

const FINAL = "done";

export const aiSdkDriver: AdapterDriver = {
  name: "AI SDK generateText",
  progressOption: false,
  linkPart: false,
  make: (source, options) => toAiSdkTools(source, options),
  schemas: async (source) =>
    Object.values(toAiSdkTools(source)).map((tool) => (tool.inputSchema as unknown as { jsonSchema: Record<string, unknown> }).jsonSchema),
  async step(source, calls, options = {}) {
    const model = new MockLanguageModelV4({ doGenerate: [toolCalls(calls), answer(FINAL)] });
    const result = await generateText({
      model,
      tools: toAiSdkTools(source),
      prompt: "go",
      stopWhen: isStepCount(3),
      ...(options.signal === undefined ? {} : { abortSignal: options.signal }),
    });
    return { read: readsOf(model.doGenerateCalls[1]), finished: result.text === FINAL, parts: partsOf(model.doGenerateCalls[1]) };
  },
  async fatal(source, call) {
    const model = new MockLanguageModelV4({ doGenerate: [toolCalls([call]), answer(FINAL)] });
    // The documented route: the stop condition ends the loop at the step, throwIfNonRecoverable rethrows.
    const run = generateText({
      model,
      tools: toAiSdkTools(source),
      prompt: "go",
      stopWhen: [isStepCount(3), hasNonRecoverableToolError],
    }).then(throwIfNonRecoverable);
    return { error: await rejectionOf(run), modelRequests: model.doGenerateCalls.length };
  },
  async aborted(source, call, signal) {
    const model = new MockLanguageModelV4({ doGenerate: [toolCalls([call]), answer(FINAL)] });
    const run = generateText({ model, tools: toAiSdkTools(source), prompt: "go", stopWhen: isStepCount(3), abortSignal: signal });
    return { error: await rejectionOf(run), modelRequests: model.doGenerateCalls.length };
  },
  approvals: {
    async step(source, calls, needsApproval, decide) {
      const model = new MockLanguageModelV4({ doGenerate: [toolCalls(calls), answer(FINAL)] });
      const tools = toAiSdkTools(source, { needsApproval });
      const first = await generateText({ model, tools, prompt: "go", stopWhen: isStepCount(3) });
      const requests = first.content.filter((part) => part.type === "tool-approval-request");
      // Every pending call at once: one tool-approval-response per request, bound to it by its approvalId.
      const responses = requests.map((request) => {
        const approved = decide(request.toolCall.toolCallId);
        return {
          type: "tool-approval-response" as const,
          approvalId: request.approvalId,
          approved,
          ...(approved ? {} : { reason: toolCallDenied("denied by the person") }),
        };
      });
      const messages: ModelMessage[] = [{ role: "user", content: "go" }, ...first.response.messages, { role: "tool", content: responses }];
      const second = await generateText({ model, tools, messages, stopWhen: isStepCount(3) });
      return { read: readsOf(model.doGenerateCalls[1]), finished: second.text === FINAL, pauses: requests.length > 0 ? 1 : 0 };
    },
  },
};
