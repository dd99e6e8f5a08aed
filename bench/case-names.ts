// The names BENCH_CASE takes, in a module of their own: bench/run.ts refuses an unknown name
// before it loads any case (and every framework the cases import).

export const BENCH_CASE_NAMES = [
  "serializer",
  "inProcess",
  "workerDispatch",
  "cpuBatch",
  "abort",
  "scaling",
  "peers",
  "queue",
  "budgets",
  "versus",
] as const;

export type BenchCaseName = (typeof BENCH_CASE_NAMES)[number];

export const isBenchCaseName = (name: string): name is BenchCaseName => (BENCH_CASE_NAMES as readonly string[]).includes(name);
