// Part of case 2 (docs/operations.md — Tracing): what toolgate's span costs an in-process call.
// With no SDK registered a call pays one look at the global tracer provider (measured alone,
// as a share of the untraced call); with the real SDK registered (BasicTracerProvider, a simple
// processor, an exporter that drops what it gets) the same call again, against the untraced
// one. The SDK comes from the tracing tests' project (test/support/otel-sdk.ts: installed once,
// beside ours, since it does not accept our @opentelemetry/api); when it cannot be installed the
// traced figures are null and say why. The SDK is registered last, and unregistered after: every other row runs without it.
import { createRequire } from "node:module";
import { join } from "node:path";
import { context, trace } from "@opentelemetry/api";
import type { ToolCall, ToolRegistry } from "toolgate";
import { executeToolCall } from "toolgate";
import { startToolSpan } from "../../src/executor/tracing.js";
import { NO_RECORDING } from "../../src/executor/tracing-options.js";
import { otelSdkDir } from "../../test/support/otel-sdk.js";
import { type MicroOptions, median, microRoundsAsync, now, round } from "../harness.js";

export interface TracingFigures {
  /** The look for a tracer with no SDK registered, ns per call. */
  readonly noSdkCheckNsPerCall: number;
  /** That look as a share of the untraced call. */
  readonly noSdkCheckShare: number;
  /** The call with the SDK registered (a span recorded and exported per call), µs; null when the SDK could not be had. */
  readonly tracedUsPerCall: number | null;
  /** Traced / untraced time per call; null as above. */
  readonly tracedRatio: number | null;
  /** Why the traced figures are null. */
  readonly unavailable?: string;
}

const CHECKS = 1_000_000;

/** `untracedNs`: the untraced call's median ns, from the rows measured before. */
export async function benchTracing(
  registry: ToolRegistry,
  call: ToolCall,
  signal: AbortSignal,
  untracedNs: number,
  micro: MicroOptions,
  smoke: boolean,
): Promise<TracingFigures> {
  const frozen = Object.freeze({ ...call });
  const checks = smoke ? 1000 : CHECKS;
  for (let index = 0; index < checks; index += 1) startToolSpan(frozen, NO_RECORDING); // warm-up
  const started = now();
  for (let index = 0; index < checks; index += 1)
    if (startToolSpan(frozen, NO_RECORDING) !== undefined) throw new Error("a span was recorded");
  const noSdkCheckNsPerCall = ((now() - started) * 1e6) / checks;
  const check = { noSdkCheckNsPerCall: round(noSdkCheckNsPerCall), noSdkCheckShare: round(noSdkCheckNsPerCall / untracedNs, 4) };
  let require: NodeJS.Require;
  try {
    require = createRequire(join(otelSdkDir(), "package.json"));
  } catch (error) {
    return { ...check, tracedUsPerCall: null, tracedRatio: null, unavailable: `the SDK could not be installed: ${String(error)}` };
  }
  const { AsyncLocalStorageContextManager } = require("@opentelemetry/context-async-hooks");
  const { BasicTracerProvider, SimpleSpanProcessor } = require("@opentelemetry/sdk-trace-base");
  const dropping = { export: (_spans: unknown, done: (result: { code: number }) => void) => done({ code: 0 }), shutdown: async () => {} };
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(dropping)] }));
  try {
    const probe = await executeToolCall(registry, call, signal);
    if (probe.isError) throw new Error("in-process benchmark: the traced call failed");
    const ns = await microRoundsAsync({ traced: () => executeToolCall(registry, call, signal) }, micro);
    const tracedNs = median(ns.traced);
    return { ...check, tracedUsPerCall: round(tracedNs / 1000), tracedRatio: round(tracedNs / untracedNs) };
  } finally {
    // runBenchmarks runs the later cases in this process: they run untraced, as before.
    trace.disable();
    context.disable();
  }
}
