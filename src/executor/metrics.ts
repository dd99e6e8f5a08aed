// The figures a host serves as Prometheus text (queue/host-metrics.ts), as OpenTelemetry metrics
// of every executor, through the global API's meter provider: calls by tool and outcome, their
// duration, threads killed; and on worker pools, threads total and busy, and threads that could
// not boot. The API has no proxy meter provider (unlike the tracer's): a meter taken before an
// SDK is registered stays a no-op. So the provider is looked at again at every call and
// instruments are made for each new one; while it is the API's no-op provider, a call costs
// that look and nothing else. The SDK, its readers and exporters are operator code: whatever
// they throw stays here, and never changes a call.
// docs/operations.md — Metrics.
import { ToolErrorCode } from "../contract/constants.js";
import {
  ObjectFreeze,
  SetPrototypeAdd,
  SetPrototypeDelete,
  SetPrototypeGetSize,
  SetPrototypeHas,
  setValueStepper,
} from "../contract/primordials.js";
import type { CallEndOutcome } from "./hooks.js";
import type { OtelAttributes, OtelCounter, OtelHistogram, OtelMeter, OtelMeterProvider, OtelObservableResult } from "./otel-api.js";
import { otelApi } from "./otel-api.js";

/** The instrumentation scope of toolgate's metrics (as of its spans). */
export const METER_NAME = "toolgate";

/** Bucket upper bounds of the duration histogram, in seconds: the host's Prometheus histogram's. */
const DURATION_BUCKETS: readonly number[] = ObjectFreeze([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]);
/** Distinct tool names recorded per provider, at most; the rest (and every unknown tool's call) as `_OTHER`. */
const MAX_TOOLS = 1024;
/** The conventions' value for a name of no known tool. */
const OTHER_TOOL = "_OTHER";

/** What a worker pool tells the thread gauges when they are read. */
export interface PoolFigures {
  /** Threads the pool holds (loading, serving, or winding down). */
  threads(): number;
  /** Threads running a task of a call. */
  busyThreads(): number;
}

/** The live pools of the process: the gauges are their sums. */
const pools = new Set<PoolFigures>();

/** The instruments of one meter provider. */
export class ToolMeters {
  readonly #calls: OtelCounter;
  readonly #duration: OtelHistogram;
  readonly #kills: OtelCounter;
  readonly #bootFailures: OtelCounter;
  /** The tool names recorded so far (bounded: a model may name any tool). */
  readonly #tools = new Set<string>();

  constructor(meter: OtelMeter) {
    this.#calls = meter.createCounter("toolgate.calls", { description: "Tool calls ended, by tool and outcome.", unit: "{call}" });
    this.#duration = meter.createHistogram("toolgate.call.duration", {
      description: "Time from a call's start to its end, by tool and outcome.",
      unit: "s",
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
    this.#kills = meter.createCounter("toolgate.thread.kills", {
      description: "Threads terminated under or after a call (a timeout or abort ignored, a crash).",
      unit: "{thread}",
    });
    this.#bootFailures = meter.createCounter("toolgate.thread.boot_failures", {
      description: "Worker threads that exited, or were ended, before they had loaded the tool modules.",
      unit: "{thread}",
    });
    meter
      .createObservableGauge("toolgate.threads", { description: "Worker threads of the process's pools.", unit: "{thread}" })
      .addCallback((result) => observePools(result, false));
    meter
      .createObservableGauge("toolgate.threads.busy", { description: "Worker threads running a call's task now.", unit: "{thread}" })
      .addCallback((result) => observePools(result, true));
  }

  /** One call ended (CallTrace): counted, and its duration recorded. */
  callEnded(toolName: string, outcome: CallEndOutcome, code: string | undefined, durationMs: number): void {
    const tool = this.#toolLabel(toolName, code);
    // One attributes object per instrument: an SDK may keep the one it was given.
    const counted: OtelAttributes =
      code === undefined
        ? { "gen_ai.tool.name": tool, "toolgate.outcome": outcome }
        : { "gen_ai.tool.name": tool, "toolgate.outcome": outcome, "error.type": code };
    try {
      this.#duration.record(durationMs / 1000, { "gen_ai.tool.name": tool, "toolgate.outcome": outcome });
      this.#calls.add(1, counted);
    } catch {
      // the SDK's fault: the call is not changed by it
    }
  }

  /** A thread running a call was terminated (before or after the call settled). */
  threadKilled(): void {
    add(this.#kills);
  }

  /** A pool's thread could not boot. */
  threadBootFailed(): void {
    add(this.#bootFailures);
  }

  #toolLabel(name: string, code: string | undefined): string {
    if (code === ToolErrorCode.NOT_FOUND) return OTHER_TOOL;
    if (SetPrototypeHas(this.#tools, name)) return name;
    if (SetPrototypeGetSize(this.#tools) >= MAX_TOOLS) return OTHER_TOOL;
    SetPrototypeAdd(this.#tools, name);
    return name;
  }
}

function add(counter: OtelCounter): void {
  try {
    counter.add(1);
  } catch {
    // the SDK's fault
  }
}

function observePools(result: OtelObservableResult, busy: boolean): void {
  let sum = 0;
  const next = setValueStepper(pools);
  for (let step = next(); step.done !== true; step = next()) sum += busy ? step.value.busyThreads() : step.value.threads();
  result.observe(sum);
}

/** The instruments of the provider last seen (undefined: the API's no-op one). */
let metersOf: { provider: OtelMeterProvider; meters: ToolMeters | undefined } | undefined;

/**
 * The instruments of the global meter provider, or undefined while it is the API's no-op one
 * (or the API is absent, has no metrics, or its provider threw): asked at every call.
 */
export function toolMeters(): ToolMeters | undefined {
  const api = otelApi();
  const metrics = api?.metrics;
  if (metrics === undefined) return undefined;
  try {
    const provider = metrics.getMeterProvider();
    if (metersOf !== undefined && metersOf.provider === provider) return metersOf.meters;
    const meter = provider.getMeter(METER_NAME);
    const meters = typeof api?.createNoopMeter === "function" && meter === api.createNoopMeter() ? undefined : new ToolMeters(meter);
    metersOf = { provider, meters };
    return meters;
  } catch {
    return undefined;
  }
}

/**
 * Counts `pool` in the thread gauges until the returned function is called (its close); makes the
 * instruments now when an SDK is registered, so the gauges are there before the first call.
 */
export function watchPoolThreads(pool: PoolFigures): () => void {
  SetPrototypeAdd(pools, pool);
  toolMeters();
  return () => {
    SetPrototypeDelete(pools, pool);
  };
}

/** A pool's thread exited before it had loaded the tool modules. */
export function recordBootFailure(): void {
  toolMeters()?.threadBootFailed();
}
