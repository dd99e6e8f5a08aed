// The results as Markdown tables (readable in a terminal, pasteable into docs) and, for
// bench/report.md, the same tables with an SVG chart per section (bench/svg.ts).
import type { DurableResult } from "./cases/durable-calls.js";
import type { QueueResult } from "./cases/queue.js";
import { VERSUS_COMMAND, type VersusFigure, type VersusResult } from "./cases/versus.js";
import { type BenchResults, type CaseResults, SECTION_ORDER, type SectionName, type Sections, type TargetCheck } from "./index.js";
import { type Bar, barChart, logLogChart } from "./svg.js";

const fmt = (value: number, digits = 2): string =>
  Number.isFinite(value) ? value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: 0 }) : String(value);

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? "").length)));
  const line = (cells: readonly string[]) => `| ${cells.map((cell, column) => cell.padEnd(widths[column] as number)).join(" | ")} |`;
  return [line(header), `|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

/** Each section's tables, from its own figures (a case run alone renders just its sections). */
const SECTION_RENDERERS: { readonly [K in SectionName]: (section: Sections[K]) => string[] } = {
  versus: versusSection,
  serializer: (serializer) => [
    `1. Serializer: ops/s (higher is better), ${serializer.rounds} rounds`,
    table(
      ["shape", "values/members/depth", "toolgate", "safe-stable-stringify", "JSON.stringify", "ours/sss", "ours/JSON"],
      Object.entries(serializer.shapes).map(([name, shape]) => [
        name,
        `${shape.nodes}/${shape.members}/${shape.depth}`,
        fmt(shape.oursOpsPerSec, 0),
        fmt(shape.sssOpsPerSec, 0),
        fmt(shape.jsonOpsPerSec, 0),
        `${fmt(shape.oursVsSss)}x`,
        `${fmt(shape.oursVsJson)}x`,
      ]),
    ),
  ],
  inProcess: (inProcess) => [
    `2. In-process call overhead (trivial tool), ${inProcess.rounds} rounds`,
    table(
      ["path", "µs/call"],
      [
        ["executeToolCall", fmt(inProcess.oursUsPerCall, 3)],
        ["naive (validate, await execute, JSON.stringify)", fmt(inProcess.naiveUsPerCall, 3)],
        ["the contract's steps alone (no pipeline)", fmt(inProcess.stepsUsPerCall, 3)],
        ["ratio ours/naive (informational context: a call with no contract)", `${fmt(inProcess.ratio)}x`],
        ["ratio steps/naive (the floor of ours/naive)", `${fmt(inProcess.stepsRatio)}x`],
        [
          "executeToolCall, no OpenTelemetry SDK: the look for a tracer",
          `${fmt(inProcess.tracing.noSdkCheckNsPerCall / 1000, 4)} (${fmt(inProcess.tracing.noSdkCheckShare * 100, 2)}% of a call)`,
        ],
        [
          "executeToolCall, OpenTelemetry SDK registered (a span per call)",
          inProcess.tracing.tracedUsPerCall === null
            ? `not measured: ${inProcess.tracing.unavailable ?? "the SDK was not available"}`
            : `${fmt(inProcess.tracing.tracedUsPerCall, 3)} (${fmt(inProcess.tracing.tracedRatio ?? Number.NaN)}x)`,
        ],
      ],
    ),
  ],
  workerDispatch: (workerDispatch) => [
    `3. Worker dispatch round trip (trivial tool), ${workerDispatch.rounds} rounds`,
    table(
      [
        "variant",
        "threads",
        "in flight",
        "toolgate µs/call",
        "Piscina µs/call",
        "toolgate calls/s",
        "Piscina calls/s",
        "ours/Piscina",
        "CPU µs/call ours, Piscina",
        "CPU ratio",
        "control/Piscina",
      ],
      (["sequential", "parallel"] as const).map((name) => {
        const variant = workerDispatch[name];
        return [
          name,
          String(variant.threads),
          String(variant.inFlight),
          fmt(variant.oursUsPerCall, 1),
          fmt(variant.piscinaUsPerCall, 1),
          fmt(variant.oursCallsPerSec, 0),
          fmt(variant.piscinaCallsPerSec, 0),
          `${fmt(variant.ratio)}x`,
          `${fmt(variant.oursCpuUsPerCall, 1)}, ${fmt(variant.piscinaCpuUsPerCall, 1)}`,
          `${fmt(variant.cpuRatio)}x`,
          `${fmt(variant.controlRatio)}x`,
        ];
      }),
    ),
  ],
  cpuBatch: (cpuBatch) => [
    `4. CPU-heavy batch: ${cpuBatch.calls} calls x ${fmt(cpuBatch.toolMs)} ms (burn ${fmt(cpuBatch.iterations, 0)} iterations), ${cpuBatch.rounds} rounds`,
    table(
      ["executor", "batch ms", "calls/s", "speedup", "cores of CPU used"],
      [
        [
          "in-process (executeToolCalls)",
          fmt(cpuBatch.inProcessMs, 1),
          fmt(cpuBatch.inProcessCallsPerSec, 1),
          "1x",
          fmt(cpuBatch.inProcessCoresUsed),
        ],
        [
          `worker pool (${cpuBatch.threads} threads)`,
          fmt(cpuBatch.workerMs, 1),
          fmt(cpuBatch.workerCallsPerSec, 1),
          `${fmt(cpuBatch.speedup)}x`,
          fmt(cpuBatch.workerCoresUsed),
        ],
        [
          `bare Piscina (${cpuBatch.threads} threads, baseline)`,
          fmt(cpuBatch.piscinaMs, 1),
          fmt((cpuBatch.calls * 1000) / cpuBatch.piscinaMs, 1),
          `${fmt(cpuBatch.piscinaSpeedup)}x`,
          "-",
        ],
      ],
    ),
  ],
  responsiveness: (responsiveness) => [
    `5. Main-thread event-loop delay during 4 (monitorEventLoopDelay, resolution ${responsiveness.resolutionMs} ms; p50/p99: median over rounds)`,
    table(
      ["executor", "samples", "p50 ms", "p99 ms", "max ms"],
      (["inProcess", "worker"] as const).map((name) => {
        const delay = responsiveness[name];
        return [
          name === "inProcess" ? "in-process" : "worker pool",
          String(delay.samples),
          fmt(delay.p50Ms),
          fmt(delay.p99Ms),
          fmt(delay.maxMs),
        ];
      }),
    ),
  ],
  abort: (abort) => [
    `6. Abort latency, ${abort.rounds} rounds (worker pool: 1 thread, abortGraceMs ${abort.abortGraceMs})`,
    table(
      ["executor", "tool", "abort() -> rejection ms", "abort() -> next call served ms"],
      [
        ["in-process", "cooperative", fmt(abort.inProcess.cooperativeRejectMs, 3), "-"],
        [
          "in-process",
          `spinning ${abort.inProcess.spinMs} ms`,
          `never: ${abort.inProcess.spinningOutcome} ${fmt(abort.inProcess.spinningSettledAfterMs, 1)} ms after the intended abort`,
          "-",
        ],
        ["worker pool", "cooperative", fmt(abort.worker.cooperativeRejectMs, 3), fmt(abort.worker.cooperativeNextCallMs)],
        [
          "worker pool",
          "spinning",
          fmt(abort.worker.spinningRejectMs, 3),
          `${fmt(abort.worker.spinningNextCallMs)} (${abort.worker.threadReplaced ? "new thread" : "same thread!"})`,
        ],
      ],
    ),
  ],
  scaling: scalingSection,
  peers: peersSection,
  queue: (queue) => [renderQueueSection(queue)],
  budgets: (budgets) => [
    `Budgets: the worst admitted input of each default budget, beside JSON.stringify of the same value, ${budgets.rounds} rounds`,
    table(
      ["side", "budget", "input", "toolgate µs", "JSON.stringify µs", "ours/JSON"],
      Object.values(budgets.cases).map((figures) => [
        figures.side,
        figures.budget,
        figures.input,
        fmt(figures.oursUs, 2),
        fmt(figures.jsonUs, 2),
        `${fmt(figures.oursOverJson)}x`,
      ]),
    ),
  ],
};

/** The sections a full report shows, in order (the budgets' figures live in docs/benchmarks.md). */
const REPORT_SECTIONS: readonly SectionName[] = ["versus", ...SECTION_ORDER.filter((name) => name !== "versus" && name !== "budgets")];

function sectionLines<K extends SectionName>(name: K, section: Sections[K]): string[] {
  return SECTION_RENDERERS[name](section);
}

function targetsTable(targets: readonly TargetCheck[], summary: BenchResults["summary"]): string {
  return [
    `Targets: ${summary.passed} pass, ${summary.missed} miss (info rows are context, not counted)`,
    table(
      ["id", "target", "value", "verdict", "note"],
      targets.map((check) => [
        check.id,
        check.target,
        // Over processes: the median process's value, with how far the processes spread.
        check.processes !== undefined && check.processes > 1
          ? `${fmt(check.value, 3)} (median of ${check.processes}, spread ${fmt(check.spread ?? 0, 3)})`
          : fmt(check.value, 3),
        check.informational === true ? "info" : check.pass ? "PASS" : "MISS",
        check.note ?? "",
      ]),
    ),
  ].join("\n");
}

export function renderReport(results: BenchResults): string {
  const { machine } = results;
  const out: string[] = [
    `toolgate benchmarks (${results.mode}) — Node ${machine.node}, ${machine.platform}/${machine.arch}, ${machine.availableParallelism} cores (${machine.cpuModel}), ${fmt(results.durationMs / 1000, 1)} s, load average ${machine.loadAverageStart} -> ${machine.loadAverageEnd}`,
    "Medians of interleaved rounds; ratios are medians of per-round ratios. Absolute times vary by machine; ratios hold.",
  ];
  if (results.caseProcesses !== undefined) {
    out.push("Each case ran in a process of its own: no case's figures depend on what the cases before it left in the engine.");
  }
  const alone = Object.entries(results.caseRuns ?? {});
  if (alone.length > 0) {
    out.push(
      `Run alone since (BENCH_CASE): ${alone.map(([name, run]) => `${name} at ${run.startedAt} (Node ${run.node}, load average ${run.loadAverageStart} -> ${run.loadAverageEnd})`).join("; ")}`,
    );
  }
  for (const name of REPORT_SECTIONS) out.push("", ...sectionLines(name, results[name]));
  out.push("", ...versusContext(results), "", targetsTable(results.targets, results.summary));
  return out.join("\n");
}

/** What `BENCH_CASE=<name>` prints: the case's sections, and its target rows. */
export function renderCaseReport(results: CaseResults): string {
  const { run, sections } = results;
  const out: string[] = [
    `toolgate benchmark case ${results.name} alone — Node ${run.node}, ${fmt(run.durationMs / 1000, 1)} s, load average ${run.loadAverageStart} -> ${run.loadAverageEnd}`,
  ];
  for (const name of Object.keys(sections) as SectionName[]) {
    const section = sections[name];
    if (section !== undefined) out.push("", ...sectionLines(name, section));
  }
  const targets = Object.values(sections).flatMap((section) => section.targets);
  const counted = targets.filter((check) => check.informational !== true);
  const missed = counted.filter((check) => !check.pass);
  if (targets.length > 0) {
    out.push("", targetsTable(targets, { passed: counted.length - missed.length, missed: missed.length, missedIds: [] }));
  }
  return out.join("\n");
}

/** The comparisons of case 10, in the order of the issue that set their targets. */
const VERSUS_ROWS: { readonly [K in VersusKey]: string } = {
  aiSdkStep: "one AI SDK 7 agent step with a tool call",
  openAiAgentsStep: "one OpenAI Agents step",
  mcpCall: "one MCP callTool (in-memory transport)",
  mcpCallPoolAlive: "the same, an idle worker pool alive in the process",
  piStep: "one Pi 0.85 step",
  inProcessVsAiSdkSteps: "one in-process call / the AI SDK's own per-call steps",
  aiSdkStepWorker: "one AI SDK step, the tool on a 1-thread pool",
  mcpCallWorker: "one MCP callTool, the tool on a 1-thread pool",
};
type VersusKey = { [K in keyof VersusResult]: VersusResult[K] extends VersusFigure ? K : never }[keyof VersusResult];

function versusSection(versus: VersusResult): string[] {
  const rows = (Object.entries(VERSUS_ROWS) as [VersusKey, string][]).map(([key, what]) => {
    const figure = versus[key];
    const check = versus.targets.find((target) => target.id === `versus.${key}`);
    const verdict = check === undefined ? "-" : check.informational === true ? "info" : check.pass ? "PASS" : "MISS";
    const bar = check === undefined || check.informational === true ? "-" : (/<= [0-9.]+$/.exec(check.target)?.[0] ?? "-");
    return [
      what,
      `\`versus.${key}\``,
      `${figure.ours} / ${figure.peer}`,
      fmt(figure.oursUsPerCall, 2),
      fmt(figure.peerUsPerCall, 2),
      `${fmt(figure.ratio, 3)}x (${fmt(figure.min, 2)}-${fmt(figure.max, 2)})`,
      `${fmt(figure.cpuRatio, 3)}x`,
      bar,
      verdict,
      `\`${VERSUS_COMMAND}\``,
    ];
  });
  return [
    `Versus what you would use instead: the same trivial zod tool, toolgate / what a user would write without it, the model or transport shared; ${versus.rounds} rounds (the pool rows ${versus.aiSdkStepWorker.rounds}), load average ${versus.loadAverageStart} -> ${versus.loadAverageEnd}`,
    "ours/instead is time per call (> 1: toolgate slower), the median of per-round ratios (lowest-highest round in brackets); CPU: the same with the process's CPU time (every thread), which a preempted round does not inflate.",
    table(
      [
        "comparison",
        "id",
        "toolgate / instead",
        "toolgate µs/call",
        "instead µs/call",
        "ours/instead",
        "CPU ours/instead",
        "target",
        "verdict",
        "command",
      ],
      rows,
    ),
    `(an InProcessToolExecutor took ${fmt(versus.inProcessExecutorUsPerCall, 3)} µs per call in the in-process row's rounds)`,
  ];
}

/** The naive-call ratios, kept as context beside the versus rows: a call with no contract at all, and the floor the contract's own steps set. */
function versusContext({ inProcess }: BenchResults): string[] {
  return [
    "Context, not targets: toolgate against a call with no contract at all (the floor is what the contract's own steps cost)",
    table(
      ["id", "what", "ours / naive", "floor"],
      [
        [
          "`inProcess.ratio`",
          "executeToolCall / validate, await execute, JSON.stringify",
          `${fmt(inProcess.ratio)}x`,
          `${fmt(inProcess.stepsRatio)}x (\`inProcess.stepsRatio\`: the contract's steps alone)`,
        ],
      ],
    ),
  ];
}

/** Case 7's tables: vs raw BullMQ, and side by side with BullMQ's sandboxed processor. */
export function renderQueueSection(queue: QueueResult): string {
  if (!queue.ran) return `9. Through Redis (BullMQ): not run (${queue.reason})`;
  const raw = `9. Through Redis (BullMQ): toolgate-worker hosts (1 thread each) vs raw BullMQ workers (concurrency 1), ${queue.rounds} rounds\n${table(
    ["hosts", "in flight", "toolgate µs/call", "BullMQ µs/call", "toolgate calls/s", "BullMQ calls/s", "ours/BullMQ"],
    queue.variants.map((variant) => [
      String(variant.hosts),
      String(variant.inFlight),
      fmt(variant.oursUsPerCall, 1),
      fmt(variant.bullmqUsPerCall, 1),
      fmt(variant.oursCallsPerSec, 0),
      fmt(variant.bullmqCallsPerSec, 0),
      `${fmt(variant.ratio)}x`,
    ]),
  )}`;
  const withDurable = `${raw}\n\n${renderDurable(queue.durable)}`;
  const sandbox = queue.sandbox;
  if (!sandbox.ran) return `${withDurable}\n\n9b. vs BullMQ sandboxed: not run (${sandbox.reason})`;
  const counts = sandbox.counts;
  return `${withDurable}\n\n9b. vs BullMQ sandboxed (useWorkerThreads, concurrency 1) on a private redis-server, 1 host thread, ${sandbox.rounds} rounds\n${table(
    ["in flight", "toolgate µs/call", "sandboxed µs/call", "ours/sandboxed"],
    sandbox.variants.map((variant) => [
      String(variant.inFlight),
      fmt(variant.oursUsPerCall, 1),
      fmt(variant.peerUsPerCall, 1),
      `${fmt(variant.ratio)}x`,
    ]),
  )}\nExact counts per call on a fresh private redis-server (bench/cases/queue-commands.ts):\n${table(
    ["per call", "toolgate", "sandboxed BullMQ"],
    [
      ["Redis commands, 1 in flight (Lua included)", fmt(counts.inFlight1.ours.commands, 1), fmt(counts.inFlight1.peer.commands, 1)],
      ["bytes sent to Redis, 1 in flight", fmt(counts.inFlight1.ours.bytes, 0), fmt(counts.inFlight1.peer.bytes, 0)],
      ["requests on a sequential call's critical path", String(counts.criticalPath.ours), String(counts.criticalPath.peer)],
      ["Redis commands, 8 in flight (Lua included)", fmt(counts.inFlight8.ours.commands, 1), fmt(counts.inFlight8.peer.commands, 1)],
    ],
  )}`;
}

/** Issue 42: durable calls beside plain ones (bench/cases/durable-calls.ts). */
function renderDurable(durable: DurableResult): string {
  if (!durable.ran) return `9c. Durable calls: not run (${durable.reason})`;
  const { inProcess, queue } = durable;
  const rows = [
    [
      "in-process, redisDurableStore",
      `${fmt(inProcess.durableUsPerCall, 1)} µs vs ${fmt(inProcess.plainUsPerCall, 1)} µs (PING ${fmt(inProcess.roundTripUs, 1)} µs)`,
      `${fmt(inProcess.vsBound)}x the bound 1.1 × plain + 1 round trip; ${fmt(inProcess.vsFloor)}x the floor (its two scripts alone: ${fmt(inProcess.floorProbeUs, 1)} µs)`,
      fmt(inProcess.commandsPerCall, 1),
      `${inProcess.criticalPathRequests} (plain: 0)`,
    ],
  ];
  if (queue !== undefined) {
    rows.push([
      "queue, 1 host thread",
      `durable/plain ${fmt(queue.vsPlain.inFlight1)}x at 1 in flight, ${fmt(queue.vsPlain.inFlight8)}x at 8`,
      "target ≤ 1.15",
      `${fmt(queue.commandsPerCall.durable.commands, 1)} (plain: ${fmt(queue.commandsPerCall.plain.commands, 1)})`,
      `${queue.criticalPathRequests.durable} (plain: ${queue.criticalPathRequests.plain})`,
    ]);
  }
  const table9c = table(["durable call", "time", "against", "Redis commands/call", "critical-path requests"], rows);
  return `9c. Durable calls beside plain ones, private redis-server, ${durable.rounds} rounds${queue === undefined ? ` (queue: ${durable.queueReason})` : ""}\n${table9c}`;
}

function scalingSection(scaling: BenchResults["scaling"]): string[] {
  const rows = Object.entries(scaling.series).map(([name, series]) => {
    const first = series.points[0];
    const last = series.points[series.points.length - 1];
    const perCall = last?.usPerCall === undefined ? "" : `${fmt(last.usPerCall, 3)} µs, ${fmt(last.bytesPerCall ?? 0, 0)} B`;
    return [
      name,
      series.what,
      `${fmt(first?.n ?? 0, 0)} -> ${fmt(last?.n ?? 0, 0)}`,
      `${fmt(first?.us ?? 0, 1)} -> ${fmt(last?.us ?? 0, 1)}`,
      perCall,
      `${fmt(series.perDoubling)}x`,
    ];
  });
  return [
    `7. Scaling: cost as N doubles (per doubling: growth over the upper half of the range), ${scaling.rounds} rounds`,
    table(["case", "what", "N", "µs (first -> last)", "per call at the last N", "per doubling"], rows),
  ];
}

function peersSection(peers: BenchResults["peers"]): string[] {
  const rows = Object.entries(peers.peers).map(([name, figures]) => [
    name,
    fmt(figures.usPerCall, 2),
    fmt(figures.cpuTaskUsPerCall, 1),
    name === "toolgate" ? "-" : `${fmt(figures.toolgateRatio)}x`,
    name === "toolgate" ? "-" : `+${fmt(figures.toolgateOverheadUs, 1)}`,
  ]);
  return [
    `8. Peers: 1 thread, one call at a time, ${peers.rounds} rounds of ${peers.callsPerRound} no-op calls (CPU task: burn ${fmt(peers.cpuIterations, 0)} iterations)`,
    table(["pool", "no-op µs/call", "CPU task µs/call", "toolgate / this", "toolgate overhead µs/call"], rows),
  ];
}

/** One SVG per section, by file name (bench/charts/<name>.svg). */
export function renderCharts(results: BenchResults): Record<string, string> {
  const { serializer, inProcess, workerDispatch, cpuBatch, responsiveness, abort, scaling, peers } = results;
  const shapes = Object.entries(serializer.shapes);
  const ratioBars: Bar[] = shapes.flatMap(([name, shape]) => [
    { label: `${name} vs safe-stable-stringify`, value: shape.oursVsSss },
    { label: `${name} vs JSON.stringify`, value: shape.oursVsJson },
  ]);
  const lines = Object.entries(scaling.series)
    .filter(([name]) => name !== "cpuThreads")
    .map(([name, series]) => ({ name, points: series.points.map((point) => ({ x: point.n, y: point.us })) }));
  return {
    versus: barChart(
      "Versus what you would use instead: toolgate / instead (time per call)",
      "x",
      (Object.keys(VERSUS_ROWS) as VersusKey[]).map((key) => ({ label: key, value: results.versus[key].ratio })),
      { value: 1, label: "parity" },
    ),
    serializer: barChart("1. Serializer: toolgate's speed relative to each baseline (ops/s ratio)", "x", ratioBars, {
      value: 1,
      label: "parity",
    }),
    "in-process": barChart("2. In-process call, trivial tool", "µs", [
      { label: "executeToolCall", value: inProcess.oursUsPerCall },
      { label: "naive path", value: inProcess.naiveUsPerCall },
      { label: "contract steps alone", value: inProcess.stepsUsPerCall },
    ]),
    "worker-dispatch": barChart("3. Worker round trip, trivial tool", "µs", [
      { label: "toolgate, sequential", value: workerDispatch.sequential.oursUsPerCall },
      { label: "Piscina, sequential", value: workerDispatch.sequential.piscinaUsPerCall },
      { label: "toolgate, parallel", value: workerDispatch.parallel.oursUsPerCall },
      { label: "Piscina, parallel", value: workerDispatch.parallel.piscinaUsPerCall },
    ]),
    "cpu-batch": barChart(`4. CPU batch of ${cpuBatch.calls} calls`, "ms", [
      { label: "in-process", value: cpuBatch.inProcessMs },
      { label: `worker pool, ${cpuBatch.threads} threads`, value: cpuBatch.workerMs },
    ]),
    responsiveness: barChart("5. Main-thread event-loop delay p99 during the CPU batch", "ms", [
      { label: "in-process", value: responsiveness.inProcess.p99Ms },
      { label: "worker pool", value: responsiveness.worker.p99Ms },
    ]),
    abort: barChart("6. abort() to rejection, and to the next call served", "ms", [
      { label: "in-process, cooperative", value: abort.inProcess.cooperativeRejectMs },
      { label: "pool, cooperative", value: abort.worker.cooperativeRejectMs },
      { label: "pool, spinning", value: abort.worker.spinningRejectMs },
      { label: "pool, next call after spinning", value: abort.worker.spinningNextCallMs },
    ]),
    scaling: logLogChart("7. Scaling: µs for the whole input as N doubles", "N", "µs", lines),
    peers: barChart(
      "8. Peers: µs per no-op call, 1 thread",
      "µs",
      Object.entries(peers.peers).map(([name, figures]) => ({ label: name, value: figures.usPerCall })),
    ),
  };
}

/** bench/report.md: the tables, and each section's chart (charts/<name>.svg beside it). */
export function renderMarkdownReport(results: BenchResults, charts: readonly string[]): string {
  return [
    "# toolgate benchmark report",
    "",
    "Written by `npm run bench` (see docs/benchmarks.md for the method). Charts:",
    "",
    ...charts.map((name) => `![${name}](charts/${name}.svg)`),
    "",
    "```text",
    renderReport(results),
    "```",
    "",
  ].join("\n");
}
