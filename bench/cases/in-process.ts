// Case 2: the in-process boundary's cost per call on a trivial tool, against the naive path
// an agent loop would write without it (validate, await execute, JSON.stringify), and against
// the contract's own steps called one after another with no pipeline around them (the least
// a call can cost with these steps: what bounds `inProcess.ratio` from below).
import { executeToolCall, type ToolCall, type ToolDefinition, ToolRegistry, type ToolResultMessage } from "toolgate";
import { snapshotToolCall, validateArguments } from "../../src/contract/call.js";
import { toolResultMessage } from "../../src/contract/results.js";
import type { Tool } from "../../src/contract/tools.js";
import { registeredTools } from "../../src/contract/tools.js";
import { discardProgress } from "../../src/executor/progress.js";
import { runTool } from "../../src/executor/run-tool.js";
import { throwIfAborted } from "../../src/executor/signal.js";
import { type CaseOptions, median, microRoundsAsync, neverAborted, pairedRatios, round, type TargetCheck } from "../harness.js";
import { ping } from "../tools.js";
import { benchTracing, type TracingFigures } from "./tracing.js";

export interface InProcessResult {
  readonly rounds: number;
  readonly oursUsPerCall: number;
  readonly naiveUsPerCall: number;
  /** Time per call, ours / naive (median of per-round ratios); informational, its floor is `stepsRatio`. */
  readonly ratio: number;
  /** The contract's steps alone (see contractSteps), µs per call. */
  readonly stepsUsPerCall: number;
  /** Time per call, the steps alone / naive: the lowest `ratio` these steps allow. */
  readonly stepsRatio: number;
  /** The same call's tracing costs: no SDK registered, and the real SDK (bench/cases/tracing.ts). */
  readonly tracing: TracingFigures;
  readonly targets: TargetCheck[];
}

/** What an agent loop does without a boundary: no snapshot, no budgets, no freezing, no abort race. */
async function naiveCall(tool: ToolDefinition, call: ToolCall, signal: AbortSignal) {
  const decision = tool.validate(call.arguments);
  if (!decision.ok)
    return {
      role: "toolResult",
      id: `tool-result-${call.id}`,
      toolCallId: call.id,
      toolName: call.name,
      content: String(decision.error),
      isError: true,
    };
  const output = await tool.execute(decision.value, { signal, toolCallId: call.id, reportProgress: () => {} });
  return {
    role: "toolResult",
    id: `tool-result-${call.id}`,
    toolCallId: call.id,
    toolName: call.name,
    content: JSON.stringify(output),
    isError: false,
  };
}

/**
 * The rules' own work for one call and nothing else: the abort checks, the call snapshot
 * (rule 4), the lookup (5), the validation (6), the frozen context (7), the run with its
 * thenable check and the bounded serialization (8-12), the frozen linked result (13), one
 * promise. No options, hooks, timeouts, progress or run request: what the pipeline adds is
 * `ours - steps`.
 */
function contractSteps(tools: Map<string, Tool>, call: unknown, signal: AbortSignal): Promise<ToolResultMessage> {
  throwIfAborted(signal);
  const snapshot = snapshotToolCall(call, undefined, tools);
  const tool = tools.get(snapshot.name);
  if (tool === undefined) throw new Error("in-process benchmark: the steps found no tool");
  const validation = validateArguments(tool, snapshot.arguments);
  if (!validation.ok) throw new Error("in-process benchmark: the steps refused the call");
  const context = Object.freeze({ signal, toolCallId: snapshot.id, reportProgress: discardProgress });
  const outcome = runTool(tool, validation.value, context);
  if (outcome instanceof Promise) throw new Error("in-process benchmark: the trivial tool settled asynchronously");
  throwIfAborted(signal);
  return Promise.resolve(toolResultMessage(snapshot, outcome.content, outcome.isError));
}

export async function benchInProcess(options: CaseOptions = {}): Promise<InProcessResult> {
  const smoke = options.smoke === true;
  const micro = smoke ? { rounds: 1, time: 5, warmupTime: 2, inner: 4 } : { rounds: 7, time: 150, warmupTime: 50, inner: 64 };
  const registry = new ToolRegistry([ping]);
  const signal = neverAborted();
  const call: ToolCall = { type: "toolCall", id: "call-1", name: "ping", arguments: { n: 1 } };
  const tool = ping as ToolDefinition;
  const ours = await executeToolCall(registry, call, signal);
  const naive = await naiveCall(tool, call, signal);
  const tools = registeredTools(registry);
  const steps = await contractSteps(tools, call, signal);
  if (ours.content !== naive.content || steps.content !== ours.content) throw new Error("in-process benchmark: the paths disagree");
  options.log?.("in-process call overhead");
  const ns = await microRoundsAsync(
    {
      ours: () => executeToolCall(registry, call, signal),
      naive: () => naiveCall(tool, call, signal),
      steps: () => contractSteps(tools, call, signal),
    },
    micro,
  );
  const ratios = pairedRatios(ns.ours, ns.naive);
  const ratio = median(ratios);
  const stepsRatios = pairedRatios(ns.steps, ns.naive);
  const stepsRatio = median(stepsRatios);
  options.log?.("in-process call, traced");
  const tracing = await benchTracing(registry, call, signal, median(ns.ours), micro, smoke);
  return {
    rounds: micro.rounds,
    oursUsPerCall: round(median(ns.ours) / 1000),
    naiveUsPerCall: round(median(ns.naive) / 1000),
    ratio: round(ratio),
    stepsUsPerCall: round(median(ns.steps) / 1000),
    stepsRatio: round(stepsRatio),
    tracing,
    targets: [
      {
        // Context, not a target (issue 32): a call with no contract at all cannot be beaten by
        // one that keeps the contract; the versus case compares with what users pick instead.
        id: "inProcess.ratio",
        target: "ours/naive (time per call; informational: a call with no contract; floor inProcess.stepsRatio)",
        value: round(ratio),
        min: round(Math.min(...ratios)),
        pass: true,
        note: `the floor is the contract's own steps with no pipeline, ${round(stepsRatio)}x the naive path (inProcess.stepsRatio): snapshot with own-data reads and freezing, validation decision, Proxy checks, frozen context and result (docs/benchmarks.md)`,
        informational: true,
      },
      {
        id: "inProcess.stepsRatio",
        target: "the contract's steps alone, no pipeline / naive (informational: the lowest inProcess.ratio these steps allow)",
        value: round(stepsRatio),
        min: round(Math.min(...stepsRatios)),
        pass: true,
        note: `the pipeline around the steps (options, hooks, timeouts, progress, the run request) adds ${round(median(ns.ours) / 1000 - median(ns.steps) / 1000)} µs per call`,
        informational: true,
      },
      {
        id: "inProcess.tracedRatio",
        target: "a call with the OpenTelemetry SDK registered / the same call with none (informational: what a recorded span costs)",
        value: tracing.tracedRatio ?? 0, // 0: not measured (the note says why)
        pass: true,
        note:
          tracing.unavailable ??
          `with no SDK registered a call looks for a tracer once: ${tracing.noSdkCheckNsPerCall} ns, ${round(tracing.noSdkCheckShare * 100, 2)}% of the call (docs/operations.md — Tracing)`,
        informational: true,
      },
    ],
  };
}
