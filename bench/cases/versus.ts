// Case 10, "versus what you would use instead": the same trivial tool (bench/versus-tools.ts)
// through toolgate and through what a user of each framework would write without it, side by
// side in one process: one agent step of the AI SDK, the OpenAI Agents SDK and Pi, one MCP
// `callTool`, the AI SDK's own per-call steps, and the pool variants against the user's own
// tool calling a bare Piscina. The model (or transport) is the same object on both sides, so
// only the tool layer differs. Figures: µs per call of each side, and ours / peer (median of
// per-round ratios over interleaved rotated rounds; > 1 means toolgate is slower).
import { availableParallelism } from "node:os";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { AgentTool } from "@earendil-works/pi-agent-core";
import { fauxProvider } from "@earendil-works/pi-ai";
import { Agent, Runner } from "@openai/agents";
import type { ToolSet } from "ai";
import { Piscina } from "piscina";
import { executeToolCall, InProcessToolExecutor, type ToolCall, ToolRegistry } from "toolgate";
import { toAiSdkTools } from "toolgate/ai-sdk";
import { createMcpServer } from "toolgate/mcp";
import { toOpenAiAgentsTools } from "toolgate/openai-agents";
import { toPiAgentTools } from "toolgate/pi";
import { WorkerToolExecutor } from "toolgate/worker";
import { type CaseOptions, interleave, loadAverage, median, neverAborted, now, pairedRatios, round, type TargetCheck } from "../harness.js";
import { VERSUS_PISCINA_WORKER, VERSUS_TOOLS_MODULE } from "../paths.js";
import { aiSdkModel, aiSdkOwnSteps, aiSdkStep, sdkPing } from "../versus-sides/ai-sdk.js";
import { mcpCall, mcpClient, mcpOwnServer } from "../versus-sides/mcp.js";
import { openAiModel, openAiOwnPing, openAiStep } from "../versus-sides/openai-agents.js";
import { piOwnPing, piStep } from "../versus-sides/pi.js";
import { pong, versusPing } from "../versus-tools.js";

/** One comparison: both sides' µs per call and their ratio. */
export interface VersusFigure {
  /** What is compared, in words: toolgate's side, then the peer. */
  readonly ours: string;
  readonly peer: string;
  /** Rounds counted, and calls per side in each. */
  readonly rounds: number;
  readonly callsPerRound: number;
  readonly oursUsPerCall: number;
  readonly peerUsPerCall: number;
  /** Time per call, ours / peer: the median of per-round ratios (> 1 means slower). */
  readonly ratio: number;
  /** The lowest and highest per-round ratio. */
  readonly min: number;
  readonly max: number;
  /**
   * Process CPU time (every thread) per call, and ours / peer, as medians over rounds like the
   * wall times: less sensitive to other load (a preempted round costs wall time, not CPU time).
   */
  readonly oursCpuUsPerCall: number;
  readonly peerCpuUsPerCall: number;
  readonly cpuRatio: number;
}

export interface VersusResult {
  readonly rounds: number;
  /** 1-minute load average when the case started and ended (the machine may be shared). */
  readonly loadAverageStart: number;
  readonly loadAverageEnd: number;
  readonly aiSdkStep: VersusFigure;
  readonly openAiAgentsStep: VersusFigure;
  readonly mcpCall: VersusFigure;
  /** `mcpCall` again while an idle WorkerToolExecutor (every core a thread) is alive in the process (informational). */
  readonly mcpCallPoolAlive: VersusFigure;
  readonly piStep: VersusFigure;
  readonly inProcessVsAiSdkSteps: VersusFigure;
  /** The same call through an InProcessToolExecutor instead of `executeToolCall` (informational). */
  readonly inProcessExecutorUsPerCall: number;
  readonly aiSdkStepWorker: VersusFigure;
  readonly mcpCallWorker: VersusFigure;
  readonly targets: TargetCheck[];
}

/** The command that measures this case alone (the report's rows name it). */
export const VERSUS_COMMAND = "BENCH_CASE=versus npm run bench";

interface Plan {
  readonly smoke: boolean;
  /** Rounds counted, after `warmupRounds` discarded ones. */
  readonly rounds: number;
  readonly warmupRounds: number;
  /** Wall time a side gets per round, ms (calls per round are calibrated to it). */
  readonly roundMs: number;
}

/** Many short rounds: on a shared machine a short round is more often not preempted, and the median keeps those. */
const FULL_PLAN = { rounds: 301, warmupRounds: 30, roundMs: 2 };
/** The pool rows: longer rounds, so what an idle pool thread does between rounds (parked or not) is amortized over many calls. */
const FULL_POOL_PLAN = { rounds: 101, warmupRounds: 10, roundMs: 10 };

type Call = () => Promise<unknown>;

async function timePerCall(calls: number, one: Call): Promise<number> {
  const start = now();
  for (let call = 0; call < calls; call += 1) await one();
  return ((now() - start) * 1000) / calls;
}

/**
 * Calls per round so the slower side takes about `plan.roundMs`, from each side's best of three
 * timings after a warm-up of every side. (One timing right after 200 warm-up calls still ran
 * cold code: it read up to 3× the per-call time of the rounds, so a 10 ms pool round was
 * 9–42 calls, about 3 ms, and a parked thread's first call weighed 3× what the plan meant.)
 */
async function calibrate(plan: Plan, sides: readonly Call[]): Promise<number> {
  if (plan.smoke) return 3;
  for (const side of sides) await timePerCall(1000, side);
  let slowest = 0;
  for (const side of sides) {
    let best = Number.POSITIVE_INFINITY;
    for (let timing = 0; timing < 3; timing += 1) best = Math.min(best, await timePerCall(100, side));
    slowest = Math.max(slowest, best);
  }
  // At least 8 calls: a pool's thread is parked between rounds, and one call should not be all of a round.
  return Math.min(10_000, Math.max(8, Math.round((plan.roundMs * 1000) / slowest)));
}

/**
 * A minor GC, run before each side's round (outside its timing): rounds are short, and the
 * young garbage one side leaves would otherwise be collected in the other side's round.
 */
let minorGc: (() => void) | undefined;
function collectYoungGeneration(): void {
  if (minorGc === undefined) {
    setFlagsFromString("--expose-gc"); // as bench/cases/scaling.ts does, when the case first needs it
    const gc = runInNewContext("gc") as (options: { type: "minor" }) => void;
    minorGc = () => gc({ type: "minor" });
  }
  minorGc();
}

/** Each side's µs per call in every counted round: wall time, and the process's CPU time (every thread). */
interface Measured {
  readonly calls: number;
  readonly us: Record<string, number[]>;
  readonly cpuUs: Record<string, number[]>;
}

/** Interleaved rotated rounds of `calls` sequential calls per side (bench/harness.ts `interleave`). */
async function measure(plan: Plan, sides: Record<string, Call>): Promise<Measured> {
  const calls = await calibrate(plan, Object.values(sides));
  const cpuUs: Record<string, number[]> = {};
  const variants: Record<string, () => Promise<number>> = {};
  for (const [name, one] of Object.entries(sides)) {
    const cpu: number[] = [];
    cpuUs[name] = cpu;
    variants[name] = async () => {
      collectYoungGeneration();
      const cpuBefore = process.cpuUsage();
      const us = await timePerCall(calls, one);
      const used = process.cpuUsage(cpuBefore);
      cpu.push((used.user + used.system) / calls);
      return us;
    };
  }
  const us = await interleave(variants, plan.rounds, plan.warmupRounds);
  // The warm-up rounds' CPU figures are dropped like their times.
  for (const [name, cpu] of Object.entries(cpuUs)) cpuUs[name] = cpu.slice(plan.warmupRounds);
  return { calls, us, cpuUs };
}

function figureOf(labels: { readonly ours: string; readonly peer: string }, measured: Measured): VersusFigure {
  const ratios = pairedRatios(measured.us.ours ?? [], measured.us.peer ?? []);
  const cpuRatios = pairedRatios(measured.cpuUs.ours ?? [], measured.cpuUs.peer ?? []);
  return {
    ...labels,
    rounds: ratios.length,
    callsPerRound: measured.calls,
    oursUsPerCall: round(median(measured.us.ours ?? []), 2),
    peerUsPerCall: round(median(measured.us.peer ?? []), 2),
    ratio: round(median(ratios)),
    min: round(Math.min(...ratios)),
    max: round(Math.max(...ratios)),
    oursCpuUsPerCall: round(median(measured.cpuUs.ours ?? []), 2),
    peerCpuUsPerCall: round(median(measured.cpuUs.peer ?? []), 2),
    cpuRatio: round(median(cpuRatios)),
  };
}

/** One side of a comparison: its label, one call, and what that call must return. */
interface Side {
  readonly label: string;
  readonly call: Call;
  readonly returns: unknown;
}

/** Checks that each side returns what it must (a side that errored would be timing its error path), then measures both. */
async function compare(plan: Plan, ours: Side, peer: Side): Promise<VersusFigure> {
  expectSame(ours.label, await ours.call(), ours.returns);
  expectSame(peer.label, await peer.call(), peer.returns);
  return figureOf({ ours: ours.label, peer: peer.label }, await measure(plan, { ours: ours.call, peer: peer.call }));
}

/** Throws unless `actual` is `expected` (as JSON): a side that errored would be timing its error path. */
function expectSame(what: string, actual: unknown, expected: unknown): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(`versus benchmark: ${what} returned ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
  }
}

const PONG_TEXT = JSON.stringify(pong({ n: 1 }));

// ---- the case ----

/** The figure's own numbers, for a target row's note: both sides, the CPU ratio, the spread, and the command. */
const describeFigure = (figure: VersusFigure, context = ""): string =>
  `${figure.oursUsPerCall} µs vs ${figure.peerUsPerCall} µs per call${context}; CPU ratio ${figure.cpuRatio}; per-round ratios ${figure.min}-${figure.max}; ${VERSUS_COMMAND}`;

function check(id: string, figure: VersusFigure, max: number): TargetCheck {
  return {
    id,
    target: `${figure.ours} / ${figure.peer} (time per call) <= ${max}`,
    value: figure.ratio,
    min: figure.min,
    pass: figure.ratio <= max,
    note: describeFigure(figure),
  };
}

export async function benchVersus(options: CaseOptions = {}): Promise<VersusResult> {
  const smoke = options.smoke === true;
  const plan: Plan = smoke ? { smoke, rounds: 1, warmupRounds: 0, roundMs: 0 } : { smoke, ...FULL_PLAN };
  const poolPlan: Plan = smoke ? plan : { smoke, ...FULL_POOL_PLAN };
  const loadAverageStart = loadAverage();
  const registry = new ToolRegistry([versusPing]);
  const signal = neverAborted();

  options.log?.("versus: executeToolCall / the AI SDK's own per-call steps");
  const inProcess = await measureInProcess(plan, registry, signal);

  options.log?.("versus: one AI SDK step");
  const aiModel = aiSdkModel();
  const oursAiTools = toAiSdkTools(registry) as ToolSet;
  const ownAiTools: ToolSet = { ping: sdkPing(pong) };
  const aiSdkStepFigure = await compare(
    plan,
    { label: "toAiSdkTools", call: () => aiSdkStep(aiModel, oursAiTools), returns: PONG_TEXT },
    { label: "the SDK's tool()", call: () => aiSdkStep(aiModel, ownAiTools), returns: pong({ n: 1 }) },
  );

  options.log?.("versus: one OpenAI Agents step");
  const runner = new Runner({ tracingDisabled: true });
  const agentOf = (tools: Agent["tools"]) =>
    new Agent({ name: "bench", instructions: "Call ping.", model: openAiModel, tools, toolUseBehavior: "stop_on_first_tool" });
  const oursAgent = agentOf(toOpenAiAgentsTools(registry));
  const ownAgent = agentOf([openAiOwnPing()]);
  const openAiAgentsStep = await compare(
    plan,
    { label: "toOpenAiAgentsTools", call: () => openAiStep(runner, oursAgent), returns: PONG_TEXT },
    { label: "the SDK's tool() (zod)", call: () => openAiStep(runner, ownAgent), returns: PONG_TEXT },
  );

  options.log?.("versus: one Pi 0.85 step");
  const piModel = fauxProvider().getModel();
  const oursPiTools = toPiAgentTools(registry) as unknown as AgentTool[];
  const ownPiTools = [piOwnPing];
  const piStepFigure = await compare(
    plan,
    { label: "toPiAgentTools (zod)", call: () => piStep(oursPiTools, piModel), returns: PONG_TEXT },
    { label: "Pi's own TypeBox tool", call: () => piStep(ownPiTools, piModel), returns: PONG_TEXT },
  );

  options.log?.("versus: one MCP callTool");
  const oursMcp = await mcpClient(createMcpServer(registry, { name: "bench-toolgate", version: "1.0.0" }));
  const ownMcp = await mcpClient(mcpOwnServer(pong));
  let mcpCallFigure: VersusFigure;
  let mcpCallPoolAlive: VersusFigure;
  try {
    const mcpLabels = { ours: "createMcpServer", peer: "McpServer.registerTool" };
    mcpCallFigure = await compare(
      plan,
      { label: "createMcpServer", call: () => mcpCall(oursMcp), returns: PONG_TEXT },
      { label: "McpServer.registerTool", call: () => mcpCall(ownMcp), returns: PONG_TEXT },
    );
    options.log?.("versus: one MCP callTool, an idle worker pool alive");
    const threads = availableParallelism();
    const idlePool = await WorkerToolExecutor.create({ modules: [VERSUS_TOOLS_MODULE], minThreads: threads, maxThreads: threads });
    try {
      mcpCallPoolAlive = await compare(
        plan,
        { label: mcpLabels.ours, call: () => mcpCall(oursMcp), returns: PONG_TEXT },
        { label: mcpLabels.peer, call: () => mcpCall(ownMcp), returns: PONG_TEXT },
      );
    } finally {
      await idlePool.close();
    }
  } finally {
    await oursMcp.close();
    await ownMcp.close();
  }

  options.log?.("versus: 1-thread pools, an AI SDK step and an MCP call");
  const workerExecutor = await WorkerToolExecutor.create({ modules: [VERSUS_TOOLS_MODULE], minThreads: 1, maxThreads: 1 });
  const piscina = new Piscina({ filename: VERSUS_PISCINA_WORKER.href, minThreads: 1, maxThreads: 1 });
  const viaPiscina = (input: { n: number }) => piscina.run(input) as Promise<unknown>;
  let aiSdkStepWorker: VersusFigure;
  let mcpCallWorker: VersusFigure;
  try {
    const oursWorkerAiTools = toAiSdkTools(workerExecutor) as ToolSet;
    const ownWorkerAiTools: ToolSet = { ping: sdkPing(viaPiscina) };
    aiSdkStepWorker = await compare(
      poolPlan,
      { label: "toAiSdkTools(WorkerToolExecutor, 1 thread)", call: () => aiSdkStep(aiModel, oursWorkerAiTools), returns: PONG_TEXT },
      {
        label: "the SDK's tool() calling piscina.run (1 thread)",
        call: () => aiSdkStep(aiModel, ownWorkerAiTools),
        returns: pong({ n: 1 }),
      },
    );
    const oursWorkerMcp = await mcpClient(createMcpServer(workerExecutor, { name: "bench-toolgate", version: "1.0.0" }));
    const ownWorkerMcp = await mcpClient(mcpOwnServer(viaPiscina));
    try {
      mcpCallWorker = await compare(
        poolPlan,
        { label: "createMcpServer(WorkerToolExecutor, 1 thread)", call: () => mcpCall(oursWorkerMcp), returns: PONG_TEXT },
        { label: "registerTool calling piscina.run (1 thread)", call: () => mcpCall(ownWorkerMcp), returns: PONG_TEXT },
      );
    } finally {
      await oursWorkerMcp.close();
      await ownWorkerMcp.close();
    }
  } finally {
    await workerExecutor.close();
    await piscina.close();
  }

  return {
    rounds: plan.rounds,
    loadAverageStart,
    loadAverageEnd: loadAverage(),
    aiSdkStep: aiSdkStepFigure,
    openAiAgentsStep,
    mcpCall: mcpCallFigure,
    mcpCallPoolAlive,
    piStep: piStepFigure,
    inProcessVsAiSdkSteps: inProcess.figure,
    inProcessExecutorUsPerCall: inProcess.executorUsPerCall,
    aiSdkStepWorker,
    mcpCallWorker,
    targets: [
      check("versus.aiSdkStep", aiSdkStepFigure, 1.0),
      check("versus.openAiAgentsStep", openAiAgentsStep, 1.05),
      check("versus.mcpCall", mcpCallFigure, 1.05),
      {
        id: "versus.mcpCallPoolAlive",
        target: "createMcpServer / McpServer.registerTool (time per call) with an idle worker pool alive (informational)",
        value: mcpCallPoolAlive.ratio,
        min: mcpCallPoolAlive.min,
        pass: true,
        note: describeFigure(mcpCallPoolAlive, `, an idle ${availableParallelism()}-thread WorkerToolExecutor alive`),
        informational: true,
      },
      check("versus.piStep", piStepFigure, 1.05),
      check("versus.inProcessVsAiSdkSteps", inProcess.figure, 0.8),
      check("versus.aiSdkStepWorker", aiSdkStepWorker, 1.05),
      check("versus.mcpCallWorker", mcpCallWorker, 1.05),
    ],
  };
}

/** executeToolCall (and an InProcessToolExecutor) against the AI SDK's own per-call steps. */
async function measureInProcess(
  plan: Plan,
  registry: ToolRegistry,
  signal: AbortSignal,
): Promise<{ figure: VersusFigure; executorUsPerCall: number }> {
  const executor = new InProcessToolExecutor(registry);
  const call: ToolCall = { type: "toolCall", id: "call-1", name: "ping", arguments: { n: 1 } };
  const input = { n: 1 };
  const sdkTool = sdkPing(pong);
  expectSame("executeToolCall", (await executeToolCall(registry, call, signal)).content, PONG_TEXT);
  expectSame("the InProcessToolExecutor", (await executor.executeToolCall(call, signal)).content, PONG_TEXT);
  expectSame("the AI SDK's own steps", await aiSdkOwnSteps(sdkTool, input), { type: "json", value: pong({ n: 1 }) });
  const measured = await measure(plan, {
    ours: () => executeToolCall(registry, call, signal),
    executor: () => executor.executeToolCall(call, signal),
    peer: () => aiSdkOwnSteps(sdkTool, input),
  });
  await executor.close();
  return {
    figure: figureOf({ ours: "executeToolCall", peer: "the AI SDK's own per-call steps" }, measured),
    executorUsPerCall: round(median(measured.us.executor ?? []), 2),
  };
}
