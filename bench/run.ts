// `npm run bench`: runs every case, prints the tables, writes bench/results.json and
// bench/report.md (with an SVG chart per section in bench/charts/).
// BENCH_SMOKE=1 runs each case once with tiny counts (and writes nothing unless BENCH_OUT is set).
// BENCH_OUT=path writes the JSON there instead. BENCH_CASE=<name> runs that case alone (below).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  BENCH_CASE_NAMES,
  type BenchResults,
  hasEverySection,
  isBenchCaseName,
  mergeCaseResults,
  runBenchCase,
  runBenchmarks,
} from "./index.js";
import { REPORT_DIR, RESULTS_FILE } from "./paths.js";
import { renderCaseReport, renderCharts, renderMarkdownReport, renderReport } from "./report.js";

const smoke = process.env.BENCH_SMOKE === "1";
const log = (line: string): void => {
  process.stderr.write(`  … ${line}\n`);
};
const out = process.env.BENCH_OUT ?? (smoke ? undefined : fileURLToPath(RESULTS_FILE));

/** bench/report.md and its charts (bench/charts/*.svg), beside results.json. */
function writeMarkdownReport(results: BenchResults): void {
  const charts = renderCharts(results);
  mkdirSync(new URL("charts/", REPORT_DIR), { recursive: true });
  for (const [name, svg] of Object.entries(charts)) writeFileSync(new URL(`charts/${name}.svg`, REPORT_DIR), `${svg}\n`);
  writeFileSync(new URL("report.md", REPORT_DIR), renderMarkdownReport(results, Object.keys(charts)));
  process.stdout.write(`wrote ${fileURLToPath(REPORT_DIR)}report.md and ${Object.keys(charts).length} charts\n`);
}

const caseName = process.env.BENCH_CASE;
if (caseName !== undefined) {
  // One case alone: its sections and its target rows go into the results file (the rest stays).
  if (!isBenchCaseName(caseName)) {
    process.stderr.write(`BENCH_CASE: no case named ${JSON.stringify(caseName)}; the cases are: ${BENCH_CASE_NAMES.join(", ")}\n`);
    process.exit(2);
  }
  const results = await runBenchCase(caseName, { smoke, log });
  process.stdout.write(`${renderCaseReport(results)}\n`);
  if (out !== undefined) {
    const previous = existsSync(out) ? (JSON.parse(readFileSync(out, "utf8")) as Record<string, unknown>) : {};
    const merged = mergeCaseResults(previous, results);
    writeFileSync(out, `${JSON.stringify(merged, null, 2)}\n`);
    process.stdout.write(`\nwrote the ${caseName} case's sections and target rows into ${out}\n`);
    // The repository's report follows its results file, once that file holds every section.
    if (process.env.BENCH_OUT === undefined && hasEverySection(merged)) writeMarkdownReport(merged);
  }
  process.exit(0);
}

const results = await runBenchmarks({ smoke, log });
process.stdout.write(`${renderReport(results)}\n`);
if (out !== undefined) {
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`\nwrote ${out}\n`);
}
if (!smoke) writeMarkdownReport(results);
