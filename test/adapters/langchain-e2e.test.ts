// toolgate/langchain end to end: LangGraph's createReactAgent and langchain's createAgent
// over toolgate tools, with a scripted chat model of ours (a BaseChatModel subclass that
// records every request) playing the model. docs/adapters.md — Use it with LangChain.js and LangGraph.
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool as langChainTool } from "@langchain/core/tools";
import { Validator } from "@langchain/core/utils/json_schema";
import { Command, MemorySaver } from "@langchain/langgraph";
import { createReactAgent, ToolNode } from "@langchain/langgraph/prebuilt";
import { createAgent, createMiddleware } from "langchain";
import {
  ContractErrorCode,
  defineTool,
  describeTools,
  imageContent,
  NonRecoverableToolError,
  type ToolProgress,
  ToolRegistry,
  withAttachments,
} from "toolgate";
import {
  LANGCHAIN_PROGRESS_EVENT,
  type ToLangChainToolsOptions,
  type ToolgateApprovalDecision,
  type ToolgateApprovalRequest,
  toLangChainTools,
} from "toolgate/langchain";
import { WorkerToolExecutor } from "toolgate/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type Reply, ScriptedChatModel } from "../support/adapter-contract/langchain.js";
import { transferTool } from "../support/adapter-contract/tools.js";

type ToolCallSource = Parameters<typeof toLangChainTools>[0];

const add = defineTool({
  name: "add",
  description: "Adds two numbers.",
  parameters: z.object({ left: z.number(), right: z.number() }),
  execute: ({ left, right }) => left + right,
});
const count = defineTool({
  name: "count",
  description: "Counts to three, reporting progress.",
  parameters: z.object({}),
  execute: async (_args, { reportProgress }) => {
    reportProgress({ progress: 1, total: 3, message: "one" });
    await new Promise((resolve) => setTimeout(resolve, 80));
    return 3;
  },
});
const chart = defineTool({
  name: "chart",
  description: "Draws a chart.",
  parameters: z.object({}),
  execute: () => withAttachments("a chart", [imageContent(new Uint8Array([137, 80, 78, 71]), "image/png")]),
});
const fatal = defineTool({
  name: "fatal",
  description: "Fails for good.",
  parameters: z.object({}),
  execute: () => {
    throw new NonRecoverableToolError("the disk is gone");
  },
});

const WRONG_THEN_RIGHT: Reply[] = [
  { calls: [{ name: "add", args: { left: "two", right: 3 }, id: "call-1" }] },
  { calls: [{ name: "add", args: { left: 2, right: 3 }, id: "call-2" }] },
  { text: "2 + 3 = 5" },
];

/** The two agents a LangChain.js user builds, each over the same toolgate tools. */
const AGENTS = [
  {
    name: "LangGraph createReactAgent",
    make: (model: ScriptedChatModel, source: ToolCallSource, options: ToLangChainToolsOptions = {}) =>
      createReactAgent({ llm: model, tools: toLangChainTools(source, options), checkpointer: new MemorySaver() }),
    /** The documented way to end the run on a fatal error: a ToolNode that does not catch. */
    makeFatal: (model: ScriptedChatModel, source: ToolCallSource) =>
      createReactAgent({ llm: model, tools: new ToolNode(toLangChainTools(source), { handleToolErrors: false }) }),
  },
  {
    name: "langchain createAgent",
    make: (model: ScriptedChatModel, source: ToolCallSource, options: ToLangChainToolsOptions = {}) =>
      createAgent({ model, tools: toLangChainTools(source, options), checkpointer: new MemorySaver() }),
    /** The documented way: any wrapToolCall middleware, whose errors createAgent's ToolNode rethrows. */
    makeFatal: (model: ScriptedChatModel, source: ToolCallSource) =>
      createAgent({
        model,
        tools: toLangChainTools(source),
        middleware: [createMiddleware({ name: "rethrow", wrapToolCall: (request, handler) => handler(request) })],
      }),
  },
] as const;

const thread = (id: string) => ({ configurable: { thread_id: id } });

describe.each(AGENTS)("docs/adapters.md — Use it with LangChain.js and LangGraph: toLangChainTools with $name", (agent) => {
  it("a wrong call, then a corrected call, then an answer; the model reads toolgate's error and the result", async () => {
    const model = new ScriptedChatModel(WRONG_THEN_RIGHT);
    const registry = new ToolRegistry([add]);
    const state = await agent.make(model, registry).invoke({ messages: [new HumanMessage("What is 2 + 3?")] }, thread("t1"));
    expect(state.messages.at(-1)?.content).toBe("2 + 3 = 5");
    expect(model.requests).toHaveLength(3);
    // The model was shown describeTools' JSON Schema as it is.
    const [description] = describeTools(registry);
    expect(model.shown).toEqual([
      { type: "function", function: { name: "add", description: "Adds two numbers.", parameters: description?.parameters } },
    ]);
    // Second request: toolgate's argument error (not LangChain's schema check), as an error ToolMessage.
    expect(model.toolMessagesSeen(1)).toEqual([
      {
        id: "call-1",
        status: "error",
        content: JSON.stringify({
          error: {
            code: "TOOL_ARGUMENTS_INVALID",
            message: "Invalid arguments (1 issue):\n  - $.left: Invalid input: expected number, received string",
          },
        }),
      },
    ]);
    // Third request: both, the corrected result last.
    expect(model.toolMessagesSeen(2).at(-1)).toEqual({ id: "call-2", status: "success", content: "5" });
  });

  it("progress reaches LangGraph's custom stream (config.writer) and onProgress; images reach the model as image blocks", async () => {
    const model = new ScriptedChatModel([
      {
        calls: [
          { name: "count", args: {}, id: "call-c" },
          { name: "chart", args: {}, id: "call-i" },
        ],
      },
      { text: "done" },
    ]);
    const reports: ToolProgress[] = [];
    const graph = agent.make(model, new ToolRegistry([count, chart]), { onProgress: (progress) => reports.push(progress) });
    const custom: unknown[] = [];
    for await (const [mode, chunk] of await graph.stream(
      { messages: [new HumanMessage("go")] },
      { ...thread("t2"), streamMode: ["custom", "values"] },
    )) {
      if (mode === "custom") custom.push(chunk);
    }
    const report = { toolCallId: "call-c", toolName: "count", progress: 1, total: 3, message: "one" };
    expect(custom).toEqual([{ type: LANGCHAIN_PROGRESS_EVENT, progress: report }]);
    expect(reports).toEqual([report]);
    expect(model.toolMessagesSeen(1)).toEqual([
      { id: "call-c", status: "success", content: "3" },
      {
        id: "call-i",
        status: "success",
        content: [
          { type: "text", text: "a chart" },
          { type: "image", data: Buffer.from([137, 80, 78, 71]).toString("base64"), mimeType: "image/png" },
        ],
      },
    ]);
  });

  it("progress is also the tool run's custom event (streamEvents' on_custom_event)", async () => {
    const model = new ScriptedChatModel([{ calls: [{ name: "count", args: {}, id: "call-e" }] }, { text: "done" }]);
    const events: unknown[] = [];
    // Both agents stream events alike; their graph types differ too much for one call signature.
    const graph = agent.make(model, new ToolRegistry([count])) as unknown as {
      streamEvents(input: unknown, options: unknown): AsyncIterable<{ event: string; name: string; data: unknown }>;
    };
    for await (const event of graph.streamEvents({ messages: [new HumanMessage("go")] }, { ...thread("t9"), version: "v2" })) {
      if (event.event === "on_custom_event") events.push([event.name, event.data]);
    }
    const progress = { toolCallId: "call-e", toolName: "count", progress: 1, total: 3, message: "one" };
    expect(events).toEqual([[LANGCHAIN_PROGRESS_EVENT, { type: LANGCHAIN_PROGRESS_EVENT, progress }]]);
  });

  it("a NonRecoverableToolError ends the run with the genuine error (the documented setting)", async () => {
    const model = new ScriptedChatModel([{ calls: [{ name: "fatal", args: {}, id: "call-f" }] }, { text: "never" }]);
    const run = agent.makeFatal(model, new ToolRegistry([fatal])).invoke({ messages: [new HumanMessage("go")] });
    const error = await run.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(NonRecoverableToolError);
    expect((error as Error).message).toBe("the disk is gone");
    expect(model.requests).toHaveLength(1);
  });

  it("under the default error handling, onNonRecoverableError aborting the run's signal ends it with the genuine error", async () => {
    const model = new ScriptedChatModel([{ calls: [{ name: "fatal", args: {}, id: "call-f" }] }, { text: "never" }]);
    const controller = new AbortController();
    const seen: [unknown, string][] = [];
    const graph = agent.make(model, new ToolRegistry([fatal]), {
      onNonRecoverableError: (error, toolCallId) => {
        seen.push([error, toolCallId]);
        controller.abort(error);
      },
    });
    const error = await graph.invoke({ messages: [new HumanMessage("go")] }, { ...thread(`t8`), signal: controller.signal }).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(NonRecoverableToolError);
    expect(seen).toEqual([[error, "call-f"]]);
    expect(model.requests).toHaveLength(1);
  });

  it("without either, the framework's default error handling shows the model the fatal error and goes on", async () => {
    const model = new ScriptedChatModel([{ calls: [{ name: "fatal", args: {}, id: "call-f" }] }, { text: "went on" }]);
    const state = await agent.make(model, new ToolRegistry([fatal])).invoke({ messages: [new HumanMessage("go")] }, thread("t3"));
    expect(state.messages.at(-1)?.content).toBe("went on");
    expect(model.toolMessagesSeen(1)).toEqual([{ id: "call-f", status: "error", content: expect.stringContaining("the disk is gone") }]);
  });

  it("approval: the call interrupts the graph; resuming with { toolCallId, allow: true } naming it runs it", async () => {
    const model = new ScriptedChatModel([{ calls: [{ name: "add", args: { left: 2, right: 3 }, id: "call-a" }] }, { text: "5" }]);
    let ran = 0;
    const counted = defineTool({
      name: "add",
      description: "Adds two numbers.",
      parameters: z.object({ left: z.number(), right: z.number() }),
      execute: ({ left, right }) => {
        ran += 1;
        return left + right;
      },
    });
    const graph = agent.make(model, new ToolRegistry([counted]), { needsApproval: ({ toolName }) => toolName === "add" });
    const paused = await graph.invoke({ messages: [new HumanMessage("add")] }, thread("t4"));
    expect((paused as { __interrupt__?: unknown }).__interrupt__).toEqual([
      expect.objectContaining({
        value: { type: "toolgate_approval", toolCallId: "call-a", toolName: "add", arguments: { left: 2, right: 3 } },
      }),
    ]);
    expect(ran).toBe(0);
    const state = await graph.invoke(new Command({ resume: { toolCallId: "call-a", allow: true } }), thread("t4"));
    expect(ran).toBe(1);
    expect(state.messages.at(-1)?.content).toBe("5");
    expect(model.toolMessagesSeen(1)).toEqual([{ id: "call-a", status: "success", content: "5" }]);
  });

  it("approval: resuming with { toolCallId, allow: false, reason } answers TOOL_CALL_DENIED and the tool never runs; anything but a decision denies too", async () => {
    const notADecision =
      "the call was not approved: the resume value was not { toolCallId, allow: true } or { toolCallId, allow: false, reason } naming this call";
    for (const [resume, message] of [
      [{ toolCallId: "call-d", allow: false, reason: "not today" }, "not today"],
      [{ toolCallId: "call-d", allow: "yes" }, notADecision],
      [Object.create({ toolCallId: "call-d", allow: true }), notADecision],
      // The shape before issue 41 names no call: it cannot be bound to one, so it approves none.
      [{ allow: true }, notADecision],
      [new Proxy({ toolCallId: "call-d", allow: true }, {}), notADecision],
    ] as const) {
      const model = new ScriptedChatModel([{ calls: [{ name: "add", args: { left: 2, right: 3 }, id: "call-d" }] }, { text: "ok" }]);
      let ran = 0;
      const counted = defineTool({
        name: "add",
        description: "Adds.",
        parameters: z.object({}).passthrough(),
        execute: () => {
          ran += 1;
          return ran;
        },
      });
      const graph = agent.make(model, new ToolRegistry([counted]), { needsApproval: true });
      const id = `t5-${threads++}`;
      await graph.invoke({ messages: [new HumanMessage("add")] }, thread(id));
      await graph.invoke(new Command({ resume }), thread(id));
      expect(ran).toBe(0);
      expect(model.toolMessagesSeen(1)).toEqual([
        { id: "call-d", status: "error", content: JSON.stringify({ error: { code: "TOOL_CALL_DENIED", message } }) },
      ]);
    }
  });

  it("approval: several pending calls are answered at once, keyed by interrupt id, each decision naming its call (docs/adapters.md)", async () => {
    const model = new ScriptedChatModel([
      {
        calls: [
          { name: "transfer", args: { to: "alice" }, id: "call-alice" },
          { name: "transfer", args: { to: "bob" }, id: "call-bob" },
          { name: "transfer", args: { to: "mallory" }, id: "call-mallory" },
        ],
      },
      { text: "done" },
    ]);
    const { moved, tool } = transferTool();
    const graph = agent.make(model, new ToolRegistry([tool]), { needsApproval: true });
    const config = thread(`t10-${threads++}`);
    let state = (await graph.invoke({ messages: [new HumanMessage("pay")] }, config)) as Paused;
    const shown: number[] = [];
    while (state.__interrupt__ !== undefined && shown.length < 5) {
      shown.push(state.__interrupt__.length);
      // What docs/adapters.md shows: every request shown, answered at once.
      const resume = Object.fromEntries(
        state.__interrupt__.map(({ id, value }) => [id, decideFor(value, value.arguments as { to: string })]),
      );
      state = (await graph.invoke(new Command({ resume }), config)) as Paused;
    }
    // createAgent runs each call as its own task, so all three wait at once; createReactAgent's one
    // ToolNode runs them in one task, whose interrupts LangGraph shows one at a time.
    expect(shown).toEqual(agent.name === "langchain createAgent" ? [3] : [1, 1, 1]);
    expect(moved).not.toContain("mallory");
    if (agent.name === "langchain createAgent") expect(moved.sort()).toEqual(["alice", "bob"]);
    // One task re-runs from its start on each resume: an approved call before the one that paused runs again (LangGraph's rule).
    else expect([...new Set(moved)].sort()).toEqual(["alice", "bob"]);
    expect(model.toolMessagesSeen(1)).toEqual([
      { id: "call-alice", status: "success", content: "moved to alice" },
      { id: "call-bob", status: "success", content: "moved to bob" },
      {
        id: "call-mallory",
        status: "error",
        content: JSON.stringify({ error: { code: "TOOL_CALL_DENIED", message: "not to mallory" } }),
      },
    ]);
  });
});

type Paused = { __interrupt__?: { id: string; value: ToolgateApprovalRequest }[]; messages: unknown[] };
let threads = 0;

/** A person's decision on a request, naming its call back. */
function decideFor(request: ToolgateApprovalRequest, { to }: { to: string }): ToolgateApprovalDecision {
  return to === "mallory"
    ? { toolCallId: request.toolCallId, allow: false, reason: "not to mallory" }
    : { toolCallId: request.toolCallId, allow: true };
}

describe("toLangChainTools: a spinning tool in a WorkerToolExecutor, aborted", () => {
  let executor: WorkerToolExecutor;
  beforeAll(async () => {
    executor = await WorkerToolExecutor.create({
      modules: [new URL("../fixtures/framework-e2e-tools.mjs", import.meta.url).href],
      minThreads: 1,
      maxThreads: 1,
      abortGraceMs: 100,
    });
  });
  afterAll(() => executor.close());

  it.each(AGENTS)("$name rejects with the signal's reason; the model is not called again; the pool runs the next call", async (agent) => {
    const model = new ScriptedChatModel([{ calls: [{ name: "spin", args: {}, id: "call-s" }] }, { text: "never" }]);
    const controller = new AbortController();
    const reason = new Error("the user left");
    const graph = agent.make(model, executor, { onProgress: () => controller.abort(reason) });
    const started = Date.now();
    const error = await graph
      .invoke({ messages: [new HumanMessage("spin")] }, { ...thread(`t6-${agent.name}`), signal: controller.signal })
      .then(
        () => undefined,
        (rejection: unknown) => rejection,
      );
    expect(error).toBe(reason);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(model.requests).toHaveLength(1);
    // The spinning thread was replaced: the pool still answers.
    const next = await executor.executeToolCall(
      { type: "toolCall", id: "after", name: "add", arguments: { left: 1, right: 2 } },
      new AbortController().signal,
    );
    expect(next.content).toBe("3");
  });
});

describe("toLangChainTools: options", () => {
  it("refuses what it cannot use", () => {
    const registry = new ToolRegistry([add]);
    expect(() => toLangChainTools({} as ToolCallSource)).toThrow(expect.objectContaining({ code: ContractErrorCode.INVALID_ARGUMENT }));
    expect(() => toLangChainTools(registry, { needsApproval: "yes" as unknown as boolean })).toThrow(
      /options.needsApproval must be a boolean or a function/,
    );
    expect(() => toLangChainTools(registry, { onNonRecoverableError: "no" as unknown as () => void })).toThrow(
      /onNonRecoverableError must be a function/,
    );
    expect(() => toLangChainTools(registry, { onProgress: 1 as unknown as () => void })).toThrow(
      expect.objectContaining({ code: ContractErrorCode.INVALID_ARGUMENT }),
    );
  });

  it("invoked directly: a ToolMessage all the same; a writer that throws does not keep the report from onProgress", async () => {
    const reports: ToolProgress[] = [];
    const [tool] = toLangChainTools(new ToolRegistry([count]), { onProgress: (progress) => reports.push(progress) });
    const message = await tool?.invoke({ type: "tool_call", id: "call-direct", name: "count", args: {} }, {
      writer: () => {
        throw new Error("broken writer");
      },
    } as Parameters<NonNullable<typeof tool>["invoke"]>[1]);
    expect(ToolMessage.isInstance(message)).toBe(true);
    expect([message?.tool_call_id, message?.status, message?.content]).toEqual(["call-direct", "success", "3"]);
    expect(reports).toEqual([{ toolCallId: "call-direct", toolName: "count", progress: 1, total: 3, message: "one" }]);
  });

  it("invoked directly with arguments that are not JSON (a BigInt): toolgate's own refusal, not a serializer's TypeError", async () => {
    const [tool] = toLangChainTools(new ToolRegistry([add]));
    const call = { type: "tool_call" as const, id: "call-big", name: "add", args: 1n as unknown as Record<string, unknown> };
    const message = await tool?.invoke(call);
    expect([message?.tool_call_id, message?.status]).toEqual(["call-big", "error"]);
    expect(JSON.parse(message?.content as string)).toEqual({
      error: { code: "TOOL_ARGUMENTS_INVALID", message: "call.arguments must be a plain JSON object" },
    });
  });

  it("the schema is the tool's own: LangChain's validator may write into it, and so may tool() re-wrapping it (issue 41, defect 6)", async () => {
    const registry = new ToolRegistry([add]);
    const [wrapped] = toLangChainTools(registry);
    const schema = wrapped?.schema as Record<string, unknown>;
    // @cfworker/json-schema (StructuredTool.call, tool()) stamps __absolute_uri__ on every schema it compiles.
    const validator = new Validator(schema as never);
    expect(validator.validate({ left: 2, right: 3 }).valid).toBe(true);
    expect(validator.validate({ left: "two", right: 3 }).valid).toBe(false);
    expect(schema).toHaveProperty("__absolute_uri__");
    const rewrapped = langChainTool(({ left, right }: { left: number; right: number }) => String(left * right), {
      name: "multiply",
      description: "Multiplies.",
      schema: toLangChainTools(registry)[0]?.schema as never,
    });
    expect(await rewrapped.invoke({ left: 2, right: 3 })).toBe("6");
    // None of it reached the registry's schema or another adapter's copy.
    const registered = describeTools(registry)[0]?.parameters;
    expect(registered).not.toHaveProperty("__absolute_uri__");
    expect(Object.isFrozen(registered)).toBe(true);
    expect(toLangChainTools(registry)[0]?.schema).toEqual(registered);
  });

  it("a needsApproval function that throws asks a person (fails closed)", async () => {
    const model = new ScriptedChatModel([{ calls: [{ name: "add", args: { left: 1, right: 1 }, id: "call-t" }] }]);
    const graph = AGENTS[0].make(model, new ToolRegistry([add]), {
      needsApproval: () => {
        throw new Error("oops");
      },
    });
    const paused = await graph.invoke({ messages: [new HumanMessage("add")] }, thread("t7"));
    expect((paused as { __interrupt__?: unknown }).__interrupt__).toHaveLength(1);
  });
});
