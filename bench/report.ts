// The results as Markdown tables: readable in a terminal, pasteable into a README.
import type { BenchResults } from "./index.js";

const fmt = (value: number, digits = 2): string =>
  Number.isFinite(value) ? value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: 0 }) : String(value);

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? "").length)));
  const line = (cells: readonly string[]) => `| ${cells.map((cell, column) => cell.padEnd(widths[column] as number)).join(" | ")} |`;
  return [line(header), `|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`, ...rows.map(line)].join("\n");
}

export function renderReport(results: BenchResults): string {
  const { serializer, inProcess, workerDispatch, cpuBatch, responsiveness, abort, queue, machine } = results;
  const out: string[] = [];
  out.push(
    `toolgate benchmarks (${results.mode}) — Node ${machine.node}, ${machine.platform}/${machine.arch}, ${machine.availableParallelism} cores (${machine.cpuModel}), ${fmt(results.durationMs / 1000, 1)} s, load average ${machine.loadAverageStart} -> ${machine.loadAverageEnd}`,
    "Medians of interleaved rounds; ratios are medians of per-round ratios. Absolute times vary by machine; ratios hold.",
    "",
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
    "",
    `2. In-process call overhead (trivial tool), ${inProcess.rounds} rounds`,
    table(
      ["path", "µs/call"],
      [
        ["executeToolCall", fmt(inProcess.oursUsPerCall, 3)],
        ["naive (validate, await execute, JSON.stringify)", fmt(inProcess.naiveUsPerCall, 3)],
        ["ratio ours/naive", `${fmt(inProcess.ratio)}x`],
      ],
    ),
    "",
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
        ];
      }),
    ),
    "",
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
      ],
    ),
    "",
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
    "",
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
    "",
    queue.ran
      ? `7. Through Redis (BullMQ): toolgate-worker hosts (1 thread each) vs raw BullMQ workers (concurrency 1), ${queue.rounds} rounds\n${table(
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
        )}`
      : `7. Through Redis (BullMQ): not run (${queue.reason})`,
    "",
    `Targets: ${results.summary.passed} pass, ${results.summary.missed} miss (info rows are context, not counted)`,
    table(
      ["id", "target", "value", "verdict", "note"],
      results.targets.map((check) => [
        check.id,
        check.target,
        fmt(check.value, 3),
        check.informational === true ? "info" : check.pass ? "PASS" : "MISS",
        check.note ?? "",
      ]),
    ),
  );
  return out.join("\n");
}
