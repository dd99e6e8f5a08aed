// The rows `npm run bench:instructions` counts: each side of each row as a setup that returns
// one call, built like the wall-time case that has the row (bench/cases/versus.ts,
// worker-dispatch.ts, serializer.ts): the same tool, the same model objects, the same peer.
// Each side runs in a process of its own, so a row imports only its own framework (dynamic
// imports below) and one side's code never shares inline caches with the other's.
import { pingArguments, pong, versusPing } from "../versus-tools.js";

/** One side of a row, ready to call: `call` returns what the side returns (checked before counting). */
export interface Subject {
  readonly call: () => unknown;
  /** Whether `call` returns a promise (awaited) or a value (called in a plain loop). */
  readonly async: boolean;
  /** What one call must return: a side that errored would be counting its error path. */
  readonly returns: unknown;
  readonly close?: () => Promise<void>;
}

export type SideName = "ours" | "peer";

export interface RowPlan {
  /** The wall-time row this one counts, in words. */
  readonly ours: string;
  readonly peer: string;
  /**
   * Calls before the counted windows (the JIT settles), then the two window lengths. 1,000
   * warm-up calls were too few for the agent steps and the pool round trip: Turbofan still
   * compiled 0.3-1.5M instructions a call inside their windows, and two repeats of the pool
   * row read 3.3 and 1.4 (docs/benchmarks.md, Instructions).
   */
  readonly warmup: number;
  readonly short: number;
  readonly long: number;
  /** The target on the ratio with GC counted (ours / peer, instructions per call). */
  readonly max: number;
  readonly setup: Record<SideName, () => Promise<Subject>>;
}

const PONG_TEXT = JSON.stringify(pong({ n: 1 }));

// ---- the AI SDK ----

async function aiSdkTools() {
  const { tool } = await import("ai");
  return (execute: (input: { n: number }) => unknown) => ({
    ping: tool({ description: versusPing.description, inputSchema: pingArguments, execute }),
  });
}

/** The SDK's own mock model answering every request with one call of `ping` (as bench/cases/versus.ts). */
async function aiSdkModel() {
  const { MockLanguageModelV4 } = await import("ai/test");
  const usage = {
    inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 1, text: 1, reasoning: undefined },
  };
  const model = new MockLanguageModelV4({
    doGenerate: async () => {
      model.doGenerateCalls.length = 0;
      return {
        content: [{ type: "tool-call", toolCallId: "call-1", toolName: "ping", input: '{"n":1}' }],
        finishReason: { unified: "tool-calls", raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
  return model;
}

async function aiSdkStepSide(side: SideName): Promise<Subject> {
  const { generateText, isStepCount } = await import("ai");
  const model = await aiSdkModel();
  const { toAiSdkTools } = await import("toolgate/ai-sdk");
  const { ToolRegistry } = await import("toolgate");
  // biome-ignore lint/suspicious/noExplicitAny: the two tool sets differ in their static types only
  const tools: any = side === "ours" ? toAiSdkTools(new ToolRegistry([versusPing])) : (await aiSdkTools())(pong);
  return {
    async: true,
    returns: side === "ours" ? PONG_TEXT : pong({ n: 1 }),
    call: async () => {
      const result = await generateText({ model, tools, prompt: "go", stopWhen: isStepCount(1) });
      const part = result.steps[0]?.content.find((item) => item.type === "tool-result" || item.type === "tool-error");
      return part?.type === "tool-result" ? part.output : part;
    },
  };
}

/** executeToolCall against the AI SDK's own per-call steps (bench/cases/versus.ts `aiSdkOwnSteps`). */
async function inProcessSide(side: SideName): Promise<Subject> {
  if (side === "ours") {
    const { executeToolCall, ToolRegistry } = await import("toolgate");
    const registry = new ToolRegistry([versusPing]);
    const call = { type: "toolCall", id: "call-1", name: "ping", arguments: { n: 1 } } as const;
    const signal = new AbortController().signal;
    return { async: true, returns: PONG_TEXT, call: async () => (await executeToolCall(registry, call, signal)).content };
  }
  const { asSchema } = await import("ai");
  const { executeTool, safeValidateTypes } = await import("@ai-sdk/provider-utils");
  const sdkTool = (await aiSdkTools())(pong).ping;
  const input = { n: 1 };
  const options = { toolCallId: "call-1", messages: [], abortSignal: undefined, context: undefined, experimental_sandbox: undefined };
  return {
    async: true,
    returns: { type: "json", value: pong({ n: 1 }) },
    call: async () => {
      const parsed = await safeValidateTypes({ value: input, schema: asSchema(sdkTool.inputSchema) });
      if (!parsed.success) throw parsed.error;
      let output: unknown;
      // biome-ignore lint/suspicious/noExplicitAny: the SDK's generic options type, as the SDK passes them for this call
      for await (const part of executeTool({ tool: sdkTool as any, input: parsed.value, options: options as any })) {
        if (part.type === "final") output = part.output;
      }
      return { type: "json", value: output === undefined ? null : JSON.parse(JSON.stringify(output)) };
    },
  };
}

// ---- the OpenAI Agents SDK ----

async function openAiAgentsSide(side: SideName): Promise<Subject> {
  const { Agent, Runner, tool, Usage } = await import("@openai/agents");
  const { functionCall } = await import("@openai/agents/testing");
  const { toOpenAiAgentsTools } = await import("toolgate/openai-agents");
  const { ToolRegistry } = await import("toolgate");
  const model = {
    getResponse: async () => ({
      output: [functionCall("ping", { n: 1 }, { callId: "call-1" })],
      usage: new Usage({ requests: 1 }),
      responseId: "response-1",
    }),
    getStreamedResponse: () => {
      throw new Error("instructions benchmark: the model does not stream");
    },
  };
  const tools =
    side === "ours"
      ? toOpenAiAgentsTools(new ToolRegistry([versusPing]))
      : [tool({ name: "ping", description: versusPing.description, parameters: pingArguments, execute: (input) => pong(input) })];
  const runner = new Runner({ tracingDisabled: true });
  const agent = new Agent({ name: "bench", instructions: "Call ping.", model, tools, toolUseBehavior: "stop_on_first_tool" });
  return { async: true, returns: PONG_TEXT, call: async () => (await runner.run(agent, "go")).finalOutput };
}

// ---- Pi ----

async function piSide(side: SideName): Promise<Subject> {
  const { agentLoop } = await import("@earendil-works/pi-agent-core");
  const { createAssistantMessageEventStream, fauxAssistantMessage, fauxProvider, fauxToolCall } = await import("@earendil-works/pi-ai");
  const { default: Type } = await import("typebox");
  const { toPiAgentTools } = await import("toolgate/pi");
  const { ToolRegistry } = await import("toolgate");
  const stream = () => {
    const events = createAssistantMessageEventStream();
    events.push({
      type: "done",
      reason: "toolUse",
      message: fauxAssistantMessage([fauxToolCall("ping", { n: 1 }, { id: "call-1" })], { stopReason: "toolUse" }),
    });
    return events;
  };
  const own = {
    name: "ping",
    label: "ping",
    description: versusPing.description,
    parameters: Type.Object({ n: Type.Number() }),
    execute: async (_toolCallId: string, params: unknown) => ({
      content: [{ type: "text" as const, text: JSON.stringify(pong(params as { n: number })) }],
      details: {},
    }),
  };
  // biome-ignore lint/suspicious/noExplicitAny: Pi's AgentTool list, as bench/cases/versus.ts casts it
  const tools: any[] = side === "ours" ? (toPiAgentTools(new ToolRegistry([versusPing])) as unknown as any[]) : [own];
  const model = fauxProvider().getModel();
  return {
    async: true,
    returns: PONG_TEXT,
    call: async () => {
      const loop = agentLoop(
        [{ role: "user", content: "go", timestamp: 0 }],
        { systemPrompt: "", messages: [], tools },
        // biome-ignore lint/suspicious/noExplicitAny: Pi's Message list, unchanged
        { model, convertToLlm: (messages) => messages as any, shouldStopAfterTurn: () => true },
        undefined,
        stream,
      );
      for await (const _event of loop) {
        // a loop's caller reads its events; both sides emit the same ones
      }
      const messages = await loop.result();
      const result = messages.find((message) => "role" in message && message.role === "toolResult");
      if (result === undefined || !("content" in result) || !Array.isArray(result.content)) return undefined;
      return result.isError ? result : (result.content[0] as { text?: string } | undefined)?.text;
    },
  };
}

// ---- MCP ----

async function mcpSide(side: SideName): Promise<Subject> {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { InMemoryTransport } = await import("@modelcontextprotocol/sdk/inMemory.js");
  const { McpServer } = await import("@modelcontextprotocol/sdk/server/mcp.js");
  const { createMcpServer } = await import("toolgate/mcp");
  const { ToolRegistry } = await import("toolgate");
  let server: { connect: (transport: InstanceType<typeof InMemoryTransport>) => Promise<void> };
  if (side === "ours") {
    server = createMcpServer(new ToolRegistry([versusPing]), { name: "bench-toolgate", version: "1.0.0" });
  } else {
    const own = new McpServer({ name: "bench-peer", version: "1.0.0" });
    own.registerTool("ping", { description: versusPing.description, inputSchema: pingArguments.shape }, async (input) => ({
      content: [{ type: "text", text: JSON.stringify(pong(input)) }],
    }));
    server = own;
  }
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: "bench-client", version: "1.0.0" });
  await client.connect(clientTransport);
  return {
    async: true,
    returns: PONG_TEXT,
    call: async () => {
      const result = await client.callTool({ name: "ping", arguments: { n: 1 } });
      const content = result.content as { type: string; text?: string }[] | undefined;
      return result.isError === true ? result : content?.[0]?.text;
    },
    close: () => client.close(),
  };
}

// ---- the pool round trip (bench/cases/worker-dispatch.ts, sequential, 1 thread) ----

async function workerDispatchSide(side: SideName): Promise<Subject> {
  const { RAW_WORKER, TOOLS_MODULE } = await import("../paths.js");
  if (side === "ours") {
    const { WorkerToolExecutor } = await import("toolgate/worker");
    const executor = await WorkerToolExecutor.create({ modules: [TOOLS_MODULE], minThreads: 1, maxThreads: 1 });
    const signal = new AbortController().signal;
    let n = 0;
    return {
      async: true,
      returns: JSON.stringify({ pong: 7 }),
      call: async () => {
        n = (n + 1) % 8;
        const result = await executor.executeToolCall({ type: "toolCall", id: `call-${n}`, name: "ping", arguments: { n: 7 } }, signal);
        return result.content;
      },
      close: () => executor.close(),
    };
  }
  const { Piscina } = await import("piscina");
  const piscina = new Piscina({ filename: RAW_WORKER.href, minThreads: 1, maxThreads: 1 });
  return {
    async: true,
    returns: { pong: 7 },
    call: () => piscina.run({ n: 7 }),
    close: () => piscina.close(),
  };
}

// ---- the serializer (bench/cases/serializer.ts, nested120) ----

async function serializerSide(side: SideName): Promise<Subject> {
  const { nested120 } = await import("../shapes.js");
  const value = nested120();
  const { stringify } = await import("safe-stable-stringify");
  const expected = stringify(value);
  if (side === "peer") return { async: false, returns: expected, call: () => stringify(value) };
  const { serializeToolOutput } = await import("toolgate");
  return {
    async: false,
    returns: expected,
    call: () => {
      const rendered = serializeToolOutput(value);
      return rendered.ok ? rendered.content : rendered;
    },
  };
}

/** Every row, by the name its figures have in bench/results.json under `instructions`. */
export const ROWS = {
  inProcessVsAiSdkSteps: {
    ours: "executeToolCall",
    peer: "the AI SDK's own per-call steps",
    warmup: 10_000,
    short: 500,
    long: 1500,
    max: 0.65,
    setup: { ours: () => inProcessSide("ours"), peer: () => inProcessSide("peer") },
  },
  aiSdkStep: {
    ours: "toAiSdkTools",
    peer: "the SDK's tool()",
    warmup: 10_000,
    short: 300,
    long: 900,
    max: 0.9,
    setup: { ours: () => aiSdkStepSide("ours"), peer: () => aiSdkStepSide("peer") },
  },
  openAiAgentsStep: {
    ours: "toOpenAiAgentsTools",
    peer: "the SDK's tool() (zod)",
    warmup: 10_000,
    short: 300,
    long: 900,
    max: 1.0,
    setup: { ours: () => openAiAgentsSide("ours"), peer: () => openAiAgentsSide("peer") },
  },
  mcpCall: {
    ours: "createMcpServer",
    peer: "McpServer.registerTool",
    warmup: 10_000,
    short: 300,
    long: 900,
    max: 1.0,
    setup: { ours: () => mcpSide("ours"), peer: () => mcpSide("peer") },
  },
  piStep: {
    ours: "toPiAgentTools (zod)",
    peer: "Pi's own TypeBox tool",
    warmup: 10_000,
    short: 300,
    long: 900,
    max: 1.0,
    setup: { ours: () => piSide("ours"), peer: () => piSide("peer") },
  },
  workerDispatch: {
    ours: "WorkerToolExecutor round trip (1 thread, both threads counted)",
    peer: "bare Piscina run (1 thread, both threads counted)",
    warmup: 10_000,
    short: 300,
    long: 900,
    max: 1.15,
    setup: { ours: () => workerDispatchSide("ours"), peer: () => workerDispatchSide("peer") },
  },
  "serializer.nested120": {
    ours: "serializeToolOutput",
    peer: "safe-stable-stringify",
    warmup: 10_000,
    short: 500,
    long: 1500,
    max: 0.95,
    setup: { ours: () => serializerSide("ours"), peer: () => serializerSide("peer") },
  },
} as const satisfies Record<string, RowPlan>;

export type RowName = keyof typeof ROWS;

export const ROW_NAMES = Object.keys(ROWS) as RowName[];

export const isRowName = (name: string): name is RowName => Object.hasOwn(ROWS, name);
