// `npm run bench:instructions`: ours and the peer's instructions per call, with and without
// GC, for each row of bench/instructions/rows.ts, counted by callgrind (docs/benchmarks.md,
// "Instructions"). Writes the `instructions` section and its target rows into
// bench/results.json, leaving every other section and row as it was.
// BENCH_INSTRUCTIONS_ROWS=a,b counts those rows only; BENCH_INSTRUCTIONS_REPEATS=n (default 1)
// counts each side n times over; BENCH_INSTRUCTIONS_JOBS=n runs n valgrind processes at once
// (default 2); BENCH_INSTRUCTIONS_KEEP=dir keeps the dumps there (with node's perf maps copied
// beside them) for `node dist/bench/instructions/where.js dir`, and BENCH_INSTRUCTIONS_FROM=dir
// counts again from such dumps without valgrind (same rows, repeats and calls); BENCH_SMOKE=1 counts a few
// calls of each row once and writes nothing unless BENCH_OUT is set.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { median, now, round, type TargetCheck } from "../harness.js";
import { RESULTS_FILE } from "../paths.js";
import { countSide, keptPids, type PerCall, perCall, readSide, type SideCount, V8_FLAGS, VALGRIND_OPTIONS } from "./count.js";
import { mergeInstructions } from "./merge.js";
import { isRowName, ROW_NAMES, ROWS, type RowName, type SideName } from "./rows.js";

export const INSTRUCTIONS_COMMAND = "npm run bench:instructions";

const smoke = process.env.BENCH_SMOKE === "1";
const rowsWanted = (process.env.BENCH_INSTRUCTIONS_ROWS ?? "").split(",").filter((name) => name.length > 0);
for (const name of rowsWanted) {
  if (!isRowName(name)) {
    process.stderr.write(`BENCH_INSTRUCTIONS_ROWS: no row named ${JSON.stringify(name)}; the rows are: ${ROW_NAMES.join(", ")}\n`);
    process.exit(2);
  }
}
const rows = rowsWanted.length > 0 ? (rowsWanted as RowName[]) : ROW_NAMES;
const positive = (name: string, fallback: number): number => {
  const text = process.env[name];
  if (text === undefined) return fallback;
  if (!/^[1-9]\d*$/.test(text)) {
    process.stderr.write(`${name} must be a positive integer (got ${JSON.stringify(text)})\n`);
    process.exit(2);
  }
  return Number(text);
};
const repeats = smoke ? 1 : positive("BENCH_INSTRUCTIONS_REPEATS", 1);
const jobs = positive("BENCH_INSTRUCTIONS_JOBS", 2);
const keep = process.env.BENCH_INSTRUCTIONS_KEEP;
/** Counts again from the dumps a run kept there (no valgrind): the same rows, repeats and calls as that run. */
const from = process.env.BENCH_INSTRUCTIONS_FROM;
const out = process.env.BENCH_OUT ?? (smoke ? undefined : fileURLToPath(RESULTS_FILE));

/** One row's calls: smoke mode keeps the warm-up short and the windows a few calls apart. */
const callsOf = (row: RowName) => (smoke ? { warmup: 20, short: 2, long: 6 } : ROWS[row]);

/** One side of one row, counted once (or why it could not be). */
type Count = { readonly row: RowName; readonly side: SideName; readonly repeat: number } & (
  | { readonly perCall: PerCall; readonly failure?: undefined }
  | { readonly failure: string }
);

/** Runs `tasks` at most `limit` at a time, in order of start; rejects with the first failure. */
async function pooled<T>(tasks: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < tasks.length) {
      const index = next;
      next += 1;
      results[index] = await (tasks[index] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, lane));
  return results;
}

const dir = keep ?? mkdtempSync(join(tmpdir(), "toolgate-instructions-"));
mkdirSync(dir, { recursive: true });
const started = now();
const startedAt = new Date().toISOString();
const valgrindVersion = execFileSync("valgrind", ["--version"], { encoding: "utf8" }).trim();
process.stderr.write(
  `  … ${rows.length} rows × 2 sides × ${repeats} repeats (one process each) under ${valgrindVersion}, ${jobs} at a time\n`,
);

const tasks: (() => Promise<Count>)[] = [];
for (let repeat = 0; repeat < repeats; repeat += 1) {
  for (const row of rows) {
    for (const side of ["ours", "peer"] as const) {
      tasks.push(async () => {
        const calls = callsOf(row);
        let count: SideCount;
        try {
          if (from === undefined) count = await countSide(dir, row, side, calls.warmup, calls.short, calls.long);
          else {
            const pid = keptPids(from, row, side)[repeat];
            if (pid === undefined) throw new Error(`no kept process of ${row} ${side} for repeat ${repeat + 1} in ${from}`);
            count = readSide(from, row, side, pid, calls.short, calls.long);
          }
        } catch (error) {
          // One side that failed costs its row, not the run: the other rows are recorded, and this one says why it is missing.
          const reason = error instanceof Error ? error.message : String(error);
          process.stderr.write(`  … ${row} ${side}: FAILED, ${reason}\n`);
          return { row, side, repeat, failure: reason };
        }
        if (from === undefined) {
          const map = `/tmp/perf-${count.pid}.map`;
          if (keep !== undefined && existsSync(map)) copyFileSync(map, `${join(dir, `${row}.${side}.${count.pid}`)}.perf.map`);
          rmSync(map, { force: true });
        }
        const figure = perCall(count);
        process.stderr.write(
          `  … ${row} ${side}: ${Math.round(figure.withGc)} instructions per call (GC ${Math.round(figure.gc)}, compilation ${Math.round(figure.compiler)})\n`,
        );
        return { row, side, repeat, perCall: figure };
      });
    }
  }
}

let counts: Count[];
try {
  counts = await pooled(tasks, jobs);
} finally {
  if (keep === undefined) rmSync(dir, { recursive: true, force: true });
}

/** One row's figures in bench/results.json: per call, ours and the peer's, and their ratios. */
export interface InstructionsRow {
  readonly comparedOurs: string;
  readonly comparedPeer: string;
  readonly warmup: number;
  readonly shortCalls: number;
  readonly longCalls: number;
  /** Instructions per call with GC counted (compilation not: its own column), median over repeats. */
  readonly ours: number;
  readonly peer: number;
  /** ours / peer with GC counted: the figure the target judges. */
  readonly ratio: number;
  readonly oursWithoutGc: number;
  readonly peerWithoutGc: number;
  readonly ratioWithoutGc: number;
  readonly oursGc: number;
  readonly peerGc: number;
  readonly oursCompiler: number;
  readonly peerCompiler: number;
  /** Each repeat's ratio (with GC) and ratio without GC, and how far apart they are relative to their median. */
  readonly repeatRatios: number[];
  readonly repeatRatiosWithoutGc: number[];
  readonly repeatSpread: number;
}

const spreadOf = (values: readonly number[]): number => (Math.max(...values) - Math.min(...values)) / median(values);

function rowFigures(row: RowName): InstructionsRow {
  const of = (side: SideName) =>
    counts.flatMap((count) => (count.row === row && count.side === side && count.failure === undefined ? [count.perCall] : []));
  const ours = of("ours");
  const peer = of("peer");
  const pick = (list: PerCall[], key: keyof PerCall) => median(list.map((figure) => figure[key]));
  const ratios = ours.map((figure, index) => figure.withGc / (peer[index] as PerCall).withGc);
  const ratiosWithoutGc = ours.map((figure, index) => figure.withoutGc / (peer[index] as PerCall).withoutGc);
  const calls = callsOf(row);
  return {
    comparedOurs: ROWS[row].ours,
    comparedPeer: ROWS[row].peer,
    warmup: calls.warmup,
    shortCalls: calls.short,
    longCalls: calls.long,
    ours: Math.round(pick(ours, "withGc")),
    peer: Math.round(pick(peer, "withGc")),
    ratio: round(pick(ours, "withGc") / pick(peer, "withGc")),
    oursWithoutGc: Math.round(pick(ours, "withoutGc")),
    peerWithoutGc: Math.round(pick(peer, "withoutGc")),
    ratioWithoutGc: round(pick(ours, "withoutGc") / pick(peer, "withoutGc")),
    oursGc: Math.round(pick(ours, "gc")),
    peerGc: Math.round(pick(peer, "gc")),
    oursCompiler: Math.round(pick(ours, "compiler")),
    peerCompiler: Math.round(pick(peer, "compiler")),
    repeatRatios: ratios.map((ratio) => round(ratio)),
    repeatRatiosWithoutGc: ratiosWithoutGc.map((ratio) => round(ratio)),
    repeatSpread: round(Math.max(spreadOf(ratios), spreadOf(ratiosWithoutGc)), 4),
  };
}

/** Rows with a side that failed: left out of the figures and targets, each with its first failure. */
const failedRows = Object.fromEntries(
  rows.flatMap((row) => {
    const failure = counts.find((count) => count.row === row && count.failure !== undefined)?.failure;
    return failure === undefined ? [] : [[row, failure]];
  }),
) as Partial<Record<RowName, string>>;
const counted = rows.filter((row) => failedRows[row] === undefined);

const figures = Object.fromEntries(counted.map((row) => [row, rowFigures(row)])) as Record<RowName, InstructionsRow>;

const targets: TargetCheck[] = counted.map((row) => {
  const figure = figures[row];
  const max = ROWS[row].max;
  return {
    id: `instructions.${row}`,
    target: `${figure.comparedOurs} / ${figure.comparedPeer} (instructions per call, GC counted) <= ${max}`,
    value: figure.ratio,
    pass: figure.ratio <= max,
    note: `${figure.ours} vs ${figure.peer} instructions per call (GC ${figure.oursGc} vs ${figure.peerGc}); without GC ${figure.ratioWithoutGc}; compilation ${figure.oursCompiler} vs ${figure.peerCompiler} (not counted); repeats ${figure.repeatRatios.join(", ")}; ${INSTRUCTIONS_COMMAND}`,
  };
});

/** The rows by name, a dotted name nested ("serializer.nested120" under `serializer`), as the target ids read. */
const nested: Record<string, unknown> = {};
for (const row of counted) {
  const path = row.split(".");
  let node = nested;
  for (const key of path.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1] as string] = figures[row];
}

const section = {
  command: INSTRUCTIONS_COMMAND,
  mode: smoke ? "smoke" : "full",
  startedAt,
  durationMs: round(now() - started, 0),
  node: process.version,
  valgrind: valgrindVersion,
  valgrindOptions: [...VALGRIND_OPTIONS],
  v8Flags: [...V8_FLAGS],
  repeats,
  // Counted again from a run's kept dumps: `startedAt` and `durationMs` are the recount's, not the run's.
  ...(from === undefined ? {} : { recountedFromKeptDumps: true }),
  ...(Object.keys(failedRows).length > 0 ? { failedRows } : {}),
  ...nested,
  targets,
};

const header = "row                      ours/call  peer/call  ratio  (no GC)  GC ours/peer   compile ours/peer  repeats";
process.stdout.write(`${header}\n`);
for (const row of counted) {
  const figure = figures[row];
  process.stdout.write(
    `${row.padEnd(24)} ${String(figure.ours).padStart(9)}  ${String(figure.peer).padStart(9)}  ${figure.ratio.toFixed(3)}  ${figure.ratioWithoutGc.toFixed(3)}  ` +
      `${`${figure.oursGc}/${figure.peerGc}`.padEnd(13)}  ${`${figure.oursCompiler}/${figure.peerCompiler}`.padEnd(17)}  ${figure.repeatRatios.join(", ")} ${ROWS[row].max >= figure.ratio ? "pass" : `MISS (<= ${ROWS[row].max})`}\n`,
  );
}
for (const [row, failure] of Object.entries(failedRows)) process.stdout.write(`${row.padEnd(24)} FAILED: ${failure}\n`);
process.stdout.write(`${round((now() - started) / 1000, 0)} s\n`);
if (out !== undefined) {
  const previous = existsSync(out) ? (JSON.parse(readFileSync(out, "utf8")) as Record<string, unknown>) : {};
  writeFileSync(out, `${JSON.stringify(mergeInstructions(previous, section), null, 2)}\n`);
  process.stdout.write(`wrote the instructions section and its target rows into ${out}\n`);
}
