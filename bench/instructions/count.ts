// Counts one side of one row under callgrind: one process, the row's warm-up, then two
// windows of different lengths (`short` and `long` calls, each between markers); the
// instructions per call are the difference of the windows over the difference of their calls,
// so what a window costs whatever its length (the markers, the loop's last turn) cancels.
// (Both windows follow the same warm-up but for the short window's calls, a few percent of it.)
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Dump, parseDump, type Split, splitDump } from "./callgrind.js";
import { MARKER_FUNCTION } from "./marker.js";
import type { RowName, SideName } from "./rows.js";

/**
 * V8 on the main thread (issue 43's second rule): optimizing compilation and on-stack
 * replacement run inside the call that triggers them, so they fall at the same call in every
 * run; GC has no background tasks and a schedule that does not read the clock; hashes and Math.random are seeded; JIT code ranges are
 * written to /tmp/perf-<pid>.map so a dump's JIT addresses can be named.
 */
export const V8_FLAGS = [
  "--no-concurrent-recompilation",
  "--no-concurrent-osr",
  "--single-threaded-gc",
  // GC decisions by rule, not by measured time (heap growing, idle and memory-reducing GCs):
  // without it, how fast a loaded machine ran a process moved a major GC into a window.
  "--predictable-gc-schedule",
  // subject.ts collects the heap fully before each window, outside it.
  "--expose-gc",
  "--hash-seed=1",
  "--random-seed=1",
  "--perf-basic-prof-only-functions",
] as const;

/** Valgrind's options: callgrind, a dump when the marker is entered, JIT code retranslated when V8 rewrites it. */
export const VALGRIND_OPTIONS = [
  "--tool=callgrind",
  `--dump-before=${MARKER_FUNCTION}`,
  "--smc-check=all-non-file",
  // Costs by instruction address, so JIT code can be named from node's perf map (bench/instructions/where.ts).
  "--dump-instr=yes",
  "--dump-line=no",
] as const;

const SUBJECT = fileURLToPath(new URL("./subject.js", import.meta.url));

/** One counted window of a process. */
export interface Window {
  readonly calls: number;
  readonly file: string;
  readonly dump: Dump;
  readonly split: Split;
}

/** Both windows of one process, its pid (node's perf map is /tmp/perf-<pid>.map). */
export interface SideCount {
  readonly pid: number;
  readonly short: Window;
  readonly long: Window;
}

/** Runs `row`'s `side` under callgrind (dumps in `dir`): `warmup` calls, then the two windows. */
export function countSide(dir: string, row: RowName, side: SideName, warmup: number, short: number, long: number): Promise<SideCount> {
  const prefix = `${row}.${side}`;
  const args = [
    ...VALGRIND_OPTIONS,
    `--callgrind-out-file=${join(dir, `${prefix}.%p`)}`,
    process.execPath,
    ...V8_FLAGS,
    SUBJECT,
    row,
    side,
    String(warmup),
    String(short),
    String(long),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn("valgrind", args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0 || child.pid === undefined) {
        reject(new Error(`instructions: ${prefix} under valgrind exited with ${code}:\n${stderr}`));
        return;
      }
      try {
        resolve(readSide(dir, row, side, child.pid, short, long));
      } catch (error) {
        reject(error);
      }
    });
  });
}

/** The windows of a side's finished process, from its dumps in `dir` (just written, or kept by BENCH_INSTRUCTIONS_KEEP). */
export function readSide(dir: string, row: RowName, side: SideName, pid: number, short: number, long: number): SideCount {
  const base = `${row}.${side}.${pid}`;
  checkMarkerDumps(dir, base);
  return { pid, short: readWindow(join(dir, `${base}.${SHORT_DUMP}`), short), long: readWindow(join(dir, `${base}.${LONG_DUMP}`), long) };
}

/** The pids of the processes whose dumps of `row`'s `side` are kept in `dir`, in the order they ran (by the first dump's time). */
export function keptPids(dir: string, row: RowName, side: SideName): number[] {
  const pattern = new RegExp(`^${row.replace(".", "\\.")}\\.${side}\\.(\\d+)\\.1$`);
  return readdirSync(dir)
    .flatMap((name) => {
      const match = pattern.exec(name);
      return match === null ? [] : [{ pid: Number(match[1]), time: statSync(join(dir, name)).mtimeMs }];
    })
    .sort((a, b) => a.time - b.time)
    .map((entry) => entry.pid);
}

/** The dumps that hold the windows (bench/instructions/subject.ts): 1 is start-up and warm-up, 3 the GC between the windows. */
export const SHORT_DUMP = 2;
export const LONG_DUMP = 4;
const DUMPS = 4;

/**
 * The process must have dumped at the marker exactly four times (start-up and warm-up, the
 * short window, the full GC between the windows, the long window), so a marker entered by
 * anything else fails the count instead of skewing it.
 */
function checkMarkerDumps(dir: string, base: string): void {
  const parts = readdirSync(dir).filter((name) => /^\d+$/.test(name.slice(base.length + 1)) && name.startsWith(`${base}.`));
  if (parts.length !== DUMPS) {
    throw new Error(`instructions: ${base} dumped ${parts.length} times at the marker, not ${DUMPS} (${parts.join(", ")})`);
  }
}

function readWindow(file: string, calls: number): Window {
  const dump = parseDump(readFileSync(file, "utf8"));
  if (!dump.trigger.includes(MARKER_FUNCTION)) throw new Error(`instructions: ${file} was not dumped at the marker (${dump.trigger})`);
  return { calls, file, dump, split: splitDump(dump) };
}

/** Instructions per call of one side: the two windows' difference over their difference in calls. */
export interface PerCall {
  /** Everything but compilation: the calls' own work and GC. */
  readonly withGc: number;
  readonly withoutGc: number;
  readonly gc: number;
  readonly compiler: number;
}

export function perCall(count: SideCount): PerCall {
  const { short, long } = count;
  const calls = long.calls - short.calls;
  const of = (pick: (split: Split) => number): number => (pick(long.split) - pick(short.split)) / calls;
  const run = of((split) => split.run);
  const gc = of((split) => split.gc);
  return { withGc: run + gc, withoutGc: run, gc, compiler: of((split) => split.compiler) };
}
