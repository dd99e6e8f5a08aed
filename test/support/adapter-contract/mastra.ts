// The Mastra row of the adapter contract suite: a Mastra Agent's own loop (generate) over
// toMastraTools, with a scripted AI SDK language model (specification v2, which @mastra/core
// 1.x accepts) of ours playing the model (shared with test/adapters/mastra-e2e.test.ts).
// Mastra 1.x declares node >= 22.13: under an older Node the row says why it does not run.
// Mastra ends an aborted run quietly (generate resolves): the driver reads that ending.
import type { NonRecoverableToolError } from "toolgate";
import { type ToMastraToolsOptions, toMastraTools } from "toolgate/mastra";
import { type AdapterDriver, type ModelCall, type ReadPart, readOf, type Source, textParts } from "./driver.js";

const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
/** Why Mastra does not run in this process, or undefined. */
export const MASTRA_UNAVAILABLE =
  major > 22 || (major === 22 && minor >= 13)
    ? undefined
    : `@mastra/core 1.71 requires Node >= 22.13; this is Node ${process.versions.node} (CI runs the row on its Node 22 and 24 legs)`;

export type MastraReply = { readonly text?: string; readonly calls?: readonly { name: string; args: unknown; id: string }[] };
type Prompt = { role: string; content: unknown }[];

/** An AI SDK LanguageModelV2 that answers from a script and records each request's prompt and tools. */
export function scriptedModel(script: MastraReply[]) {
  const replies = [...script];
  const prompts: Prompt[] = [];
  const tools: unknown[][] = [];
  const next = (options: { prompt: Prompt; tools?: unknown[] }) => {
    prompts.push(options.prompt);
    tools.push(options.tools ?? []);
    const reply = replies.shift();
    if (reply === undefined) throw new Error("the scripted model ran out of replies");
    const content: unknown[] = reply.text === undefined ? [] : [{ type: "text", text: reply.text }];
    for (const call of reply.calls ?? []) {
      content.push({ type: "tool-call", toolCallId: call.id, toolName: call.name, input: JSON.stringify(call.args) });
    }
    return { content, finishReason: reply.calls ? "tool-calls" : "stop" };
  };
  const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
  const model = {
    specificationVersion: "v2" as const,
    provider: "scripted",
    modelId: "scripted",
    supportedUrls: {},
    async doGenerate(options: { prompt: Prompt; tools?: unknown[] }) {
      return { ...next(options), usage, warnings: [] };
    },
    async doStream(options: { prompt: Prompt; tools?: unknown[] }) {
      const { content, finishReason } = next(options);
      const parts: unknown[] = [{ type: "stream-start", warnings: [] }];
      for (const part of content as { type: string; text?: string }[]) {
        if (part.type === "text")
          parts.push({ type: "text-start", id: "t" }, { type: "text-delta", id: "t", delta: part.text }, { type: "text-end", id: "t" });
        else parts.push(part);
      }
      parts.push({ type: "finish", finishReason, usage });
      return {
        stream: new ReadableStream({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  };
  /** The tool results of request `index`, as the model read them: [toolCallId, output]. */
  const toolResultsSeen = (index: number): [string, unknown][] =>
    (prompts[index] ?? [])
      .filter((message) => message.role === "tool")
      .flatMap((message) =>
        (message.content as { toolCallId: string; output: unknown }[]).map((part): [string, unknown] => [part.toolCallId, part.output]),
      );
  return { model, prompts, tools, toolResultsSeen };
}

/** A Mastra Agent over `source`'s tools (loaded on first use: @mastra/core's agent needs Node >= 22.13). */
export async function mastraAgent(model: unknown, source: Source, options: ToMastraToolsOptions = {}) {
  const { Agent } = await import("@mastra/core/agent");
  return new Agent({
    id: "calculator",
    name: "calculator",
    instructions: "Add.",
    model: model as ConstructorParameters<typeof Agent>[0]["model"],
    tools: toMastraTools(source, options),
  });
}

const FINAL = "done";

const script = (calls: readonly ModelCall[]): MastraReply[] => [{ calls }, { text: FINAL }];

export const mastraDriver: AdapterDriver = {
  name: "Mastra Agent.generate",
  unavailable: MASTRA_UNAVAILABLE,
  progressOption: true,
  linkPart: false,
  // (An array Mastra hands the tool as an object with index keys, which toolgate's validator then judges.)
  answersItself: (args) =>
    args === null ? 'Mastra answers arguments that are null itself (its own "could not be parsed" text)' : undefined,
  refusedNames: {
    ["__proto__"]: "Mastra assigns its tools by name into a plain object, where __proto__ would set its prototype and the tool vanish",
  },
  make: (source, options) => toMastraTools(source, options),
  schemas: async (source) =>
    Object.values(toMastraTools(source)).map((tool) => {
      const standard = (tool.inputSchema as unknown as { "~standard": { jsonSchema: { input: () => Record<string, unknown> } } })[
        "~standard"
      ];
      return standard.jsonSchema.input();
    }),
  async step(source, calls, options = {}) {
    const scripted = scriptedModel(script(calls));
    const agent = await mastraAgent(scripted.model, source, options.onProgress === undefined ? {} : { onProgress: options.onProgress });
    const output = await agent.generate("go", { maxSteps: 3, ...(options.signal === undefined ? {} : { abortSignal: options.signal }) });
    const read = scripted.toolResultsSeen(1).map(([id, seen]) => {
      const { value } = seen as { value?: unknown };
      return readOf(id, typeof value === "string" ? value : JSON.stringify(seen));
    });
    // The AI SDK's tool output as the model gets it: a `content` output's parts, else its one text.
    const parts = new Map(
      scripted.toolResultsSeen(1).map(([id, seen]): [string, ReadPart[]] => {
        const { type, value } = seen as { type?: unknown; value?: unknown };
        if (type === "content") return [id, textParts(value as { type: string }[])];
        return [id, [{ type: "text", text: typeof value === "string" ? value : JSON.stringify(value) }]];
      }),
    );
    return { read, finished: output.text === FINAL, parts };
  },
  async fatal(source, call) {
    // The documented route: onNonRecoverableError aborts the run's signal with the error; generate
    // resolves, and the signal holds the genuine error for the app to rethrow.
    const scripted = scriptedModel(script([call]));
    const controller = new AbortController();
    let handed: NonRecoverableToolError | undefined;
    const agent = await mastraAgent(scripted.model, source, {
      onNonRecoverableError: (error) => {
        handed = error;
        controller.abort(error);
      },
    });
    await agent.generate("go", { maxSteps: 3, abortSignal: controller.signal });
    return { error: controller.signal.reason === handed ? handed : controller.signal.reason, modelRequests: scripted.prompts.length };
  },
  async aborted(source, call, signal) {
    // Mastra resolves an aborted run: it ended at the call when no result of it reached anyone.
    const scripted = scriptedModel(script([call]));
    const output = await (await mastraAgent(scripted.model, source)).generate("go", { maxSteps: 3, abortSignal: signal });
    const ended = output.toolResults.length === 0;
    return { error: ended ? signal.reason : output.toolResults, modelRequests: scripted.prompts.length };
  },
};
