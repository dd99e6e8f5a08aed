// toLangChainTools' `durable` option (docs/durable.md — Durable calls with your framework):
// issue 42's test 14 in its same-process form. LangGraph runs a whole tool node again after
// one of its calls `interrupt()`s for approval; with `durable: ({ threadId }) => ({ runId: threadId })`
// the call that already ran is replayed from the store, not run again.
import { HumanMessage } from "@langchain/core/messages";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { createAgent } from "langchain";
import { type CallEndEvent, ContractErrorCode, defineTool, InProcessToolExecutor, isToolContractError, ToolRegistry } from "toolgate";
import { memoryDurableStore } from "toolgate/durable";
import { type LangChainDurableContext, type ToLangChainToolsOptions, toLangChainTools } from "toolgate/langchain";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { ScriptedChatModel } from "../support/adapter-contract/langchain.js";

function setup(withStore = true) {
  const executions = { notify: 0, charge: 0 };
  const events: CallEndEvent[] = [];
  const notify = defineTool({
    name: "notify",
    description: "Notifies the customer.",
    parameters: z.object({ text: z.string() }),
    execute: ({ text }) => {
      executions.notify += 1;
      return `sent ${text} (#${executions.notify})`;
    },
  });
  const charge = defineTool({
    name: "charge",
    description: "Charges the card.",
    parameters: z.object({ cents: z.number() }),
    execute: ({ cents }) => {
      executions.charge += 1;
      return `charged ${cents}`;
    },
  });
  const executor = new InProcessToolExecutor(new ToolRegistry([notify, charge]), {
    ...(withStore ? { durable: { store: memoryDurableStore() } } : {}),
    hooks: { onCallEnd: (event) => void events.push(event) },
  });
  return { executor, executions, events };
}

const TWO_CALLS = () =>
  new ScriptedChatModel([
    {
      calls: [
        { name: "notify", args: { text: "hello" }, id: "call-n" },
        { name: "charge", args: { cents: 500 }, id: "call-c" },
      ],
    },
    { text: "done" },
  ]);

const thread = (id: string) => ({ configurable: { thread_id: id } });
const byThread: NonNullable<ToLangChainToolsOptions["durable"]> = ({ threadId }) => ({ runId: `thread:${threadId}` });

/**
 * The two agents a LangChain.js user builds over the tools, each with a checkpointer.
 * `rerunsNode`: createReactAgent's ToolNode runs a step's calls in one task, which LangGraph
 * runs again whole after an interrupt; createAgent sends each call to a task of its own, and
 * LangGraph keeps the finished tasks' writes, so only the interrupted call runs again there.
 */
const AGENTS = [
  {
    name: "LangGraph createReactAgent",
    rerunsNode: true,
    make: (model: ScriptedChatModel, tools: ReturnType<typeof toLangChainTools>) =>
      createReactAgent({ llm: model, tools, checkpointer: new MemorySaver() }),
  },
  {
    name: "langchain createAgent",
    rerunsNode: false,
    make: (model: ScriptedChatModel, tools: ReturnType<typeof toLangChainTools>) =>
      createAgent({ model, tools, checkpointer: new MemorySaver() }),
  },
] as const;

async function pauseThenResume(agent: (typeof AGENTS)[number], options: ToLangChainToolsOptions) {
  const { executor, executions, events } = setup();
  const model = TWO_CALLS();
  const graph = agent.make(model, toLangChainTools(executor, { needsApproval: ({ toolName }) => toolName === "charge", ...options }));
  const paused = await graph.invoke({ messages: [new HumanMessage("charge and tell")] }, thread("t-42"));
  expect((paused as { __interrupt__?: unknown[] }).__interrupt__).toHaveLength(1);
  // The first pass's notify finishes on its own (the interrupt does not wait for it): resume once it has.
  await vi.waitFor(() => expect(events.filter((event) => event.toolName === "notify")).toHaveLength(1));
  expect(executions).toEqual({ notify: 1, charge: 0 });
  await graph.invoke(new Command({ resume: { toolCallId: "call-c", allow: true } }), thread("t-42"));
  return { executions, events, model };
}

describe.each(AGENTS)(
  "docs/durable.md — Durable calls with your framework: LangGraph (issue 42, test 14, same process), $name",
  (agent) => {
    it(`the premise: without durable, resuming after the interrupt runs notify ${agent.rerunsNode ? "twice (the whole node runs again)" : "once (createAgent keeps the finished call's task)"}`, async () => {
      const { executions } = await pauseThenResume(agent, {});
      expect(executions).toEqual({ notify: agent.rerunsNode ? 2 : 1, charge: 1 });
    });

    it("with durable keyed by thread_id, resuming runs notify once (replayed when the node runs again) and the approved charge once", async () => {
      const { executions, events, model } = await pauseThenResume(agent, { durable: byThread });
      expect(executions).toEqual({ notify: 1, charge: 1 });
      expect(events.map(({ toolName, durable }) => [toolName, durable])).toEqual([
        ["notify", "executed"],
        ...(agent.rerunsNode ? [["notify", "replayed"]] : []),
        ["charge", "executed"],
      ]);
      // The model reads the first execution's outcome, re-linked to the call.
      expect(model.toolMessagesSeen(1)).toEqual([
        { id: "call-n", status: "success", content: "sent hello (#1)" },
        { id: "call-c", status: "success", content: "charged 500" },
      ]);
    });

    it("the function gets a frozen { threadId, toolCallId, toolName } before approval is asked", async () => {
      const seen: LangChainDurableContext[] = [];
      await pauseThenResume(agent, {
        durable: (context) => {
          seen.push(context);
          return { runId: String(context.threadId) };
        },
      });
      expect(seen.every((context) => Object.isFrozen(context))).toBe(true);
      // First pass: both calls (charge asked before it interrupts); the re-run: both again, or only charge.
      const notify = { threadId: "t-42", toolCallId: "call-n", toolName: "notify" };
      const charge = { threadId: "t-42", toolCallId: "call-c", toolName: "charge" };
      expect(seen.map((context) => ({ ...context }))).toEqual(
        agent.rerunsNode ? [notify, charge, notify, charge] : [notify, charge, charge],
      );
    });
  },
);

describe("toLangChainTools' durable option fails closed", () => {
  const call = { type: "tool_call" as const, id: "call-1", name: "notify", args: { text: "x" } };

  async function rejection(durable: unknown, config: object = thread("t")) {
    const { executor, executions } = setup();
    const [notify] = toLangChainTools(executor, { durable: durable as NonNullable<ToLangChainToolsOptions["durable"]> });
    const error = await notify?.invoke(call, config).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(executions.notify).toBe(0);
    return error as Error & { code?: string };
  }

  it.each([
    [
      "a throw",
      () => {
        throw new Error("no run here");
      },
      /options\.durable threw; the call did not run/,
    ],
    ["a rejection", () => Promise.reject(new Error("no run here")), /options\.durable threw; the call did not run/],
    ["undefined", () => undefined, /must answer \{ runId \}.*answered undefined/],
    ["a string", () => "t", /must answer \{ runId \}/],
    ["an empty runId", () => ({ runId: "" }), /must answer \{ runId \}/],
    ["a runId over 1024 characters", () => ({ runId: "r".repeat(1025) }), /must answer \{ runId \}/],
    ["an unknown key", () => ({ runId: "r", thread: "t" }), /unknown option "thread"/],
    ["a getter runId (never run)", () => Object.defineProperty({}, "runId", { get: () => "r", enumerable: true }), /accessor/],
  ])("%s rejects the call with INVALID_ARGUMENT; the tool does not run", async (_name, durable, message) => {
    const error = await rejection(durable);
    expect(isToolContractError(error)).toBe(true);
    expect(error.code).toBe(ContractErrorCode.INVALID_ARGUMENT);
    expect(error.message).toMatch(/^toLangChainTools: /);
    expect(error.message).toMatch(message);
  });

  it("the thrown error is kept as the cause", async () => {
    const thrown = new Error("no run here");
    const error = await rejection(() => {
      throw thrown;
    });
    expect(error.cause).toBe(thrown);
  });

  it("a call without a thread_id gets threadId undefined (the app decides)", async () => {
    const seen: unknown[] = [];
    const error = await rejection((context: LangChainDurableContext) => {
      seen.push(context.threadId);
      return { runId: context.threadId };
    }, {});
    expect(seen).toEqual([undefined]);
    expect(error.code).toBe(ContractErrorCode.INVALID_ARGUMENT);
  });

  it("is refused when the tools are made: not a function, a Proxy, or a ToolRegistry source", () => {
    const { executor } = setup();
    for (const durable of ["thread", { runId: "r" }, new Proxy(() => ({ runId: "r" }), {})]) {
      expect(() => toLangChainTools(executor, { durable: durable as NonNullable<ToLangChainToolsOptions["durable"]> })).toThrow(
        /toLangChainTools: options\.durable must be a function \(context\) => \(\{ runId \}\)/,
      );
    }
    expect(() => toLangChainTools(executor.registry, { durable: byThread })).toThrow(
      /toLangChainTools: options\.durable needs an executor made with durable: \{ store \}.*not a ToolRegistry/,
    );
  });

  it("an executor without a store refuses the first call (INVALID_ARGUMENT); the tool does not run", async () => {
    const { executor, executions } = setup(false);
    const [notify] = toLangChainTools(executor, { durable: byThread });
    await expect(notify?.invoke(call, thread("t"))).rejects.toMatchObject({
      code: ContractErrorCode.INVALID_ARGUMENT,
      message: expect.stringMatching(/options\.durable needs an executor made with durable: \{ store \}/),
    });
    expect(executions.notify).toBe(0);
  });
});
