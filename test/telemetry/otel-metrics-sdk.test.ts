// docs/operations.md — Metrics, read the way an operator reads them: through the real
// @opentelemetry/sdk-metrics (a MeterProvider and a MetricReader, installed in the SDK project of
// test/support/otel-sdk.ts), registered with our API's metrics.setGlobalMeterProvider. What the
// SDK aggregates must be what the calls did: counts by tool and outcome, durations in the
// histogram's advised buckets, and a pool's threads as gauges.
import { createRequire } from "node:module";
import { join } from "node:path";
import { metrics } from "@opentelemetry/api";
import { InProcessToolExecutor, ToolRegistry } from "toolgate";
import { WorkerToolExecutor } from "toolgate/worker";
import { afterEach, beforeAll, describe, expect, test } from "vitest";
import { call, errorOf, fixture, neverAborted } from "../support/helpers.js";
import { otelSdkDir } from "../support/otel-sdk.js";

/** A data point as the SDK's reader gives it (the fields read here). */
interface DataPoint {
  readonly attributes: Record<string, unknown>;
  readonly value: number | { count: number; sum: number; buckets: { boundaries: number[]; counts: number[] } };
}
interface Collected {
  readonly descriptor: { name: string; unit: string };
  readonly dataPoints: DataPoint[];
}
interface Reader {
  collect(): Promise<{ resourceMetrics: { scopeMetrics: { scope: { name: string }; metrics: Collected[] }[] }; errors: unknown[] }>;
}

let sdk: { MeterProvider: new (options: object) => { shutdown(): Promise<void> }; MetricReader: new () => Reader };
beforeAll(() => {
  const require = createRequire(join(otelSdkDir(), "package.json"));
  sdk = require("@opentelemetry/sdk-metrics");
}, 300_000);

let shutdown: (() => Promise<void>) | undefined;
afterEach(async () => {
  metrics.disable();
  await shutdown?.();
  shutdown = undefined;
});

/** A MeterProvider of the real SDK with a reader the test collects from, registered globally. */
function registerSdk(): Reader {
  class TestReader extends (sdk.MetricReader as unknown as new () => Reader & object) {
    protected onForceFlush(): Promise<void> {
      return Promise.resolve();
    }
    protected onShutdown(): Promise<void> {
      return Promise.resolve();
    }
  }
  const reader = new TestReader();
  const provider = new sdk.MeterProvider({ readers: [reader] });
  expect(metrics.setGlobalMeterProvider(provider as never)).toBe(true);
  shutdown = () => provider.shutdown();
  return reader;
}

async function collect(reader: Reader): Promise<Map<string, Collected>> {
  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).toEqual([]);
  const scope = resourceMetrics.scopeMetrics.find((entry) => entry.scope.name === "toolgate");
  expect(scope, "toolgate's meter").toBeDefined();
  return new Map((scope?.metrics ?? []).map((metric) => [metric.descriptor.name, metric]));
}

const pointOf = (metric: Collected | undefined, attributes: Record<string, unknown>): DataPoint | undefined =>
  metric?.dataPoints.find((point) => JSON.stringify(sortedOf(point.attributes)) === JSON.stringify(sortedOf(attributes)));
const sortedOf = (attributes: Record<string, unknown>) => Object.entries(attributes).sort(([a], [b]) => a.localeCompare(b));

const accept = (a: unknown) => ({ ok: true as const, value: a });

describe("docs/operations.md — Metrics, through the real OpenTelemetry metrics SDK", () => {
  test("in-process: the SDK sums calls by tool and outcome and puts durations in the advised buckets, in seconds", async () => {
    const reader = registerSdk();
    const executor = new InProcessToolExecutor(
      new ToolRegistry([
        { name: "add", description: "Adds.", validate: accept, execute: (a) => (a as { l: number }).l + 1 },
        {
          name: "fail",
          description: "Throws.",
          validate: accept,
          execute: () => {
            throw new Error("broken");
          },
        },
      ]),
    );
    for (const id of ["a1", "a2", "a3"])
      expect((await executor.executeToolCall(call("add", { l: 1 }, id), neverAborted())).isError).toBe(false);
    expect(errorOf(await executor.executeToolCall(call("fail", {}, "f1"), neverAborted())).code).toBe("TOOL_EXECUTION_FAILED");
    const collected = await collect(reader);
    const calls = collected.get("toolgate.calls");
    expect(calls?.descriptor.unit).toBe("{call}");
    expect(pointOf(calls, { "gen_ai.tool.name": "add", "toolgate.outcome": "success" })?.value).toBe(3);
    expect(pointOf(calls, { "gen_ai.tool.name": "fail", "toolgate.outcome": "error", "error.type": "TOOL_EXECUTION_FAILED" })?.value).toBe(
      1,
    );
    expect(calls?.dataPoints).toHaveLength(2);
    const duration = collected.get("toolgate.call.duration");
    expect(duration?.descriptor.unit).toBe("s");
    const added = pointOf(duration, { "gen_ai.tool.name": "add", "toolgate.outcome": "success" })?.value;
    expect(added).toMatchObject({ count: 3, buckets: { boundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] } });
    // Seconds: three trivial calls sum to far less than one second (milliseconds would not).
    expect(typeof added === "object" && added.sum).toBeLessThan(1);
  });

  test("a worker pool: its threads as gauges, and a thread killed at a time limit counted", async () => {
    const reader = registerSdk();
    const executor = await WorkerToolExecutor.create({
      modules: [fixture("worker-tools")],
      minThreads: 2,
      maxThreads: 2,
      abortGraceMs: 50,
    });
    try {
      const spun = await executor.executeToolCall(call("spin", {}, "s1"), neverAborted(), { timeoutMs: 100 });
      expect(errorOf(spun).code).toBe("TOOL_EXECUTION_TIMEOUT");
      let kills: DataPoint | undefined;
      for (let tries = 0; tries < 200 && kills === undefined; tries += 1) {
        kills = (await collect(reader)).get("toolgate.thread.kills")?.dataPoints[0];
        if (kills === undefined) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(kills?.value).toBe(1);
      // The killed thread is replaced (minThreads 2; a pool may hold one more while the killed one
      // exits): the gauges read the pool as it is when collected, its live threads and none busy.
      const settled = (gauges: readonly unknown[]) => gauges[0] === executor.threadCount && gauges[1] === 0;
      let gauges: unknown[] = [];
      for (let tries = 0; tries < 200 && !settled(gauges); tries += 1) {
        const collected = await collect(reader);
        gauges = [collected.get("toolgate.threads")?.dataPoints[0]?.value, collected.get("toolgate.threads.busy")?.dataPoints[0]?.value];
        if (!settled(gauges)) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(gauges).toEqual([executor.threadCount, 0]);
      expect(executor.threadCount).toBeGreaterThanOrEqual(2);
    } finally {
      await executor.close();
    }
  }, 30_000);
});
