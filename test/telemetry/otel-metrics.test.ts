// docs/operations.md — Metrics: every executor records its calls (by tool and outcome), their
// duration, and thread kills through the global OpenTelemetry meter provider; a worker pool its
// threads (total and busy, observable gauges) and the threads that could not boot. Against a
// meter provider written here and registered with the API's own metrics.setGlobalMeterProvider:
// it keeps every measurement (each one, not an aggregate; the real SDK's aggregates are
// otel-metrics-sdk.test.ts's).
import { join } from "node:path";
import { metrics } from "@opentelemetry/api";
import { InProcessToolExecutor, ToolRegistry, type ToolResultMessage } from "toolgate";
import { WorkerToolExecutor } from "toolgate/worker";
import { afterEach, describe, expect, test } from "vitest";
import { bootFailuresLeft, setBootFailures } from "../fixtures/support/boot-gate.js";
import { call, errorOf, fixture, neverAborted, scratchDir } from "../support/helpers.js";

type Attributes = Record<string, string | number | boolean>;

interface Instrument {
  readonly kind: "counter" | "histogram" | "gauge";
  readonly options: { description?: string; unit?: string; advice?: { explicitBucketBoundaries?: number[] } };
  readonly values: { value: number; attributes: Attributes }[];
  readonly callbacks: ((result: { observe(value: number, attributes?: Attributes): void }) => void)[];
}

/** A meter provider that keeps every measurement, per instrument name; `throwing` makes every record throw. */
class RecordingMeterProvider {
  readonly instruments = new Map<string, Instrument>();
  readonly scopes: string[] = [];
  throwing = false;

  getMeter(name: string): object {
    this.scopes.push(name);
    const make = (kind: Instrument["kind"]) => (instrument: string, options: Instrument["options"]) => {
      expect(this.instruments.has(instrument), `${instrument} made twice`).toBe(false);
      const made: Instrument = { kind, options, values: [], callbacks: [] };
      this.instruments.set(instrument, made);
      const record = (value: number, attributes: Attributes = {}): void => {
        if (this.throwing) throw new Error("the SDK failed");
        made.values.push({ value, attributes: { ...attributes } });
      };
      return { add: record, record, addCallback: (callback: Instrument["callbacks"][number]) => made.callbacks.push(callback) };
    };
    return { createCounter: make("counter"), createHistogram: make("histogram"), createObservableGauge: make("gauge") };
  }

  instrument(name: string): Instrument {
    const found = this.instruments.get(name);
    expect(found, name).toBeDefined();
    return found as Instrument;
  }

  /** The sum of a counter's adds (or a histogram's count) whose attributes are exactly `attributes`. */
  total(name: string, attributes: Attributes = {}): number {
    const instrument = this.instrument(name);
    const matching = instrument.values.filter((entry) => JSON.stringify(sorted(entry.attributes)) === JSON.stringify(sorted(attributes)));
    return instrument.kind === "histogram" ? matching.length : matching.reduce((sum, entry) => sum + entry.value, 0);
  }

  /** A gauge read now, as a reader collects it (its callbacks run). */
  observe(name: string): number[] {
    const observed: number[] = [];
    for (const callback of this.instrument(name).callbacks) callback({ observe: (value) => observed.push(value) });
    return observed;
  }
}

const sorted = (attributes: Attributes): [string, unknown][] => Object.entries(attributes).sort(([a], [b]) => a.localeCompare(b));

function register(): RecordingMeterProvider {
  const provider = new RecordingMeterProvider();
  expect(metrics.setGlobalMeterProvider(provider as never)).toBe(true);
  return provider;
}

afterEach(() => metrics.disable());

/** Polls `read` until it gives `expected` (a kill, a boot failure: told after the call settled), or gives up after `ms`. */
async function eventually(read: () => number, expected: number, ms = 10_000): Promise<number> {
  const deadline = Date.now() + ms;
  while (read() !== expected && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  return read();
}

const accept = (a: unknown) => ({ ok: true as const, value: a });

function registry(): ToolRegistry {
  return new ToolRegistry([
    { name: "add", description: "Adds.", validate: accept, execute: (a) => (a as { l: number }).l + 1 },
    {
      name: "fail",
      description: "Throws.",
      validate: accept,
      execute: () => {
        throw new Error("broken");
      },
    },
    {
      name: "hang",
      description: "Waits for its signal.",
      validate: accept,
      execute: (_a, { signal }) => new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
    },
  ]);
}

describe("OpenTelemetry metrics through the global meter provider", () => {
  test("in-process: calls by tool and outcome (error.type on errors, unknown tools as _OTHER) and their durations in seconds", async () => {
    const provider = register();
    const executor = new InProcessToolExecutor(registry());
    const started = performance.now();
    expect((await executor.executeToolCall(call("add", { l: 1 }, "a1"), neverAborted())).isError).toBe(false);
    expect((await executor.executeToolCall(call("add", { l: 2 }, "a2"), neverAborted())).isError).toBe(false);
    expect(errorOf(await executor.executeToolCall(call("fail", {}, "f1"), neverAborted())).code).toBe("TOOL_EXECUTION_FAILED");
    const late = await executor.executeToolCall(call("hang", {}, "h1"), neverAborted(), { timeoutMs: 50 });
    expect(errorOf(late).code).toBe("TOOL_EXECUTION_TIMEOUT");
    expect(errorOf(await executor.executeToolCall(call("nope", {}, "n1"), neverAborted())).code).toBe("TOOL_NOT_FOUND");
    const controller = new AbortController();
    const aborted = executor.executeToolCall(call("hang", {}, "h2"), controller.signal);
    controller.abort(new Error("stop"));
    await expect(aborted).rejects.toThrow("stop");
    const elapsedSeconds = (performance.now() - started) / 1000;

    expect(provider.scopes).toEqual(["toolgate"]); // one meter, made at the first call
    const calls = provider.instrument("toolgate.calls");
    expect(calls).toMatchObject({ kind: "counter", options: { unit: "{call}" } });
    expect(calls.values).toHaveLength(6);
    const tool = "gen_ai.tool.name";
    const outcome = "toolgate.outcome";
    expect(provider.total("toolgate.calls", { [tool]: "add", [outcome]: "success" })).toBe(2);
    expect(provider.total("toolgate.calls", { [tool]: "fail", [outcome]: "error", "error.type": "TOOL_EXECUTION_FAILED" })).toBe(1);
    expect(provider.total("toolgate.calls", { [tool]: "hang", [outcome]: "error", "error.type": "TOOL_EXECUTION_TIMEOUT" })).toBe(1);
    expect(provider.total("toolgate.calls", { [tool]: "_OTHER", [outcome]: "error", "error.type": "TOOL_NOT_FOUND" })).toBe(1);
    expect(provider.total("toolgate.calls", { [tool]: "hang", [outcome]: "aborted" })).toBe(1);

    const duration = provider.instrument("toolgate.call.duration");
    expect(duration.options).toMatchObject({
      unit: "s",
      advice: { explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] },
    });
    expect(provider.total("toolgate.call.duration", { [tool]: "add", [outcome]: "success" })).toBe(2);
    expect(provider.total("toolgate.call.duration", { [tool]: "hang", [outcome]: "error" })).toBe(1);
    const timedOut = duration.values.find((entry) => entry.attributes[tool] === "hang" && entry.attributes[outcome] === "error");
    // Seconds, not milliseconds: at least the 50 ms limit, at most the whole test so far.
    expect(timedOut?.value).toBeGreaterThanOrEqual(0.045);
    expect(timedOut?.value).toBeLessThanOrEqual(elapsedSeconds);
    expect(provider.total("toolgate.thread.kills")).toBe(0);
  });

  test("a provider registered after the executor was made is used from the next call; none after it is removed; a throwing one changes no call", async () => {
    const executor = new InProcessToolExecutor(registry());
    expect((await executor.executeToolCall(call("add", { l: 1 }), neverAborted())).isError).toBe(false);
    const provider = register();
    expect((await executor.executeToolCall(call("add", { l: 1 }), neverAborted())).isError).toBe(false);
    expect(provider.total("toolgate.calls", { "gen_ai.tool.name": "add", "toolgate.outcome": "success" })).toBe(1);
    provider.throwing = true;
    const result = await executor.executeToolCall(call("add", { l: 4 }), neverAborted());
    expect(result).toMatchObject({ isError: false, content: "5" });
    provider.throwing = false;
    metrics.disable();
    expect((await executor.executeToolCall(call("add", { l: 1 }), neverAborted())).isError).toBe(false);
    expect(provider.instrument("toolgate.calls").values).toHaveLength(1);
  });

  test("a worker pool: threads and busy threads as gauges, calls by outcome, a kill after a timeout counted", async () => {
    const provider = register();
    const executor = await WorkerToolExecutor.create({
      modules: [fixture("progress-tools")],
      minThreads: 1,
      maxThreads: 2,
      abortGraceMs: 50,
    });
    try {
      // Made at create, before any call: the gauges are there to be read.
      expect(provider.observe("toolgate.threads")).toEqual([executor.threadCount]);
      expect(provider.observe("toolgate.threads.busy")).toEqual([0]);
      expect((await executor.executeToolCall(call("count", { to: 0 }, "c1"), neverAborted())).isError).toBe(false);

      // Busy while the tool runs (its report has arrived); aborted: an async tool's task ends with its call, no kill.
      const controller = new AbortController();
      let busyWhileRunning: number[] = [];
      const running = executor.executeToolCall(call("count", { to: 1, waitMs: 60_000 }, "c2"), controller.signal, {
        onProgress: () => {
          busyWhileRunning = provider.observe("toolgate.threads.busy");
          controller.abort(new Error("enough"));
        },
      });
      await expect(running).rejects.toThrow("enough");
      expect(busyWhileRunning).toEqual([1]);
      // A tool deaf to everything past its limit: TOOL_EXECUTION_TIMEOUT, and its thread killed after the
      // grace period. On a thread that has loaded (the call before shows one has): a limit spent waiting
      // for a thread to boot would kill none.
      expect((await executor.executeToolCall(call("count", { to: 0 }, "c3"), neverAborted())).isError).toBe(false);
      const spun = await executor.executeToolCall(call("spin", { idleMs: 0, spinMs: 60_000 }, "s1"), neverAborted(), { timeoutMs: 300 });
      expect(errorOf(spun).code).toBe("TOOL_EXECUTION_TIMEOUT");

      expect(await eventually(() => provider.total("toolgate.thread.kills"), 1)).toBe(1);
      expect(provider.total("toolgate.calls", { "gen_ai.tool.name": "count", "toolgate.outcome": "success" })).toBe(2);
      expect(provider.total("toolgate.calls", { "gen_ai.tool.name": "count", "toolgate.outcome": "aborted" })).toBe(1);
      expect(
        provider.total("toolgate.calls", {
          "gen_ai.tool.name": "spin",
          "toolgate.outcome": "error",
          "error.type": "TOOL_EXECUTION_TIMEOUT",
        }),
      ).toBe(1);
      expect(provider.instrument("toolgate.calls").values).toHaveLength(4);
      expect(await eventually(() => provider.observe("toolgate.threads.busy")[0] as number, 0)).toBe(0);
      expect(provider.total("toolgate.thread.boot_failures")).toBe(0);
    } finally {
      await executor.close();
    }
    // A closed pool is no longer counted.
    expect(provider.observe("toolgate.threads")).toEqual([0]);
  });

  test("threads that cannot boot are counted, one per thread", async () => {
    const provider = register();
    const gate = join(scratchDir(), "boot-gate");
    const setGate = (n: number): void => setBootFailures(gate, n);
    setGate(0); // the first thread boots
    const left = (): number => bootFailuresLeft(gate);
    const module = new URL(`${fixture("boot-flaky").href}?gate=${encodeURIComponent(gate)}`);
    const executor = await WorkerToolExecutor.create({ modules: [module], minThreads: 1, maxThreads: 1 });
    try {
      expect((await executor.executeToolCall(call("bootedOn", {}, "first"), neverAborted())).isError).toBe(false);
      expect(provider.total("toolgate.thread.boot_failures")).toBe(0);
      setGate(2); // the next two threads exit in setup()
      expect(errorOf(await executor.executeToolCall(call("exitNow", {}, "crash"), neverAborted())).code).toBe("TOOL_EXECUTION_FAILED");
      // Calls until one is served again (each failed boot makes the pool wait before the next thread).
      let served: ToolResultMessage | undefined;
      for (let k = 0; served === undefined && k < 500; k += 1) {
        const result = await executor.executeToolCall(call("bootedOn", {}, `retry-${k}`), neverAborted());
        if (!result.isError) served = result;
        else await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(served?.isError).toBe(false);
      expect(left()).toBe(0);
      expect(await eventually(() => provider.total("toolgate.thread.boot_failures"), 2)).toBe(2);
    } finally {
      await executor.close();
    }
  });
});
