// @opentelemetry/api, an optional peer: loaded once, synchronously, the first time a call asks
// for its tracer. `require` (not `import()`): the first call must already be traced, and a
// top-level await would make toolgate un-`require`-able. The API's builds share their state
// through a global of the API's own, so this copy sees the provider and the context manager
// an application registered through its ESM build, or through another copy of a compatible
// version. Not installed, or not the API: no spans, and nothing else changes.
// Only the members below are used, described here (not imported from the API's types) so that
// toolgate's declarations compile without the package.
// docs/operations.md — Tracing.
import { createRequire } from "node:module";

/** A context of the API (opaque here). */
export type OtelContextValue = object;

/** A span's identity, as the API gives it. */
export interface OtelSpanContext {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
  readonly isRemote?: boolean;
  readonly traceState?: { serialize(): string };
}

export type OtelAttributeValue = string | number | boolean;
export type OtelAttributes = { [key: string]: OtelAttributeValue };

/** The span methods toolgate calls. */
export interface OtelSpan {
  spanContext(): OtelSpanContext;
  setAttribute(key: string, value: OtelAttributeValue): unknown;
  addEvent(name: string, attributes?: OtelAttributes): unknown;
  setStatus(status: { code: number; message?: string | undefined }): unknown;
  isRecording(): boolean;
  end(): void;
}

export interface OtelTracer {
  startSpan(name: string, options: { kind: number; attributes: OtelAttributes }, context: OtelContextValue): OtelSpan;
}

export interface OtelTracerProvider {
  getTracer(name: string, version?: string): OtelTracer;
  /** The global provider's (a ProxyTracerProvider): its SDK's tracer, undefined while none is registered. */
  getDelegateTracer?(name: string, version?: string): OtelTracer | undefined;
}

/** The instruments toolgate records to (metrics.ts). */
export interface OtelCounter {
  add(value: number, attributes?: OtelAttributes): void;
}

export interface OtelHistogram {
  record(value: number, attributes?: OtelAttributes): void;
}

export interface OtelObservableResult {
  observe(value: number, attributes?: OtelAttributes): void;
}

export interface OtelObservableGauge {
  addCallback(callback: (result: OtelObservableResult) => void): void;
}

/** An instrument's description, unit, and (histograms) its bucket boundaries. */
export interface OtelInstrumentOptions {
  readonly description: string;
  readonly unit: string;
  readonly advice?: { readonly explicitBucketBoundaries: readonly number[] };
}

export interface OtelMeter {
  createCounter(name: string, options: OtelInstrumentOptions): OtelCounter;
  createHistogram(name: string, options: OtelInstrumentOptions): OtelHistogram;
  createObservableGauge(name: string, options: OtelInstrumentOptions): OtelObservableGauge;
}

export interface OtelMeterProvider {
  getMeter(name: string, version?: string): OtelMeter;
}

/** The members of `@opentelemetry/api` toolgate uses (every version from 1.3.0 has them). */
export interface OtelApi {
  readonly trace: {
    getTracerProvider(): OtelTracerProvider;
    setSpan(context: OtelContextValue, span: OtelSpan): OtelContextValue;
    getSpanContext(context: OtelContextValue): OtelSpanContext | undefined;
    setSpanContext(context: OtelContextValue, spanContext: OtelSpanContext): OtelContextValue;
  };
  readonly context: {
    active(): OtelContextValue;
    with<R>(context: OtelContextValue, fn: () => R): R;
  };
  readonly ROOT_CONTEXT: OtelContextValue;
  createTraceState(text?: string): { serialize(): string };
  /** The metrics API (checked before use, as the rest of the API is not checked for it): the registered SDK's provider, else a no-op one. */
  readonly metrics?: { getMeterProvider(): OtelMeterProvider };
  /** The API's no-op meter: what its no-op provider hands out. */
  readonly createNoopMeter?: () => OtelMeter;
}

/** What requires a package by name (node's own `require`, or a test's stand-in). */
export type PackageRequire = (name: string) => unknown;

/** The API, or undefined when it could not be loaded (not installed, or not what it should be). */
export function loadOtelApi(require: PackageRequire): OtelApi | undefined {
  let api: unknown;
  try {
    api = require("@opentelemetry/api");
  } catch {
    return undefined;
  }
  if (typeof api !== "object" || api === null) return undefined;
  const { trace, context, ROOT_CONTEXT, createTraceState } = api as Partial<OtelApi>;
  if (typeof trace?.getTracerProvider !== "function" || typeof context?.with !== "function" || typeof createTraceState !== "function") {
    return undefined;
  }
  return typeof ROOT_CONTEXT === "object" && ROOT_CONTEXT !== null ? (api as OtelApi) : undefined;
}

let loaded: OtelApi | null | undefined;

/** The process's API, loaded at the first call (undefined, for good, when it is not installed). */
export function otelApi(): OtelApi | undefined {
  if (loaded === undefined) loaded = loadOtelApi(createRequire(import.meta.url)) ?? null;
  return loaded ?? undefined;
}
