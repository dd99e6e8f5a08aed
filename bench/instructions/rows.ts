// The rows `npm run bench:instructions` counts: each side of each row as a setup that returns
// one call, built like the wall-time case that has the row (bench/cases/versus.ts,
// worker-dispatch.ts, serializer.ts): the same tool, the same model objects, the same peer.
// Each side runs in a process of its own, so a row imports only its own framework (dynamic
// imports below) and one side's code never shares inline caches with the other's.
import { pong, versusPing } from "../versus-tools.js";

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
   * row read 3.3 and 1.4 (docs/benchmarks.md, Instructions). Each window starts from the
   * same state (bench/instructions/subject.ts: a full GC, then calls that settle), so a
   * repeat's figure moves only by where the window's own GCs fall; one scavenge more in the
   * long window adds its cost over (long - short) to every call (the AI SDK's own steps: 3.2M
   * instructions, 3.2k a call over 1,000 calls), hence windows of thousands of calls.
   */
  readonly warmup: number;
  readonly short: number;
  readonly long: number;
  /** The target on the ratio with GC counted (ours / peer, instructions per call). */
  readonly max: number;
  /**
   * False: no full GC and settling calls before the windows (bench/instructions/subject.ts).
   * The pool round trip's second thread is not collected by the main thread's GC, and with it
   * both sides read higher and further apart (ours 95k, then 114-115k a call; the ratio 1.22,
   * then 1.35-1.37), Turbofan running in the long window (56k instructions a call).
   */
  readonly collectBeforeWindows?: false;
  readonly setup: Record<SideName, () => Promise<Subject>>;
}

const PONG_TEXT = JSON.stringify(pong({ n: 1 }));

// ---- the AI SDK ----

async function aiSdkStepSide(side: SideName): Promise<Subject> {
  const { aiSdkModel, aiSdkStep, sdkPing } = await import("../versus-sides/ai-sdk.js");
  const model = aiSdkModel();
  const { toAiSdkTools } = await import("toolgate/ai-sdk");
  const { ToolRegistry } = await import("toolgate");
  // biome-ignore lint/suspicious/noExplicitAny: the two tool sets differ in their static types only
  const tools: any = side === "ours" ? toAiSdkTools(new ToolRegistry([versusPing])) : { ping: sdkPing(pong) };
  return { async: true, returns: side === "ours" ? PONG_TEXT : pong({ n: 1 }), call: () => aiSdkStep(model, tools) };
}

/** executeToolCall against the AI SDK's own per-call steps (bench/versus-sides/ai-sdk.ts `aiSdkOwnSteps`). */
async function inProcessSide(side: SideName): Promise<Subject> {
  if (side === "ours") {
    const { executeToolCall, ToolRegistry } = await import("toolgate");
    const registry = new ToolRegistry([versusPing]);
    const call = { type: "toolCall", id: "call-1", name: "ping", arguments: { n: 1 } } as const;
    const signal = new AbortController().signal;
    return { async: true, returns: PONG_TEXT, call: async () => (await executeToolCall(registry, call, signal)).content };
  }
  const { aiSdkOwnSteps, sdkPing } = await import("../versus-sides/ai-sdk.js");
  const sdkTool = sdkPing(pong);
  const input = { n: 1 };
  return { async: true, returns: { type: "json", value: pong({ n: 1 }) }, call: () => aiSdkOwnSteps(sdkTool, input) };
}

// ---- the OpenAI Agents SDK ----

async function openAiAgentsSide(side: SideName): Promise<Subject> {
  const { Agent, Runner } = await import("@openai/agents");
  const { openAiModel, openAiOwnPing, openAiStep } = await import("../versus-sides/openai-agents.js");
  const { toOpenAiAgentsTools } = await import("toolgate/openai-agents");
  const { ToolRegistry } = await import("toolgate");
  const tools = side === "ours" ? toOpenAiAgentsTools(new ToolRegistry([versusPing])) : [openAiOwnPing()];
  const runner = new Runner({ tracingDisabled: true });
  const agent = new Agent({ name: "bench", instructions: "Call ping.", model: openAiModel, tools, toolUseBehavior: "stop_on_first_tool" });
  return { async: true, returns: PONG_TEXT, call: () => openAiStep(runner, agent) };
}

// ---- Pi ----

async function piSide(side: SideName): Promise<Subject> {
  const { fauxProvider } = await import("@earendil-works/pi-ai");
  const { piOwnPing, piStep } = await import("../versus-sides/pi.js");
  const { toPiAgentTools } = await import("toolgate/pi");
  const { ToolRegistry } = await import("toolgate");
  // biome-ignore lint/suspicious/noExplicitAny: Pi's AgentTool list, as bench/cases/versus.ts casts it
  const tools: any[] = side === "ours" ? (toPiAgentTools(new ToolRegistry([versusPing])) as unknown as any[]) : [piOwnPing];
  const model = fauxProvider().getModel();
  return { async: true, returns: PONG_TEXT, call: () => piStep(tools, model) };
}

// ---- MCP ----

async function mcpSide(side: SideName): Promise<Subject> {
  const { mcpCall, mcpClient, mcpOwnServer } = await import("../versus-sides/mcp.js");
  const { createMcpServer } = await import("toolgate/mcp");
  const { ToolRegistry } = await import("toolgate");
  const server =
    side === "ours" ? createMcpServer(new ToolRegistry([versusPing]), { name: "bench-toolgate", version: "1.0.0" }) : mcpOwnServer(pong);
  const client = await mcpClient(server);
  return { async: true, returns: PONG_TEXT, call: () => mcpCall(client), close: () => client.close() };
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
    short: 2000,
    long: 6000,
    max: 0.65,
    setup: { ours: () => inProcessSide("ours"), peer: () => inProcessSide("peer") },
  },
  aiSdkStep: {
    ours: "toAiSdkTools",
    peer: "the SDK's tool()",
    warmup: 10_000,
    short: 1000,
    long: 3000,
    max: 0.9,
    setup: { ours: () => aiSdkStepSide("ours"), peer: () => aiSdkStepSide("peer") },
  },
  openAiAgentsStep: {
    ours: "toOpenAiAgentsTools",
    peer: "the SDK's tool() (zod)",
    warmup: 10_000,
    short: 1000,
    long: 3000,
    max: 1.0,
    setup: { ours: () => openAiAgentsSide("ours"), peer: () => openAiAgentsSide("peer") },
  },
  mcpCall: {
    ours: "createMcpServer",
    peer: "McpServer.registerTool",
    warmup: 10_000,
    short: 1000,
    long: 3000,
    max: 1.0,
    setup: { ours: () => mcpSide("ours"), peer: () => mcpSide("peer") },
  },
  piStep: {
    ours: "toPiAgentTools (zod)",
    peer: "Pi's own TypeBox tool",
    warmup: 10_000,
    short: 1000,
    long: 3000,
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
    collectBeforeWindows: false,
    setup: { ours: () => workerDispatchSide("ours"), peer: () => workerDispatchSide("peer") },
  },
  "serializer.nested120": {
    ours: "serializeToolOutput",
    peer: "safe-stable-stringify",
    warmup: 10_000,
    short: 1000,
    long: 3000,
    max: 0.95,
    setup: { ours: () => serializerSide("ours"), peer: () => serializerSide("peer") },
  },
} as const satisfies Record<string, RowPlan>;

export type RowName = keyof typeof ROWS;

export const ROW_NAMES = Object.keys(ROWS) as RowName[];

export const isRowName = (name: string): name is RowName => Object.hasOwn(ROWS, name);
