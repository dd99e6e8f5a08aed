// `npm run bench`: runs every case, prints the tables, writes bench/results.json and
// bench/report.md (with an SVG chart per section in bench/charts/).
// BENCH_SMOKE=1 runs each case once with tiny counts (and writes nothing unless BENCH_OUT is set).
// BENCH_OUT=path writes the JSON there instead. BENCH_CASE=budgets or BENCH_CASE=queue runs that case alone (below).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { TargetCheck } from "./harness.js";
import { benchBudgets, benchQueue, runBenchmarks } from "./index.js";
import { REPORT_DIR, RESULTS_FILE } from "./paths.js";
import { renderCharts, renderMarkdownReport, renderQueueSection, renderReport } from "./report.js";

const smoke = process.env.BENCH_SMOKE === "1";
const log = (line: string): void => {
  process.stderr.write(`  … ${line}\n`);
};

// BENCH_CASE=budgets runs that case alone and writes its section into the results file
// (the other sections stay as the last full run left them).
if (process.env.BENCH_CASE === "budgets") {
  const budgets = await benchBudgets({ smoke, log });
  for (const [name, figures] of Object.entries(budgets.cases)) {
    process.stdout.write(`${name}: ${figures.oursUs} µs (JSON.stringify ${figures.jsonUs} µs, ${figures.oursOverJson}x)\n`);
  }
  const file = process.env.BENCH_OUT ?? (smoke ? undefined : fileURLToPath(RESULTS_FILE));
  if (file !== undefined) {
    const previous = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>) : {};
    writeFileSync(file, `${JSON.stringify({ ...previous, budgets }, null, 2)}\n`);
    process.stdout.write(`\nwrote the budgets section of ${file}\n`);
  }
  process.exit(0);
} else if (process.env.BENCH_CASE === "queue") {
  // The queue case alone: its section and its target rows go into the results file (the rest stays).
  const queue = await benchQueue({ smoke, log });
  process.stdout.write(`${renderQueueSection(queue)}\n`);
  const file = process.env.BENCH_OUT ?? (smoke ? undefined : fileURLToPath(RESULTS_FILE));
  if (file !== undefined) {
    const previous = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as { targets?: { id: string }[] }) : {};
    const ids = new Set(queue.targets.map((check) => check.id));
    const targets = [...(previous.targets ?? []).filter((check) => !ids.has(check.id) && !check.id.startsWith("queue.")), ...queue.targets];
    const missed = targets.filter((check) => (check as TargetCheck).informational !== true && !(check as TargetCheck).pass);
    const counted = targets.filter((check) => (check as TargetCheck).informational !== true).length;
    const summary = { passed: counted - missed.length, missed: missed.length, missedIds: missed.map((check) => check.id) };
    writeFileSync(file, `${JSON.stringify({ ...previous, queue, targets, summary }, null, 2)}\n`);
    process.stdout.write(`\nwrote the queue section (and its targets) of ${file}\n`);
  }
  process.exit(0);
} else if (process.env.BENCH_CASE !== undefined) {
  process.stderr.write(`BENCH_CASE: only "budgets" and "queue" run alone (got ${JSON.stringify(process.env.BENCH_CASE)})\n`);
  process.exit(2);
}

const results = await runBenchmarks({ smoke, log });
process.stdout.write(`${renderReport(results)}\n`);
const out = process.env.BENCH_OUT ?? (smoke ? undefined : fileURLToPath(RESULTS_FILE));
if (out !== undefined) {
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`\nwrote ${out}\n`);
}
if (!smoke) {
  // bench/report.md and its charts (bench/charts/*.svg), beside results.json.
  const charts = renderCharts(results);
  const dir = fileURLToPath(REPORT_DIR);
  mkdirSync(new URL("charts/", REPORT_DIR), { recursive: true });
  for (const [name, svg] of Object.entries(charts)) writeFileSync(new URL(`charts/${name}.svg`, REPORT_DIR), `${svg}\n`);
  writeFileSync(new URL("report.md", REPORT_DIR), renderMarkdownReport(results, Object.keys(charts)));
  process.stdout.write(`wrote ${dir}report.md and ${Object.keys(charts).length} charts\n`);
}
