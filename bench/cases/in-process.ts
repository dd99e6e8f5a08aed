// Case 2: the in-process boundary's cost per call on a trivial tool, against the naive path
// an agent loop would write without it (validate, await execute, JSON.stringify).
import { type CourseToolCall, type CourseToolDefinition, executeToolCall, ToolRegistry } from "toolgate";
import { type CaseOptions, median, microRoundsAsync, neverAborted, pairedRatios, round, type TargetCheck } from "../harness.js";
import { ping } from "../tools.js";

export interface InProcessResult {
  readonly rounds: number;
  readonly oursUsPerCall: number;
  readonly naiveUsPerCall: number;
  /** Time per call, ours / naive (median of per-round ratios); <= 3.5 is the target. */
  readonly ratio: number;
  readonly targets: TargetCheck[];
}

/** What an agent loop does without a boundary: no snapshot, no budgets, no freezing, no abort race. */
async function naiveCall(tool: CourseToolDefinition, call: CourseToolCall, signal: AbortSignal) {
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

export async function benchInProcess(options: CaseOptions = {}): Promise<InProcessResult> {
  const smoke = options.smoke === true;
  const micro = smoke ? { rounds: 1, time: 5, warmupTime: 2, inner: 4 } : { rounds: 7, time: 150, warmupTime: 50, inner: 64 };
  const registry = new ToolRegistry([ping]);
  const signal = neverAborted();
  const call: CourseToolCall = { type: "toolCall", id: "call-1", name: "ping", arguments: { n: 1 } };
  const tool = ping as CourseToolDefinition;
  const ours = await executeToolCall(registry, call, signal);
  const naive = await naiveCall(tool, call, signal);
  if (ours.content !== naive.content) throw new Error("in-process benchmark: the two paths disagree");
  options.log?.("in-process call overhead");
  const ns = await microRoundsAsync(
    {
      ours: () => executeToolCall(registry, call, signal),
      naive: () => naiveCall(tool, call, signal),
    },
    micro,
  );
  const ratios = pairedRatios(ns.ours, ns.naive);
  const ratio = median(ratios);
  return {
    rounds: micro.rounds,
    oursUsPerCall: round(median(ns.ours) / 1000),
    naiveUsPerCall: round(median(ns.naive) / 1000),
    ratio: round(ratio),
    targets: [
      {
        id: "inProcess.ratio",
        target: "ours/naive (time per call) <= 3.5",
        value: round(ratio),
        min: round(Math.min(...ratios)),
        pass: ratio <= 3.5,
        ...(ratio <= 3.5
          ? {}
          : {
              note: "the contract's fixed cost per call (docs/benchmarks.md: snapshot with own-data reads and freezing, validation decision, Proxy checks, frozen context and result) is above 3.5x the naive path",
            }),
      },
    ],
  };
}
