// Preloaded (node --import) into a `toolgate-worker` process by queue-trace.test.ts: the real
// OpenTelemetry SDK, registered through the API toolgate's build loads, exporting each finished
// span as one JSON line to TOOLGATE_SPANS_FILE, for the test process to read.
import { appendFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const sdkRequire = createRequire(join(process.env.TOOLGATE_OTEL_SDK_DIR ?? "", "package.json"));
const api = createRequire(new URL("../../dist/src/executor/otel-api.js", import.meta.url))("@opentelemetry/api");
const { BasicTracerProvider, SimpleSpanProcessor } = sdkRequire("@opentelemetry/sdk-trace-base");
const { AsyncLocalStorageContextManager } = sdkRequire("@opentelemetry/context-async-hooks");
const file = process.env.TOOLGATE_SPANS_FILE ?? "";

const exporter = {
  export(spans, done) {
    for (const span of spans) {
      const { traceId, spanId } = span.spanContext();
      const line = {
        name: span.name,
        traceId,
        spanId,
        parentSpanId: span.parentSpanContext?.spanId,
        attributes: span.attributes,
        status: span.status,
      };
      appendFileSync(file, `${JSON.stringify(line)}\n`);
    }
    done({ code: 0 });
  },
  shutdown: async () => {},
  forceFlush: async () => {},
};
api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
api.trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
