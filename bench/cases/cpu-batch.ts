// Cases 4 and 5: a batch of CPU-bound calls (~20 ms each) in-process (executeToolCalls) vs
// the worker pool (one thread per core), and the main thread's event-loop delay meanwhile.
// A bare Piscina pool of the same threads runs the same batch beside them: the speedup the
// machine gives at all, so a miss can be told apart from toolgate's overhead.
import { availableParallelism } from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Piscina } from "piscina";
import { executeToolCalls, type ToolCall, ToolRegistry } from "toolgate";
import { WorkerToolExecutor } from "toolgate/worker";
import { type CaseOptions, interleave, median, neverAborted, now, pairedRatios, round, sleep, type TargetCheck } from "../harness.js";
import { PEER_POOL_WORKER, TOOLS_MODULE } from "../paths.js";
import type { PeerTask } from "../peers/task.js";
import tools, { burn } from "../tools.js";

/** Event-loop delay over the measured rounds: p50 and p99 are medians of the per-round values, max is the overall max. */
export interface LoopDelay {
  readonly samples: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export interface CpuBatchResult {
  readonly rounds: number;
  readonly threads: number;
  readonly calls: number;
  /** Iterations of the burn tool, calibrated on the main thread to `targetToolMs`. */
  readonly iterations: number;
  readonly targetToolMs: number;
  /** Measured: in-process batch time / calls. */
  readonly toolMs: number;
  readonly inProcessMs: number;
  readonly workerMs: number;
  readonly inProcessCallsPerSec: number;
  readonly workerCallsPerSec: number;
  /** In-process time / worker time (median of per-round ratios). */
  readonly speedup: number;
  /** The same batch on a bare Piscina pool of the same threads, the same window in flight. */
  readonly piscinaMs: number;
  /** In-process time / bare Piscina time (median of per-round ratios): what the machine gives. */
  readonly piscinaSpeedup: number;
  /** Worker pool time / bare Piscina time (median of per-round ratios). */
  readonly oursVsPiscina: number;
  /**
   * CPU time the process got per wall-clock time during each batch (all threads), median:
   * ~1 in-process; up to `threads` (+ the main thread's share) for the pool. When it stays
   * well below `threads`, other load on the machine held the pool back, not toolgate.
   */
  readonly inProcessCoresUsed: number;
  readonly workerCoresUsed: number;
  readonly targetSpeedup: number;
  readonly targets: TargetCheck[];
}

export interface ResponsivenessResult {
  /** monitorEventLoopDelay resolution (ms): every sample includes this interval. */
  readonly resolutionMs: number;
  readonly inProcess: LoopDelay;
  readonly worker: LoopDelay;
  readonly targets: TargetCheck[];
}

/** Finds the iteration count for which `burn` takes about `ms` on this thread. */
function calibrate(ms: number): number {
  let iterations = 200_000;
  for (let attempt = 0; attempt < 6; attempt += 1) {
    const times: number[] = [];
    for (let run = 0; run < 3; run += 1) {
      const start = now();
      burn(iterations);
      times.push(now() - start);
    }
    const measured = Math.max(median(times), 0.05);
    const next = Math.max(1000, Math.round((iterations * ms) / measured));
    if (Math.abs(next - iterations) / iterations < 0.05) return next;
    iterations = next;
  }
  return iterations;
}

interface Window {
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

const delayOf = (windows: readonly Window[]): LoopDelay => ({
  samples: windows.reduce((sum, window) => sum + window.count, 0),
  p50Ms: round(median(windows.map((window) => window.p50)) / 1e6, 2),
  p99Ms: round(median(windows.map((window) => window.p99)) / 1e6, 2),
  maxMs: round(Math.max(...windows.map((window) => window.max)) / 1e6, 2),
});

export async function benchCpuBatch(
  options: CaseOptions = {},
): Promise<{ cpuBatch: CpuBatchResult; responsiveness: ResponsivenessResult }> {
  const smoke = options.smoke === true;
  const threads = availableParallelism();
  const targetToolMs = smoke ? 1 : 20;
  const calls = smoke ? 2 * threads : 12 * threads;
  const rounds = smoke ? 1 : 5;
  const warmupRounds = smoke ? 0 : 1;
  const resolutionMs = 1;
  burn(smoke ? 1_000_000 : 20_000_000); // warms the JIT before calibrating
  const iterations = calibrate(targetToolMs);
  const batch: ToolCall[] = Array.from({ length: calls }, (_, n) => ({
    type: "toolCall",
    id: `cpu-${n}`,
    name: "burn",
    arguments: { iterations },
  }));
  const registry = new ToolRegistry(tools);
  const executor = await WorkerToolExecutor.create({ modules: [TOOLS_MODULE], minThreads: threads, maxThreads: threads });
  const piscina = new Piscina({ filename: PEER_POOL_WORKER.href, minThreads: threads, maxThreads: threads });
  // One fresh histogram per measured round: a re-enabled histogram would record the whole
  // gap since it was disabled (the other executor's round) as one sample.
  const delays = { inProcess: [] as Window[], worker: [] as Window[] };
  const expected = JSON.stringify({ checksum: burn(iterations) });
  const cores = { inProcess: [] as number[], worker: [] as number[] };
  const timed = async (
    windows: Window[] | undefined,
    coresUsed: number[] | undefined,
    run: () => Promise<readonly { content: string; isError: boolean }[]>,
  ): Promise<number> => {
    const histogram = windows === undefined ? undefined : monitorEventLoopDelay({ resolution: resolutionMs });
    histogram?.enable();
    await sleep(2 * resolutionMs + 1); // the histogram records intervals between its ticks: let it tick first
    const cpuBefore = process.cpuUsage();
    const start = now();
    const results = await run();
    const elapsed = now() - start;
    const cpu = process.cpuUsage(cpuBefore);
    coresUsed?.push((cpu.user + cpu.system) / 1000 / elapsed);
    await sleep(2 * resolutionMs + 1); // lets the histogram's timer record the stall that just ended
    if (histogram !== undefined) {
      histogram.disable();
      windows?.push({ count: histogram.count, p50: histogram.percentile(50), p99: histogram.percentile(99), max: histogram.max });
    }
    if (results.length !== calls || results.some((result) => result.isError || result.content !== expected)) {
      throw new Error("CPU batch benchmark: a call did not return the expected checksum");
    }
    return elapsed;
  };
  try {
    options.log?.(`CPU batch: ${calls} calls x ~${targetToolMs} ms, in-process vs ${threads} worker threads`);
    const signal = neverAborted();
    const inProcessBatch = () => executeToolCalls(registry, batch, signal);
    // The executor queues beyond maxThreads itself; a window of 2 per thread keeps every thread fed.
    const workerBatch = () => executor.executeBatch(batch, signal, { concurrency: 2 * threads });
    const burnTask: PeerTask = { kind: "burn", iterations };
    const piscinaBatch = async () => {
      const results: { content: string; isError: boolean }[] = [];
      let next = 0;
      const loop = async (): Promise<void> => {
        while (next < calls) {
          const index = next;
          next += 1;
          results[index] = { content: JSON.stringify(await piscina.run(burnTask)), isError: false };
        }
      };
      await Promise.all(Array.from({ length: 2 * threads }, loop));
      return results;
    };
    for (let index = 0; index < warmupRounds; index += 1) {
      await timed(undefined, undefined, inProcessBatch); // JIT on the main thread
      await timed(undefined, undefined, workerBatch); // JIT in every thread
      await timed(undefined, undefined, piscinaBatch);
    }
    const ms = await interleave(
      {
        inProcess: () => timed(delays.inProcess, cores.inProcess, inProcessBatch),
        worker: () => timed(delays.worker, cores.worker, workerBatch),
        piscina: () => timed(undefined, undefined, piscinaBatch),
      },
      rounds,
      0,
    );
    const inProcessMs = ms.inProcess;
    const workerMs = ms.worker;
    return summarize();

    function summarize(): { cpuBatch: CpuBatchResult; responsiveness: ResponsivenessResult } {
      const speedups = pairedRatios(inProcessMs, workerMs);
      const speedup = median(speedups);
      const piscinaSpeedup = median(pairedRatios(inProcessMs, ms.piscina));
      const oursVsPiscina = median(pairedRatios(workerMs, ms.piscina));
      // Issue 43, section 2: judged against what bare Piscina's pool of the same threads gets from
      // this machine on the same batch in the same rounds (the VM's thread placement moves both
      // alike), not against a core count a loaded 2-vCPU machine rarely gives (issue 10's 0.95 x cores
      // stays beside it, informational).
      const vsPiscinaSpeedups = pairedRatios(ms.piscina, workerMs);
      const speedupVsPiscina = median(vsPiscinaSpeedups);
      const coresTarget = round2(0.95 * threads);
      const targetSpeedup = round2(0.97 * piscinaSpeedup);
      const inProcessMedian = median(inProcessMs);
      const workerMedian = median(workerMs);
      const toolMs = inProcessMedian / calls;
      const inProcess = delayOf(delays.inProcess);
      const worker = delayOf(delays.worker);
      // speedup / piscinaSpeedup, paired per round: ours against Piscina's batch time of the same round.
      const speedupPass = speedupVsPiscina >= 0.97;
      const workerCoresUsed = median(cores.worker);
      const inProcessCoresUsed = median(cores.inProcess);
      const starved = workerCoresUsed < 0.85 * threads;
      const workerPass = worker.p99Ms < 2;
      const blockedPass = inProcess.p99Ms >= toolMs;
      return {
        cpuBatch: {
          rounds,
          threads,
          calls,
          iterations,
          targetToolMs,
          toolMs: round2(toolMs),
          inProcessMs: round2(inProcessMedian),
          workerMs: round2(workerMedian),
          inProcessCallsPerSec: round2((calls * 1000) / inProcessMedian),
          workerCallsPerSec: round2((calls * 1000) / workerMedian),
          speedup: round(speedup),
          piscinaMs: round2(median(ms.piscina)),
          piscinaSpeedup: round(piscinaSpeedup),
          oursVsPiscina: round(oursVsPiscina),
          inProcessCoresUsed: round2(inProcessCoresUsed),
          workerCoresUsed: round2(workerCoresUsed),
          targetSpeedup,
          targets: [
            {
              id: "cpuBatch.speedup",
              target: `worker/in-process throughput >= 0.97 x bare Piscina's own on the same batch (${round(piscinaSpeedup)} here: ${targetSpeedup}); per round, Piscina's batch time / ours >= 0.97 (here ${round(speedupVsPiscina)})`,
              value: round(speedup),
              min: round(Math.min(...speedups)),
              pass: speedupPass,
              ...(speedupPass
                ? {}
                : {
                    note: starved
                      ? `the pool got only ${round2(workerCoresUsed)} cores of CPU time (other load on the machine): rerun on an idle machine`
                      : `the pool got ${round2(workerCoresUsed)} cores of CPU time and bare Piscina reached ${round(piscinaSpeedup)}x; ours/Piscina batch time ${round(oursVsPiscina)}`,
                  }),
            },
            {
              id: "cpuBatch.speedupVsCores",
              target: `worker/in-process throughput >= 0.95 x ${threads} cores = ${coresTarget} (informational since issue 43: what the machine gives is cpuBatch.piscinaSpeedup)`,
              value: round(speedup),
              pass: true,
              informational: true,
              ...(speedup >= coresTarget
                ? {}
                : { note: `below ${coresTarget}: bare Piscina reached ${round(piscinaSpeedup)}x in the same rounds` }),
            },
            {
              id: "cpuBatch.piscinaSpeedup",
              target: `bare Piscina (${threads} threads, the same batch)/in-process throughput (informational: what the machine gives)`,
              value: round(piscinaSpeedup),
              pass: true,
              informational: true,
              note: `toolgate's pool: ${round(oursVsPiscina)}x bare Piscina's batch time`,
            },
          ],
        },
        responsiveness: {
          resolutionMs,
          inProcess,
          worker,
          targets: [
            {
              id: "responsiveness.worker.p99Ms",
              target: "worker pool: main-thread event-loop delay p99 < 2 ms",
              value: worker.p99Ms,
              pass: workerPass,
              ...(workerPass ? {} : { note: "the main thread waited for a core while every core ran a tool thread" }),
            },
            {
              id: "responsiveness.inProcess.p99Ms",
              target: `in-process: p99 >= one tool call (${round2(toolMs)} ms): the loop is blocked`,
              value: inProcess.p99Ms,
              pass: blockedPass,
              note: "executeToolCalls starts every synchronous tool in one macrotask, so the stall is the whole batch, not one call",
            },
          ],
        },
      };
    }
  } finally {
    await executor.close();
    await piscina.close();
  }
}

const round2 = (value: number): number => round(value, 2);
