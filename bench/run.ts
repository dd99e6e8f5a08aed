// `npm run bench`: runs every case, prints the tables, writes bench/results.json and
// bench/report.md (with an SVG chart per section in bench/charts/).
// BENCH_SMOKE=1 runs each case once with tiny counts (and writes nothing unless BENCH_OUT is set).
// BENCH_OUT=path writes the JSON there instead. BENCH_CASE=<name> runs that case alone (below).
// A whole run runs each case in a process of its own (this file again, with BENCH_CASE and
// BENCH_CASE_RESULTS): one case's huge objects or pools leave the engine in a state the next
// case's figures would otherwise pay for (docs/benchmarks.md, "One process per case"), and in
// BENCH_PROCESSES of them (odd, default 5; 1 in smoke mode): each row is judged on the median
// process, its processes' values and spread beside it (docs/benchmarks.md, "Verdicts over processes").
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BENCH_CASE_NAMES, type BenchCaseName, isBenchCaseName } from "./case-names.js";
import type { BenchResults, CaseResults } from "./index.js";
import { REPORT_DIR, RESULTS_FILE } from "./paths.js";

const caseName = process.env.BENCH_CASE;
if (caseName !== undefined && !isBenchCaseName(caseName)) {
  // Refused before any case (and every framework the cases import) is loaded.
  process.stderr.write(`BENCH_CASE: no case named ${JSON.stringify(caseName)}; the cases are: ${BENCH_CASE_NAMES.join(", ")}\n`);
  process.exit(2);
}
const { assembleResults, combineProcesses, hasEverySection, mergeCaseResults, runBenchCase, startRun } = await import("./index.js");
const { keepInstructions } = await import("./instructions/merge.js");
const { renderCaseReport, renderCharts, renderMarkdownReport, renderReport } = await import("./report.js");

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

/** Set by a whole run for each case's process: where that process writes its case's results, and nothing else. */
const caseResultsFile = process.env.BENCH_CASE_RESULTS;

/**
 * How many processes each case runs in (issue 43, section 2: one process's ratio can read 0.6
 * or 1.1 for the same build, by where the VM places its threads; the median of several
 * cannot): BENCH_PROCESSES, odd, default 5 (1 in smoke mode).
 */
const processes = ((): number => {
  const text = process.env.BENCH_PROCESSES;
  if (text === undefined) return smoke ? 1 : 5;
  if (!/^[1-9]\d*$/.test(text) || Number(text) % 2 === 0) {
    process.stderr.write(
      `BENCH_PROCESSES must be an odd positive integer: each row is judged on the median process (got ${JSON.stringify(text)})\n`,
    );
    process.exit(2);
  }
  return Number(text);
})();

/** Runs the case `name` in a fresh process running this file; its results, read from the file it wrote in `dir`. */
function runCaseProcess(name: BenchCaseName, dir: string, index: number): CaseResults {
  const file = join(dir, `${name}.${index}.json`);
  const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
    env: { ...process.env, BENCH_CASE: name, BENCH_CASE_RESULTS: file },
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (child.status !== 0) {
    throw new Error(
      `bench: the ${name} case's process failed (${child.error?.message ?? `exit code ${child.status}, signal ${child.signal}`})`,
    );
  }
  const results = JSON.parse(readFileSync(file, "utf8")) as CaseResults;
  if (results.name !== name) throw new Error(`bench: the ${name} case's process wrote the results of ${JSON.stringify(results.name)}`);
  return results;
}

/**
 * Every case of `names`, each in `processes` fresh processes running this file (in turns: every
 * case once, then every case again, so a slow spell of the machine falls on one process of
 * each case rather than on all of one case's), each case's rows judged on the median process
 * (bench/index.ts `combineProcesses`); a process that fails fails the run.
 */
function runCasesOverProcesses(names: readonly BenchCaseName[]): CaseResults[] {
  const dir = mkdtempSync(join(tmpdir(), "toolgate-bench-"));
  try {
    const runs = new Map<BenchCaseName, CaseResults[]>(names.map((name) => [name, []]));
    for (let index = 0; index < processes; index += 1) {
      if (processes > 1) log(`process ${index + 1} of ${processes} of each case`);
      for (const name of names) runs.get(name)?.push(runCaseProcess(name, dir, index));
    }
    return names.map((name) => combineProcesses(runs.get(name) ?? []));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every case over processes, in case order. */
function runEachCaseInItsOwnProcess(): BenchResults {
  const start = startRun(smoke);
  const cases = runCasesOverProcesses(BENCH_CASE_NAMES);
  const caseProcesses = Object.fromEntries(cases.map((result) => [result.name, result.run]));
  return { ...assembleResults(cases, start), caseProcesses, processesPerCase: processes };
}

if (caseName === undefined && caseResultsFile !== undefined) {
  process.stderr.write("BENCH_CASE_RESULTS: set by a whole run for one case's process; it needs BENCH_CASE\n");
  process.exit(2);
}

if (caseName !== undefined && caseResultsFile !== undefined) {
  // One case of a whole run: its results go to the run's process only.
  writeFileSync(caseResultsFile, JSON.stringify(await runBenchCase(caseName, { smoke, log })));
  process.exit(0);
}

if (caseName !== undefined) {
  // One case alone, over processes: its sections and its target rows go into the results file (the rest stays).
  const [results] = runCasesOverProcesses([caseName]) as [CaseResults];
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

const results = runEachCaseInItsOwnProcess();
process.stdout.write(`${renderReport(results)}\n`);
if (out !== undefined) {
  // The instruction counts (`npm run bench:instructions`) are not this command's: the file keeps them.
  const previous = existsSync(out) ? (JSON.parse(readFileSync(out, "utf8")) as Record<string, unknown>) : {};
  writeFileSync(out, `${JSON.stringify(keepInstructions(results as unknown as Record<string, unknown>, previous), null, 2)}\n`);
  process.stdout.write(`\nwrote ${out}\n`);
}
if (!smoke) writeMarkdownReport(results);
