// One call's span, `execute_tool {gen_ai.tool.name}`, named and attributed after OpenTelemetry's
// GenAI semantic conventions, through the global API: a child of the context active when the
// call was made, and the active context while its tool runs (so the tool's own spans, and the
// trace context a queue job carries, are its children). Without the API, or with no SDK
// recording, a call costs one look at the tracer and nothing else. The tracer, its processors
// and exporters are operator code: whatever they throw stays here, and never changes a call.
// docs/operations.md — Tracing.

import type { ToolCall } from "../contract/call.js";
import { isNonRecoverableToolError, isToolContractError } from "../contract/errors.js";
import { JSONStringify } from "../contract/primordials.js";
import { errorCodeOf, type ToolResultMessage } from "../contract/results.js";
import { cutToCodePoints } from "../contract/serialize.js";
import type { Tool } from "../contract/tools.js";
import { readOwnDataProperty } from "../contract/untrusted.js";
import { type OtelApi, type OtelContextValue, type OtelSpan, type OtelTracer, type OtelTracerProvider, otelApi } from "./otel-api.js";
import type { ProgressListener, ToolProgress } from "./progress.js";
import type { TracingSettings } from "./tracing-options.js";

/** The instrumentation scope of toolgate's spans. */
export const TRACER_NAME = "toolgate";

/** SpanKind.INTERNAL and SpanStatusCode.ERROR of the API (numbers fixed by the specification). */
const SPAN_KIND_INTERNAL = 0;
const STATUS_ERROR = 2;
/** A tool's description is cut to this many code points on the span. */
const MAX_DESCRIPTION_CODE_POINTS = 1024;
/** The convention's `error.type` for an error of no known type. */
const OTHER_ERROR = "_OTHER";

let tracerOf: { provider: OtelTracerProvider; tracer: OtelTracer } | undefined;

/**
 * The tracer of the global provider, or undefined while no SDK is behind it. The API's global
 * provider is a proxy whose delegate is the SDK's, once one is registered: asking the proxy for
 * its delegate's tracer is the whole cost of a call when there is none (no span, no context read).
 */
function currentTracer(api: OtelApi): OtelTracer | undefined {
  const provider = api.trace.getTracerProvider();
  if (tracerOf !== undefined && tracerOf.provider === provider) return tracerOf.tracer;
  let tracer: OtelTracer | undefined;
  if (typeof provider.getDelegateTracer === "function") {
    tracer = provider.getDelegateTracer(TRACER_NAME);
    if (tracer === undefined) return undefined; // asked again next call: an SDK may be registered by then
  } else tracer = provider.getTracer(TRACER_NAME);
  tracerOf = { provider, tracer };
  return tracer;
}

/**
 * The span of a call just snapshotted, or undefined when nothing records it (no API, no SDK,
 * a sampler that dropped it, or a tracer that threw).
 */
export function startToolSpan(call: Readonly<ToolCall>, settings: TracingSettings): ToolSpan | undefined {
  const api = otelApi();
  if (api === undefined) return undefined;
  try {
    const tracer = currentTracer(api);
    if (tracer === undefined) return undefined;
    const parent = api.context.active();
    const span = tracer.startSpan(
      `execute_tool ${call.name}`,
      {
        kind: SPAN_KIND_INTERNAL,
        attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.name, "gen_ai.tool.call.id": call.id },
      },
      parent,
    );
    if (span.isRecording() !== true) return undefined;
    return new ToolSpan(api, span, api.trace.setSpan(parent, span), settings);
  } catch {
    return undefined;
  }
}

/** A recording span of one call, ended once with how the call ended. */
export class ToolSpan {
  #ended = false;

  constructor(
    readonly api: OtelApi,
    readonly span: OtelSpan,
    /** The call's parent context with this span in it: active while the tool runs. */
    readonly context: OtelContextValue,
    readonly settings: TracingSettings,
  ) {}

  /** The call's tool was found: its description, and the arguments when they are recorded. */
  described(tool: Tool, call: Readonly<ToolCall>): void {
    this.#attribute("gen_ai.tool.description", cutToCodePoints(tool.description, MAX_DESCRIPTION_CODE_POINTS).text);
    if (this.settings.recordArguments) this.#attribute("gen_ai.tool.call.arguments", this.#bounded(JSONStringify(call.arguments)));
  }

  /** Where the call runs, as the runner recorded it. */
  waited(queueWaitMs: number): void {
    this.#attribute("toolgate.queue_wait_ms", queueWaitMs);
  }

  ranOn(threadId: number): void {
    this.#attribute("thread.id", threadId);
  }

  /** The thread running the call was terminated before the call settled. */
  threadKilled(): void {
    this.#attribute("toolgate.thread_killed", true);
    this.#event("toolgate.thread_killed", undefined);
  }

  /** The caller's listener (if any) behind one that records each delivered report as a span event. */
  progressListener(listener: ProgressListener | undefined): ProgressListener {
    return (progress: ToolProgress): void => {
      if (!this.#ended) {
        const attributes: { [key: string]: string | number } = { "toolgate.progress": progress.progress };
        if (progress.total !== undefined) attributes["toolgate.progress.total"] = progress.total;
        if (progress.message !== undefined) attributes["toolgate.progress.message"] = progress.message;
        this.#event("toolgate.progress", attributes);
      }
      // Called through deliverProgress by every runner: what the caller's listener throws stays there.
      if (listener !== undefined) listener(progress);
    };
  }

  /** Runs `run` with this span active (the tool's own spans, and a queue job's trace context, are its children). */
  within<T>(run: () => T): T {
    return this.api.context.with(this.context, run);
  }

  /** The call resolved: an `isError` result is an error of its code. */
  ended(result: ToolResultMessage): void {
    if (this.settings.recordResults) this.#attribute("gen_ai.tool.call.result", this.#bounded(result.content));
    if (result.isError) {
      const code = errorCodeOf(result.content) ?? OTHER_ERROR;
      this.#end(code, code);
    } else this.#end(undefined, undefined);
  }

  /** The call rejected: with its signal's reason (`aborted`), or a fatal or contract error. */
  rejected(error: unknown, aborted: boolean): void {
    if (aborted) this.#end("aborted", "the call was aborted");
    else if (isToolContractError(error)) {
      const code = readOwnDataProperty(error, "code");
      this.#end(typeof code === "string" ? code : OTHER_ERROR, "a contract error");
    } else this.#end(isNonRecoverableToolError(error) ? "NonRecoverableToolError" : OTHER_ERROR, "the call failed without a result");
  }

  #end(errorType: string | undefined, message: string | undefined): void {
    if (this.#ended) return;
    this.#ended = true;
    try {
      if (errorType !== undefined) {
        this.span.setAttribute("error.type", errorType);
        this.span.setStatus({ code: STATUS_ERROR, message });
      }
      this.span.end();
    } catch {
      // the tracer's failure is not the call's
    }
  }

  #attribute(key: string, value: string | number | boolean): void {
    if (this.#ended) return;
    try {
      this.span.setAttribute(key, value);
    } catch {
      // as #end
    }
  }

  #event(name: string, attributes: { [key: string]: string | number } | undefined): void {
    try {
      this.span.addEvent(name, attributes);
    } catch {
      // as #end
    }
  }

  #bounded(text: string): string {
    return cutToCodePoints(text, this.settings.maxRecordedCodePoints).text;
  }
}
