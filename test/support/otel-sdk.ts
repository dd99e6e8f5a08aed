// The real OpenTelemetry SDK for the tracing tests, in a project of its own: the newest
// @opentelemetry/sdk-trace-base accepts @opentelemetry/api <1.10.0, and our devDependency is
// 1.10.0, so the SDK cannot sit in our node_modules without --legacy-peer-deps. The project
// (api 1.9.1, the SDK, the AsyncLocalStorage context manager, pinned) is installed once per
// machine, in TOOLGATE_OTEL_SDK_DIR or a temporary folder named after the pins, and reused.
// Everything is registered through our api 1.10.0 (the one toolgate loads): the API's global is
// read by a copy of the same or an older minor version, so the SDK's own 1.9.1 sees it (the
// reverse does not hold: what 1.9.1 registered, 1.10.0 would not read).
// docs/operations.md — Tracing.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as otelApi from "@opentelemetry/api";

export const OTEL_PINS = {
  "@opentelemetry/api": "1.9.1",
  "@opentelemetry/sdk-trace-base": "2.12.1",
  "@opentelemetry/context-async-hooks": "2.12.1",
  // The metrics SDK (test/telemetry/otel-metrics-sdk.test.ts), of the same release.
  "@opentelemetry/sdk-metrics": "2.12.1",
  // The AI SDK's OpenTelemetry integration, of the release of our `ai` devDependency.
  "@ai-sdk/otel": "1.0.173",
} as const;

/** The folder of the SDK project (installed when missing). Throws when npm cannot install it. */
export function otelSdkDir(): string {
  const pins = JSON.stringify(OTEL_PINS);
  const dir =
    process.env.TOOLGATE_OTEL_SDK_DIR ??
    join(tmpdir(), `toolgate-otel-sdk-${createHash("sha256").update(pins).digest("hex").slice(0, 12)}`);
  if (existsSync(join(dir, "node_modules/@ai-sdk/otel/package.json"))) return dir;
  // Installed beside, then renamed: test files installing at once never see half a project.
  const staging = mkdtempSync(`${dir}-installing-`);
  try {
    writeFileSync(join(staging, "package.json"), JSON.stringify({ name: "toolgate-otel-sdk", private: true, dependencies: OTEL_PINS }));
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: staging, stdio: "pipe", timeout: 300_000 });
    mkdirSync(dir, { recursive: true });
    if (!existsSync(join(dir, "node_modules"))) renameSync(join(staging, "node_modules"), join(dir, "node_modules"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "toolgate-otel-sdk", private: true, dependencies: OTEL_PINS }));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return dir;
}

type Api = typeof otelApi;

/** The SDK's pieces the tests use, typed loosely (their types are not in our node_modules). */
export interface OtelSdk {
  readonly api: Api;
  /** `require` from the SDK project. */
  readonly require: NodeJS.Require;
  readonly exporter: {
    getFinishedSpans(): FinishedSpan[];
    reset(): void;
  };
  /** Where the SDK project is (a host process registers its own SDK from there). */
  readonly dir: string;
}

/** A finished span as the in-memory exporter keeps it (the fields the tests read). */
export interface FinishedSpan {
  readonly name: string;
  readonly kind: number;
  readonly instrumentationScope?: { name: string };
  readonly attributes: Record<string, unknown>;
  readonly status: { code: number; message?: string };
  readonly events: { name: string; attributes?: Record<string, unknown> }[];
  readonly parentSpanContext?: { spanId: string; traceId: string } | undefined;
  spanContext(): { traceId: string; spanId: string; traceFlags: number };
  readonly ended: boolean;
}

/**
 * Registers the SDK globally in this process: a BasicTracerProvider with a simple processor
 * into an in-memory exporter, and the AsyncLocalStorage context manager.
 */
export function registerOtelSdk(): OtelSdk {
  const dir = otelSdkDir();
  const require = createRequire(join(dir, "package.json"));
  const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require("@opentelemetry/sdk-trace-base");
  const { AsyncLocalStorageContextManager } = require("@opentelemetry/context-async-hooks");
  const exporter = new InMemorySpanExporter();
  const contextManager = new AsyncLocalStorageContextManager();
  contextManager.enable();
  const api = otelApi;
  if (!api.context.setGlobalContextManager(contextManager)) throw new Error("a context manager was already registered");
  if (!api.trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }))) {
    throw new Error("a tracer provider was already registered");
  }
  return { api: otelApi, exporter, dir, require };
}
