// Case 3: a WorkerToolExecutor round trip on a trivial tool against a bare Piscina pool
// running the same trivial function, with the same threads. Sequential (1 thread, one call
// at a time: pure per-call latency) and parallel (all cores, a window of calls in flight).
// A second bare Piscina pool, identical to the first, runs beside them as a control: two
// pools that differ in nothing read apart by several percent in one process on this class of
// machine (each pool's threads keep their own speed), and its ratio says how far.
import { availableParallelism } from "node:os";
import { Piscina } from "piscina";
import type { ToolCall } from "toolgate";
import { WorkerToolExecutor } from "toolgate/worker";
import { type CaseOptions, interleave, median, neverAborted, now, pairedRatios, round, type TargetCheck } from "../harness.js";
import { RAW_WORKER, TOOLS_MODULE } from "../paths.js";

export interface DispatchVariant {
  readonly threads: number;
  readonly inFlight: number;
  readonly callsPerRound: number;
  readonly oursUsPerCall: number;
  readonly piscinaUsPerCall: number;
  readonly oursCallsPerSec: number;
  readonly piscinaCallsPerSec: number;
  /** Time per call, ours / raw Piscina (median of per-round ratios). */
  readonly ratio: number;
  /** CPU time of the whole process (every thread) per call: less sensitive to other load than wall time. */
  readonly oursCpuUsPerCall: number;
  readonly piscinaCpuUsPerCall: number;
  readonly cpuRatio: number;
  /** The control: a second bare Piscina pool, identical to the first, µs per call. */
  readonly controlUsPerCall: number;
  /** Time per call, control / raw Piscina: how far two identical pools read apart in this process. */
  readonly controlRatio: number;
}

export interface WorkerDispatchResult {
  readonly rounds: number;
  readonly sequential: DispatchVariant;
  readonly parallel: DispatchVariant;
  readonly targets: TargetCheck[];
}

const pingCall = (n: number): ToolCall => ({ type: "toolCall", id: `call-${n}`, name: "ping", arguments: { n } });

/**
 * `total` calls through `inFlight` sequential loops; returns µs per call (wall time / total)
 * and pushes CPU µs per call to `cpuUs`, when given (the control's CPU time is not reported).
 */
async function drive(total: number, inFlight: number, cpuUs: number[] | undefined, one: (n: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const loop = async (): Promise<void> => {
    while (next < total) {
      const n = next;
      next += 1;
      await one(n);
    }
  };
  const cpuBefore = process.cpuUsage();
  const start = now();
  await Promise.all(Array.from({ length: inFlight }, loop));
  const elapsed = now() - start;
  const cpu = process.cpuUsage(cpuBefore);
  cpuUs?.push((cpu.user + cpu.system) / total);
  return (elapsed * 1000) / total;
}

async function measure(threads: number, inFlight: number, calls: number, rounds: number, warmupRounds: number): Promise<DispatchVariant> {
  const executor = await WorkerToolExecutor.create({ modules: [TOOLS_MODULE], minThreads: threads, maxThreads: threads });
  const piscina = new Piscina({ filename: RAW_WORKER.href, minThreads: threads, maxThreads: threads });
  const control = new Piscina({ filename: RAW_WORKER.href, minThreads: threads, maxThreads: threads });
  try {
    const signal = neverAborted();
    const first = await executor.executeToolCall(pingCall(7), signal);
    const raw = (await piscina.run({ n: 7 })) as unknown;
    const controlRaw = (await control.run({ n: 7 })) as unknown;
    if (first.isError || first.content !== JSON.stringify(raw) || JSON.stringify(controlRaw) !== JSON.stringify(raw)) {
      throw new Error("dispatch benchmark: the pools disagree");
    }
    const cpu = { ours: [] as number[], piscina: [] as number[] };
    const us = await interleave(
      {
        ours: () => drive(calls, inFlight, cpu.ours, (n) => executor.executeToolCall(pingCall(n), signal)),
        piscina: () => drive(calls, inFlight, cpu.piscina, (n) => piscina.run({ n })),
        control: () => drive(calls, inFlight, undefined, (n) => control.run({ n })),
      },
      rounds,
      warmupRounds,
    );
    // The warm-up rounds' CPU figures are dropped like their times.
    const oursCpu = cpu.ours.slice(warmupRounds);
    const piscinaCpu = cpu.piscina.slice(warmupRounds);
    const oursUs = median(us.ours);
    const piscinaUs = median(us.piscina);
    return {
      threads,
      inFlight,
      callsPerRound: calls,
      oursUsPerCall: round(oursUs, 2),
      piscinaUsPerCall: round(piscinaUs, 2),
      oursCallsPerSec: Math.round(1e6 / oursUs),
      piscinaCallsPerSec: Math.round(1e6 / piscinaUs),
      ratio: round(median(pairedRatios(us.ours, us.piscina))),
      oursCpuUsPerCall: round(median(oursCpu), 2),
      piscinaCpuUsPerCall: round(median(piscinaCpu), 2),
      cpuRatio: round(median(pairedRatios(oursCpu, piscinaCpu))),
      controlUsPerCall: round(median(us.control), 2),
      controlRatio: round(median(pairedRatios(us.control, us.piscina))),
    };
  } finally {
    await executor.close();
    await piscina.close();
    await control.close();
  }
}

export async function benchWorkerDispatch(options: CaseOptions = {}): Promise<WorkerDispatchResult> {
  const smoke = options.smoke === true;
  // Many short rounds: on this class of machine one round's time swings by a quarter either
  // way (the VM's other tenants), and the median of 9 moved by as much as its target's margin.
  const rounds = smoke ? 1 : 31;
  const warmupRounds = smoke ? 0 : 3;
  const cores = availableParallelism();
  options.log?.("worker dispatch: sequential, 1 thread");
  const sequential = await measure(1, 1, smoke ? 20 : 2000, rounds, warmupRounds);
  options.log?.(`worker dispatch: parallel, ${cores} threads`);
  // A window of 4 calls per thread in flight keeps every thread fed.
  const parallel = await measure(cores, 4 * cores, smoke ? 20 : 4000, rounds, warmupRounds);
  // Issue 32's targets: at most 10% over a bare Piscina round trip one call at a time, and
  // ahead of it (<= 0.9) with every core busy and calls in flight.
  const pass = sequential.ratio <= 1.1;
  const parallelPass = parallel.ratio <= 0.9;
  return {
    rounds,
    sequential,
    parallel,
    targets: [
      {
        id: "workerDispatch.sequential.ratio",
        target: "ours/Piscina (time per call, 1 thread) <= 1.1",
        value: sequential.ratio,
        pass,
        ...(pass
          ? {}
          : {
              note: "the contract's main-thread steps (snapshot, validation, dispatch, the linked frozen result) run between two wake-ups of the main thread, where the same steps cost about 4x their hot-loop time (1.1-5.4x): 5-11 µs on a 50-65 µs bare round trip (docs/benchmarks.md, the fifth session)",
            }),
      },
      {
        id: "workerDispatch.parallel.ratio",
        target: `ours/Piscina (time per call, ${cores} threads) <= 0.9: ahead of bare Piscina`,
        value: parallel.ratio,
        pass: parallelPass,
        ...(parallelPass
          ? {}
          : {
              note: "the main thread is the bottleneck: 0.89-0.97 of the calls wait behind a running one, and a pool thread that shares the main thread's CPU slows it (pinned there: 0.84-1.12, against 0.59-0.80 placed freely; docs/benchmarks.md, the fifth and sixth sessions)",
            }),
      },
      controlTarget("sequential", "1 thread", sequential),
      controlTarget("parallel", `${cores} threads`, parallel),
    ],
  };
}

/** The control's row: informational, it has no target of its own. */
function controlTarget(name: "sequential" | "parallel", threads: string, variant: DispatchVariant): TargetCheck {
  return {
    id: `workerDispatch.${name}.controlRatio`,
    target: `a second bare Piscina pool / the first (time per call, ${threads}; informational: how far two identical pools read apart in this process)`,
    value: variant.controlRatio,
    pass: true,
    informational: true,
  };
}
