// Measurement helpers shared by the cases: interleaved rounds, tinybench micro rounds,
// medians, and the options every case takes.
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { Bench, type FnReturnedObject } from "tinybench";

/** Options every case takes. `smoke` runs each case once with tiny counts (for CI). */
export interface CaseOptions {
  readonly smoke?: boolean;
  /** Called with a short line while a case runs (the CLI prints them; tests pass nothing). */
  readonly log?: (line: string) => void;
}

/** One figure with its target: the pass/miss verdict travels with the number. */
export interface TargetCheck {
  /** Stable id, e.g. "serializer.flat100.oursVsSss". */
  readonly id: string;
  /** The target, in words ("ours/sss >= 1.0"). */
  readonly target: string;
  readonly value: number;
  /** The lowest per-round figure behind `value` (the median), where a case has rounds. */
  readonly min?: number;
  readonly pass: boolean;
  /** Why a target was missed, or a note on how to read it. */
  readonly note?: string;
  /** A figure shown for context: not counted in the summary's passes and misses. */
  readonly informational?: boolean;
  /**
   * When the row is judged over processes (`npm run bench`: each case in BENCH_PROCESSES
   * processes of its own): how many, each process's value in the order they ran, and the
   * spread (highest less lowest). `value` is then their median, and `pass` that process's verdict.
   */
  readonly processes?: number;
  readonly processValues?: number[];
  readonly spread?: number;
}

/** Passes and misses of the targets that are not informational. */
export interface Summary {
  readonly passed: number;
  readonly missed: number;
  readonly missedIds: string[];
}

export function summarize(targets: readonly TargetCheck[]): Summary {
  const counted = targets.filter((check) => check.informational !== true);
  const missed = counted.filter((check) => !check.pass);
  return { passed: counted.length - missed.length, missed: missed.length, missedIds: missed.map((check) => check.id) };
}

export const now = (): number => performance.now();

/** The machine's one-minute load average, as the results record it (two decimals). */
export const loadAverage = (): number => round(loadavg()[0] ?? 0, 2);

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Rounds to `digits` significant-ish decimals for the JSON (keeps the file readable). */
export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** digits;
  const rounded = Math.round(value * factor) / factor;
  return rounded === 0 ? 0 : rounded; // never -0: JSON writes it as 0, so the file would not round-trip
}

/** The order of `names` rotated by `round`, so no variant always runs first. */
export function rotate<T>(items: readonly T[], by: number): T[] {
  const shift = by % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}

/**
 * Runs every variant once per round, in rotated order, `rounds` times after `warmupRounds`
 * discarded rounds. Each variant returns its own figure for the round (e.g. µs per call).
 */
export async function interleave<K extends string>(
  variants: Record<K, () => Promise<number>>,
  rounds: number,
  warmupRounds: number,
): Promise<Record<K, number[]>> {
  const names = Object.keys(variants) as K[];
  const figures = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  for (let index = 0; index < warmupRounds + rounds; index += 1) {
    for (const name of rotate(names, index)) {
      const figure = await variants[name]();
      if (index >= warmupRounds) figures[name].push(figure);
    }
  }
  return figures;
}

/** Per-round ratios a[i] / b[i] (rounds are paired: both ran in the same round). */
export const pairedRatios = (a: readonly number[], b: readonly number[]): number[] => a.map((value, index) => value / (b[index] as number));

export interface MicroOptions {
  readonly rounds: number;
  /** tinybench `time` per task and round, ms. */
  readonly time: number;
  readonly warmupTime: number;
  /** Operations per sample: a sample is the mean of `inner` back-to-back calls (beats timer grain). */
  readonly inner: number;
}

/**
 * Micro benchmark with tinybench: each round is one Bench whose tasks are added in rotated
 * order (tinybench runs them one after another), each sample timing `inner` calls.
 * Returns, per task, the median ns per operation of every round.
 */
export function microRounds<K extends string>(tasks: Record<K, () => unknown>, options: MicroOptions): Promise<Record<K, number[]>> {
  return runRounds(tasks, options, false, (fn, inner) => {
    let sink: unknown;
    return (): FnReturnedObject => {
      const start = performance.now();
      for (let call = 0; call < inner; call += 1) sink = fn();
      const elapsed = performance.now() - start;
      if (sink === Symbol.for("never")) throw new Error("unreachable"); // keeps `sink` alive
      return { overriddenDuration: elapsed / inner, overriddenIterationCost: elapsed };
    };
  });
}

/** Same as `microRounds`, for async operations run sequentially (`await` each call). */
export function microRoundsAsync<K extends string>(
  tasks: Record<K, () => Promise<unknown>>,
  options: MicroOptions,
): Promise<Record<K, number[]>> {
  return runRounds(tasks, options, true, (fn, inner) => async (): Promise<FnReturnedObject> => {
    const start = performance.now();
    for (let call = 0; call < inner; call += 1) await fn();
    const elapsed = performance.now() - start;
    return { overriddenDuration: elapsed / inner, overriddenIterationCost: elapsed };
  });
}

/** The rounds shared by both: `sample` turns a task into one tinybench sample of `inner` calls. */
async function runRounds<K extends string, F>(
  tasks: Record<K, F>,
  options: MicroOptions,
  async: boolean,
  sample: (fn: F, inner: number) => () => FnReturnedObject | Promise<FnReturnedObject>,
): Promise<Record<K, number[]>> {
  const names = Object.keys(tasks) as K[];
  const figures = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  for (let index = 0; index < options.rounds; index += 1) {
    const bench = new Bench({ time: options.time, warmupTime: options.warmupTime, iterations: 8, warmupIterations: 4 });
    for (const name of rotate(names, index)) {
      bench.add(name, sample(tasks[name], options.inner), { async });
    }
    await bench.run();
    for (const task of bench.tasks) {
      const result = task.result;
      if (result.state !== "completed") throw new Error(`tinybench task ${task.name} ended as ${result.state}`);
      figures[task.name as K].push(result.latency.p50 * 1e6); // ms → ns per operation
    }
  }
  return figures;
}

/** Resolves after `ms` (a real timer: lets the event loop turn). */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A signal that never aborts, with the listener-count warning off (benchmarks keep many calls in flight). */
export function neverAborted(): AbortSignal {
  return new AbortController().signal;
}
