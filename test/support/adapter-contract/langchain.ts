// The LangChain rows of the adapter contract suite: LangGraph's createReactAgent and langchain's
// createAgent over toLangChainTools, each with the documented setting that lets a fatal error
// end the run (so anything else a tool step throws would end it too), and a scripted chat
// model of ours that records every request (shared with test/adapters/langchain-e2e.test.ts).
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createReactAgent, ToolNode } from "@langchain/langgraph/prebuilt";
import { createAgent, createMiddleware } from "langchain";
import {
  type ToLangChainToolsOptions,
  type ToolgateApprovalDecision,
  type ToolgateApprovalRequest,
  toLangChainTools,
} from "toolgate/langchain";
import { type AdapterDriver, type ModelCall, readOf, rejectionOf, type Source, textParts } from "./driver.js";

export type Reply = { readonly text?: string; readonly calls?: readonly { name: string; args: unknown; id: string }[] };

/** A chat model that answers from a script and records what each request showed it. */
export class ScriptedChatModel extends BaseChatModel {
  readonly requests: BaseMessage[][] = [];
  shown: unknown[] = [];
  readonly #script: Reply[];

  constructor(script: Reply[]) {
    super({});
    this.#script = [...script];
  }

  _llmType(): string {
    return "scripted";
  }

  // What a provider does with the tools: their OpenAI function form is what the model is shown.
  override bindTools(tools: unknown[]): this {
    this.shown = tools.map((tool) => convertToOpenAITool(tool as Parameters<typeof convertToOpenAITool>[0]));
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.requests.push(messages);
    const reply = this.#script.shift();
    if (reply === undefined) throw new Error("the scripted model ran out of replies");
    const message = new AIMessage({
      content: reply.text ?? "",
      tool_calls: (reply.calls ?? []).map((call) => ({ ...call, args: call.args as Record<string, unknown>, type: "tool_call" as const })),
    });
    return { generations: [{ message, text: reply.text ?? "" }] };
  }

  /** The tool messages of request `index`, as the model read them. */
  toolMessagesSeen(index: number): { id: string; status: unknown; content: unknown }[] {
    return (this.requests[index] ?? [])
      .filter((message): message is ToolMessage => ToolMessage.isInstance(message))
      .map((message) => ({ id: message.tool_call_id, status: message.status, content: message.content }));
  }
}

/** What a LangChain user builds: the agent over the tools, in the setting where a tool step's throw ends the run. */
type MakeAgent = (
  model: ScriptedChatModel,
  source: Source,
  options?: ToLangChainToolsOptions,
) => { invoke(input: unknown, config?: unknown): Promise<unknown> };

const FINAL = "done";
let threads = 0;

function langChainDriver(name: string, make: MakeAgent): AdapterDriver {
  const script = (calls: readonly ModelCall[]): Reply[] => [{ calls }, { text: FINAL }];
  const reads = (model: ScriptedChatModel) =>
    model.toolMessagesSeen(1).map(({ id, content }) => readOf(id, typeof content === "string" ? content : JSON.stringify(content)));
  // A ToolMessage's content: a string, or a list of standard content blocks.
  const parts = (model: ScriptedChatModel) =>
    new Map(
      model
        .toolMessagesSeen(1)
        .map(({ id, content }) => [
          id,
          typeof content === "string" ? [{ type: "text", text: content }] : textParts(content as { type: string }[]),
        ]),
    );
  const finished = (state: unknown) => (state as { messages: BaseMessage[] }).messages.at(-1)?.content === FINAL;
  return {
    name,
    progressOption: true,
    linkPart: false,
    make: (source, options) => toLangChainTools(source, options),
    schemas: async (source) => toLangChainTools(source).map((tool) => tool.schema as Record<string, unknown>),
    async step(source, calls, options = {}) {
      const model = new ScriptedChatModel(script(calls));
      const agent = make(model, source, options.onProgress === undefined ? {} : { onProgress: options.onProgress });
      const state = await agent.invoke(
        { messages: [new HumanMessage("go")] },
        { ...thread(), ...(options.signal === undefined ? {} : { signal: options.signal }) },
      );
      return { read: reads(model), finished: finished(state), parts: parts(model) };
    },
    async fatal(source, call) {
      const model = new ScriptedChatModel(script([call]));
      const error = await rejectionOf(make(model, source).invoke({ messages: [new HumanMessage("go")] }, thread()));
      return { error, modelRequests: model.requests.length };
    },
    async aborted(source, call, signal) {
      const model = new ScriptedChatModel(script([call]));
      const error = await rejectionOf(make(model, source).invoke({ messages: [new HumanMessage("go")] }, { ...thread(), signal }));
      return { error, modelRequests: model.requests.length };
    },
    approvals: {
      async step(source, calls, needsApproval, decide) {
        const model = new ScriptedChatModel(script(calls));
        const agent = make(model, source, { needsApproval });
        const config = thread();
        let state = (await agent.invoke({ messages: [new HumanMessage("go")] }, config)) as { __interrupt__?: Interrupt[] };
        let pauses = 0;
        while (state.__interrupt__ !== undefined && state.__interrupt__.length > 0 && pauses < 6) {
          pauses += 1;
          state = (await agent.invoke(new Command({ resume: resumeValue(state.__interrupt__, decide) }), config)) as typeof state;
        }
        return { read: reads(model), finished: finished(state), pauses };
      },
    },
  };
}

interface Interrupt {
  readonly id: string;
  readonly value: ToolgateApprovalRequest;
}

/**
 * The resume value for a paused run: the decision on the first request shown, naming its call,
 * as one plain value. LangGraph hands a plain value to every interrupt waiting (createAgent runs
 * each call as its own task, so two wait at once) and, within one task, to the interrupts by
 * their order: only the call it names may take it. (Answering several at once, keyed by
 * interrupt id, is test/adapters/langchain-e2e.test.ts's.)
 */
function resumeValue(interrupts: readonly Interrupt[], decide: (toolCallId: string) => boolean): ToolgateApprovalDecision {
  const { toolCallId } = (interrupts[0] as Interrupt).value;
  return decide(toolCallId) ? { toolCallId, allow: true } : { toolCallId, allow: false, reason: "denied by the person" };
}

const thread = () => ({ configurable: { thread_id: `contract-${++threads}` } });

export const langChainDrivers: readonly AdapterDriver[] = [
  langChainDriver("LangGraph createReactAgent (ToolNode handleToolErrors: false)", (model, source, options = {}) =>
    createReactAgent({
      llm: model,
      tools: new ToolNode(toLangChainTools(source, options), { handleToolErrors: false }),
      checkpointer: new MemorySaver(),
    }),
  ),
  langChainDriver("langchain createAgent (a wrapToolCall middleware)", (model, source, options = {}) =>
    createAgent({
      model,
      tools: toLangChainTools(source, options),
      checkpointer: new MemorySaver(),
      middleware: [createMiddleware({ name: "rethrow", wrapToolCall: (request, handler) => handler(request) })],
    }),
  ),
];
