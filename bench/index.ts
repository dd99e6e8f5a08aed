// toolgate's benchmarks as a library: `runBenchmarks()` runs every case and returns the
// figures that `npm run bench` prints and writes to bench/results.json. Every case also
// runs on its own, and takes `{ smoke: true }` (one round, tiny counts) for CI.
import { availableParallelism, cpus, totalmem } from "node:os";
import { BENCH_CASE_NAMES, type BenchCaseName, isBenchCaseName } from "./case-names.js";
import { type AbortResult, benchAbort } from "./cases/abort.js";
import { type BudgetsResult, benchBudgets } from "./cases/budgets.js";
import { benchCpuBatch, type CpuBatchResult, type ResponsivenessResult } from "./cases/cpu-batch.js";
import { benchInProcess, type InProcessResult } from "./cases/in-process.js";
import { benchPeers, type PeersResult } from "./cases/peers.js";
import { benchQueue, type QueueResult } from "./cases/queue.js";
import { benchScaling, type ScalingResult } from "./cases/scaling.js";
import { benchSerializer, type SerializerResult } from "./cases/serializer.js";
import { benchVersus, type VersusFigure, type VersusResult } from "./cases/versus.js";
import { benchWorkerDispatch, type WorkerDispatchResult } from "./cases/worker-dispatch.js";
import { type CaseOptions, loadAverage, now, round, type Summary, summarize, type TargetCheck } from "./harness.js";

export type { CaseOptions, Summary, TargetCheck } from "./harness.js";
export type {
  AbortResult,
  BudgetsResult,
  CpuBatchResult,
  InProcessResult,
  PeersResult,
  QueueResult,
  ResponsivenessResult,
  ScalingResult,
  SerializerResult,
  VersusFigure,
  VersusResult,
  WorkerDispatchResult,
};
export {
  BENCH_CASE_NAMES,
  type BenchCaseName,
  benchAbort,
  benchBudgets,
  benchCpuBatch,
  benchInProcess,
  benchPeers,
  benchQueue,
  benchScaling,
  benchSerializer,
  benchVersus,
  benchWorkerDispatch,
  isBenchCaseName,
};

export const RESULTS_SCHEMA = "toolgate-bench/1";

export interface BenchResults {
  readonly schema: typeof RESULTS_SCHEMA;
  readonly mode: "full" | "smoke";
  readonly startedAt: string;
  readonly durationMs: number;
  readonly machine: {
    readonly node: string;
    readonly platform: string;
    readonly arch: string;
    readonly cpuModel: string;
    readonly availableParallelism: number;
    readonly totalMemoryMb: number;
    /** 1-minute load average when the run started and ended: other load skews parallel figures. */
    readonly loadAverageStart: number;
    readonly loadAverageEnd: number;
  };
  readonly serializer: SerializerResult;
  readonly inProcess: InProcessResult;
  readonly workerDispatch: WorkerDispatchResult;
  readonly cpuBatch: CpuBatchResult;
  readonly responsiveness: ResponsivenessResult;
  readonly abort: AbortResult;
  readonly scaling: ScalingResult;
  readonly peers: PeersResult;
  /** Through Redis (BullMQ): only when Redis answers at REDIS_URL. */
  readonly queue: QueueResult;
  /** The worst admitted input of each default budget, beside JSON.stringify (informational: no targets). */
  readonly budgets: BudgetsResult;
  /** Versus what a user would pick instead: each framework's own tool, a bare Piscina behind it. */
  readonly versus: VersusResult;
  /** Every case's targets, in case order. */
  readonly targets: TargetCheck[];
  /** Passes and misses of the targets that are not informational. */
  readonly summary: Summary;
  /** `npm run bench`: each case's run, by name; each ran in a process of its own (`runBenchmarks` runs them all in its caller's). */
  readonly caseProcesses?: Record<string, CaseRun>;
  /** `npm run bench`: how many processes each case ran in (BENCH_PROCESSES); its rows are judged on the median process. */
  readonly processesPerCase?: number;
  /** The cases run alone (BENCH_CASE) since the last full run, by name: their sections are newer than `startedAt`. */
  readonly caseRuns?: Record<string, CaseRun>;
}

/** When and where a case ran alone (BENCH_CASE=name). */
export interface CaseRun {
  readonly startedAt: string;
  readonly durationMs: number;
  readonly node: string;
  /** The process the case ran in (over processes: the one whose sections the results keep). */
  readonly pid: number;
  /** Over processes: every process the case ran in, in order (their target rows are judged on the median). */
  readonly pids?: number[];
  readonly loadAverageStart: number;
  readonly loadAverageEnd: number;
}

/**
 * Runs every case in this process, in case order, and assembles the results. (`npm run bench`
 * runs each case in a process of its own instead, bench/run.ts: what one case leaves in the
 * engine, such as property accesses made megamorphic by another case's huge objects, is then
 * never charged to the next.)
 */
export async function runBenchmarks(options: CaseOptions = {}): Promise<BenchResults> {
  const start = startRun(options.smoke === true);
  const cases: CaseResults[] = [];
  for (const name of BENCH_CASE_NAMES) cases.push(await runBenchCase(name, options));
  return assembleResults(cases, start);
}

/** When a run started: `started` from the harness clock, `startedAt` from the wall clock, and the load then. */
export interface RunStart {
  readonly smoke: boolean;
  readonly started: number;
  readonly startedAt: string;
  readonly loadAverageStart: number;
}

export const startRun = (smoke: boolean): RunStart => ({
  smoke,
  started: now(),
  startedAt: new Date().toISOString(),
  loadAverageStart: loadAverage(),
});

/**
 * A whole run's results from every case's (run in this process or each in its own): the
 * sections, every target row in section order, and the summary.
 */
export function assembleResults(cases: readonly CaseResults[], start: RunStart): BenchResults {
  const sections: Partial<Sections> = {};
  for (const result of cases) Object.assign(sections, result.sections);
  const missing = SECTION_ORDER.filter((name) => sections[name] === undefined);
  if (missing.length > 0) throw new Error(`bench: no results for ${missing.join(", ")}`);
  // Rows at a floor are informational however the case ran (in its caller's process, or over processes).
  const complete = Object.fromEntries(
    SECTION_ORDER.map((name) => [name, { ...sections[name], targets: (sections[name] as Sections[SectionName]).targets.map(atFloor) }]),
  ) as unknown as Sections;
  const targets = SECTION_ORDER.flatMap((name) => complete[name].targets);
  return {
    schema: RESULTS_SCHEMA,
    mode: start.smoke ? "smoke" : "full",
    startedAt: start.startedAt,
    durationMs: round(now() - start.started, 0),
    machine: {
      node: process.version,
      platform: process.platform,
      arch: process.arch,
      cpuModel: cpus()[0]?.model.trim() ?? "unknown",
      availableParallelism: availableParallelism(),
      totalMemoryMb: Math.round(totalmem() / 2 ** 20),
      loadAverageStart: start.loadAverageStart,
      loadAverageEnd: loadAverage(),
    },
    ...complete,
    targets,
    summary: summarize(targets),
  };
}

/** The sections of the results that hold a case's figures (each with its `targets`). */
export type Sections = Pick<
  BenchResults,
  | "serializer"
  | "inProcess"
  | "workerDispatch"
  | "cpuBatch"
  | "responsiveness"
  | "abort"
  | "scaling"
  | "peers"
  | "queue"
  | "budgets"
  | "versus"
>;
export type SectionName = keyof Sections;

/** The sections in case order (cpuBatch also writes responsiveness): a target's section is its id up to the first dot. */
export const SECTION_ORDER: readonly SectionName[] = BENCH_CASE_NAMES.flatMap((name): SectionName[] =>
  name === "cpuBatch" ? ["cpuBatch", "responsiveness"] : [name],
);

/** Every case by the name BENCH_CASE takes (bench/case-names.ts), returning the sections it writes (cpuBatch writes two). */
export const BENCH_CASES: { readonly [K in BenchCaseName]: (options: CaseOptions) => Promise<Partial<Sections>> } = {
  serializer: async (options: CaseOptions) => ({ serializer: await benchSerializer(options) }),
  inProcess: async (options: CaseOptions) => ({ inProcess: await benchInProcess(options) }),
  workerDispatch: async (options: CaseOptions) => ({ workerDispatch: await benchWorkerDispatch(options) }),
  cpuBatch: (options: CaseOptions) => benchCpuBatch(options),
  abort: async (options: CaseOptions) => ({ abort: await benchAbort(options) }),
  scaling: async (options: CaseOptions) => ({ scaling: await benchScaling(options) }),
  peers: async (options: CaseOptions) => ({ peers: await benchPeers(options) }),
  queue: async (options: CaseOptions) => ({ queue: await benchQueue(options) }),
  budgets: async (options: CaseOptions) => ({ budgets: await benchBudgets(options) }),
  versus: async (options: CaseOptions) => ({ versus: await benchVersus(options) }),
};

/** What running one case alone produced: its sections, and when and where it ran. */
export interface CaseResults {
  readonly name: BenchCaseName;
  readonly sections: Partial<Sections>;
  readonly run: CaseRun;
}

/** Runs the case `name` alone (BENCH_CASE=name). */
export async function runBenchCase(name: BenchCaseName, options: CaseOptions = {}): Promise<CaseResults> {
  const { started, startedAt, loadAverageStart } = startRun(options.smoke === true);
  const sections: Partial<Sections> = await BENCH_CASES[name](options);
  return {
    name,
    sections,
    run: {
      startedAt,
      durationMs: round(now() - started, 0),
      node: process.version,
      pid: process.pid,
      loadAverageStart,
      loadAverageEnd: loadAverage(),
    },
  };
}

const sectionOf = (id: string): number => {
  const index = SECTION_ORDER.indexOf(id.slice(0, id.indexOf(".")) as SectionName);
  return index === -1 ? SECTION_ORDER.length : index;
};

/**
 * The results file after a case ran alone: its sections replace the previous ones, and so do
 * its target rows (every previous row of those sections goes, the rest stays, in section
 * order); the summary is counted again and the run is recorded in `caseRuns`.
 * `previous` is whatever the file held (an empty object when there was none).
 */
export function mergeCaseResults(previous: Record<string, unknown>, results: CaseResults): Record<string, unknown> {
  const written = Object.keys(results.sections);
  const kept = (Array.isArray(previous.targets) ? (previous.targets as TargetCheck[]) : []).filter(
    (check) => !written.includes(check.id.slice(0, check.id.indexOf("."))),
  );
  const fresh = Object.values(results.sections).flatMap((section) => section.targets);
  const targets = [...kept, ...fresh]
    .map((check, index) => ({ check, index }))
    .sort((a, b) => sectionOf(a.check.id) - sectionOf(b.check.id) || a.index - b.index)
    .map(({ check }) => check);
  const caseRuns = typeof previous.caseRuns === "object" && previous.caseRuns !== null ? previous.caseRuns : {};
  return {
    ...previous,
    ...results.sections,
    targets,
    summary: summarize(targets),
    caseRuns: { ...caseRuns, [results.name]: results.run },
  };
}

/** True when `value` holds every section (a full run's file, or one that cases alone have filled): the report can render it. */
export const hasEverySection = (value: Record<string, unknown>): value is Record<string, unknown> & BenchResults =>
  SECTION_ORDER.every((name) => typeof value[name] === "object" && value[name] !== null);

/**
 * Rows shown to be at a floor of this machine or of the contract (issue 43, section 2):
 * reported, not judged. Each note gives the floor and where its evidence is.
 */
export const FLOOR_ROWS: Readonly<Record<string, string>> = {
  "workerDispatch.sequential.ratio":
    "at a floor (informational): 1.19-1.23x bare Piscina even with every thread pinned to one vCPU, the contract's own CPU work on both threads; its instruction count is instructions.workerDispatch (docs/benchmarks.md, Instructions)",
  "versus.piStep":
    "at a floor (informational): Pi's own tool runs no contract; the adapter's pipeline and argument pre-check are the instructions over it (instructions.piStep, docs/benchmarks.md, Where the instructions go)",
  "versus.mcpCallWorker":
    "at a floor (informational): the pool round trip's floor (workerDispatch.sequential) under one MCP call; see instructions.workerDispatch",
  "versus.aiSdkStepWorker":
    "at a floor (informational): the pool round trip's floor (workerDispatch.sequential) under one AI SDK step; see instructions.workerDispatch",
};

/**
 * A row at a floor made informational (a figure for context has no bar to miss: it passes),
 * its floor first in the note; a row already made so is returned as it is.
 */
function atFloor(check: TargetCheck): TargetCheck {
  const floor = FLOOR_ROWS[check.id];
  if (floor === undefined || check.note?.startsWith(floor) === true) return check;
  return { ...check, informational: true, pass: true, note: check.note === undefined ? floor : `${floor}; ${check.note}` };
}

/**
 * One case's results over several processes (each ran the case alone, with its interleaved
 * rounds): every target row's value is the median of the processes' values (an odd count,
 * so the median is one process's value and its verdict is that process's), with
 * `processes`, each process's value and the spread beside it; rows at a floor become
 * informational. The sections' detail figures are those of the middle process of the case's
 * first row (the row that names the case's headline figure).
 */
export function combineProcesses(runs: readonly CaseResults[]): CaseResults {
  const first = runs[0];
  if (first === undefined || runs.length % 2 === 0)
    throw new Error(`bench: a case is judged over an odd number of processes (got ${runs.length})`);
  const rowsOf = (run: CaseResults): TargetCheck[] => Object.values(run.sections).flatMap((section) => section.targets);
  const middleOf = (id: string): { run: CaseResults; check: TargetCheck; values: number[] } => {
    const found = runs.map((run) => ({ run, check: rowsOf(run).find((check) => check.id === id) }));
    const missing = found.filter((entry) => entry.check === undefined);
    if (missing.length > 0) throw new Error(`bench: the ${first.name} case's row ${id} is missing from ${missing.length} of its processes`);
    const complete = found as { run: CaseResults; check: TargetCheck }[];
    const sorted = [...complete].sort((a, b) => a.check.value - b.check.value);
    const middle = sorted[sorted.length >> 1] as (typeof sorted)[number];
    return { ...middle, values: complete.map((entry) => entry.check.value) };
  };
  const ids = rowsOf(first).map((check) => check.id);
  for (const run of runs) {
    const missing = ids.filter((id) => !rowsOf(run).some((check) => check.id === id));
    const extra = rowsOf(run).filter((check) => !ids.includes(check.id));
    if (missing.length > 0 || extra.length > 0) {
      throw new Error(
        `bench: the ${first.name} case's processes disagree on its rows (${[...missing, ...extra.map((check) => check.id)].join(", ")})`,
      );
    }
  }
  const headline = rowsOf(first)[0];
  const kept = headline === undefined ? first : middleOf(headline.id).run;
  const sections: Partial<Sections> = {};
  for (const [name, section] of Object.entries(kept.sections) as [SectionName, Sections[SectionName]][]) {
    const targets = section.targets.map((check): TargetCheck => {
      const { check: middle, values } = middleOf(check.id);
      const mins = runs.map((run) => rowsOf(run).find((row) => row.id === check.id)?.min);
      const lowest = mins.every((min) => min !== undefined) ? Math.min(...(mins as number[])) : undefined;
      return atFloor({
        ...middle,
        ...(lowest === undefined ? {} : { min: lowest }),
        processes: runs.length,
        processValues: values,
        spread: round(Math.max(...values) - Math.min(...values)),
      });
    });
    Object.assign(sections, { [name]: { ...section, targets } });
  }
  return { name: first.name, sections, run: { ...kept.run, pids: runs.map((run) => run.run.pid) } };
}
