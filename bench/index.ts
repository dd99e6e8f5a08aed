// toolgate's benchmarks as a library: `runBenchmarks()` runs every case and returns the
// figures that `npm run bench` prints and writes to bench/results.json. Every case also
// runs on its own, and takes `{ smoke: true }` (one round, tiny counts) for CI.
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";
import { type AbortResult, benchAbort } from "./cases/abort.js";
import { type BudgetsResult, benchBudgets } from "./cases/budgets.js";
import { benchCpuBatch, type CpuBatchResult, type ResponsivenessResult } from "./cases/cpu-batch.js";
import { benchInProcess, type InProcessResult } from "./cases/in-process.js";
import { benchPeers, type PeersResult } from "./cases/peers.js";
import { benchQueue, type QueueResult } from "./cases/queue.js";
import { benchScaling, type ScalingResult } from "./cases/scaling.js";
import { benchSerializer, type SerializerResult } from "./cases/serializer.js";
import { benchWorkerDispatch, type WorkerDispatchResult } from "./cases/worker-dispatch.js";
import { type CaseOptions, now, round, type TargetCheck } from "./harness.js";

export type { CaseOptions, TargetCheck } from "./harness.js";
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
  WorkerDispatchResult,
};
export {
  benchAbort,
  benchBudgets,
  benchCpuBatch,
  benchInProcess,
  benchPeers,
  benchQueue,
  benchScaling,
  benchSerializer,
  benchWorkerDispatch,
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
  /** Every case's targets, in case order. */
  readonly targets: TargetCheck[];
  /** Passes and misses of the targets that are not informational. */
  readonly summary: { readonly passed: number; readonly missed: number; readonly missedIds: string[] };
}

export async function runBenchmarks(options: CaseOptions = {}): Promise<BenchResults> {
  const started = now();
  const loadAverageStart = round(loadavg()[0] ?? 0, 2);
  const startedAt = new Date().toISOString();
  const serializer = await benchSerializer(options);
  const inProcess = await benchInProcess(options);
  const workerDispatch = await benchWorkerDispatch(options);
  const { cpuBatch, responsiveness } = await benchCpuBatch(options);
  const abort = await benchAbort(options);
  const scaling = await benchScaling(options);
  const peers = await benchPeers(options);
  const queue = await benchQueue(options);
  const budgets = await benchBudgets(options);
  const targets = [serializer, inProcess, workerDispatch, cpuBatch, responsiveness, abort, scaling, peers, queue].flatMap(
    (result) => result.targets,
  );
  const counted = targets.filter((check) => check.informational !== true);
  const missed = counted.filter((check) => !check.pass);
  return {
    schema: RESULTS_SCHEMA,
    mode: options.smoke === true ? "smoke" : "full",
    startedAt,
    durationMs: round(now() - started, 0),
    machine: {
      node: process.version,
      platform: process.platform,
      arch: process.arch,
      cpuModel: cpus()[0]?.model.trim() ?? "unknown",
      availableParallelism: availableParallelism(),
      totalMemoryMb: Math.round(totalmem() / 2 ** 20),
      loadAverageStart,
      loadAverageEnd: round(loadavg()[0] ?? 0, 2),
    },
    serializer,
    inProcess,
    workerDispatch,
    cpuBatch,
    responsiveness,
    abort,
    scaling,
    peers,
    queue,
    budgets,
    targets,
    summary: { passed: counted.length - missed.length, missed: missed.length, missedIds: missed.map((check) => check.id) },
  };
}
