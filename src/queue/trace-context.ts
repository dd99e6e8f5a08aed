// W3C trace context across the queue: the agent writes the context active while its call runs
// (its execute_tool span) into the job as `traceparent` and `tracestate`; the host reads them
// from the job (untrusted, like everything read from Redis: the exact W3C grammar, bounded) and
// runs the call with that remote span as its parent, so the host's span is a child of the
// agent's, in another process. Neither side needs the other's tracer or propagator: the W3C
// format is written and read here, through the global OpenTelemetry API when it is installed.
// docs/operations.md — Tracing; https://www.w3.org/TR/trace-context/.
import { ObjectFreeze, RegExpPrototypeExec, StringPrototypeCharCodeAt } from "../contract/primordials.js";
import { readOwnDataProperty } from "../contract/untrusted.js";
import { type OtelContextValue, otelApi } from "../executor/otel-api.js";

/** What a job carries of its agent's trace. */
export interface JobTraceContext {
  readonly traceparent?: string;
  readonly tracestate?: string;
}

const NO_TRACE: JobTraceContext = ObjectFreeze({});

/** version 00: trace id, parent (span) id, flags; lowercase hex only. */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ALL_ZEROS = /^0+$/;
/** A tracestate list-member: a key (simple or tenant@system) = a value of printable ASCII without "," or "=", not ending in a space. */
const MEMBER =
  "(?:[a-z][_0-9a-z\\-*/]{0,255}|[a-z0-9][_0-9a-z\\-*/]{0,240}@[a-z][_0-9a-z\\-*/]{0,13})=[\\x20-\\x2b\\x2d-\\x3c\\x3e-\\x7e]{0,255}[\\x21-\\x2b\\x2d-\\x3c\\x3e-\\x7e]";
/** At most 32 list-members, separated by commas with optional blanks around them (W3C's OWS). */
const TRACESTATE = new RegExp(`^[ \\t]*${MEMBER}(?:[ \\t]*,[ \\t]*${MEMBER}){0,31}[ \\t]*$`);
/** What W3C asks every vendor to carry, and all this reads. */
const MAX_TRACESTATE_LENGTH = 512;
const HEX = "0123456789abcdef";

/** The job's trace fields for the context active now (none without the API, or outside a valid span context). */
export function activeTraceContext(): JobTraceContext {
  const api = otelApi();
  if (api === undefined) return NO_TRACE;
  try {
    const span = api.trace.getSpanContext(api.context.active());
    if (span === undefined) return NO_TRACE;
    const { traceId, spanId, traceFlags } = span;
    if (typeof traceId !== "string" || typeof spanId !== "string" || typeof traceFlags !== "number") return NO_TRACE;
    const traceparent = `00-${traceId}-${spanId}-${HEX[(traceFlags >> 4) & 15]}${HEX[traceFlags & 15]}`;
    if (readTraceparent(traceparent) === undefined) return NO_TRACE;
    const tracestate = span.traceState?.serialize();
    return typeof tracestate === "string" && readTracestate(tracestate) !== undefined ? { traceparent, tracestate } : { traceparent };
  } catch {
    return NO_TRACE; // the tracer's failure is not the call's
  }
}

/**
 * Runs `run` with the job's remote span as the active context's span, when the job carries a
 * valid `traceparent`; else (no API, nothing carried, anything malformed) as it is.
 */
export function withinJobTrace<T>(jobData: unknown, run: () => T): T {
  // Without the API nothing of the job's trace is used: its fields are not read at all.
  const api = otelApi();
  if (api === undefined) return run();
  const parent = jobTraceParent(jobData);
  return parent === undefined ? run() : api.context.with(parent, run);
}

/** The context whose span is the job's remote parent, or undefined. */
export function jobTraceParent(jobData: unknown): OtelContextValue | undefined {
  if (typeof jobData !== "object" || jobData === null) return undefined;
  const parsed = readTraceparent(readOwnDataProperty(jobData, "traceparent"));
  if (parsed === undefined) return undefined;
  const api = otelApi();
  if (api === undefined) return undefined;
  try {
    const tracestate = readTracestate(readOwnDataProperty(jobData, "tracestate"));
    return api.trace.setSpanContext(api.ROOT_CONTEXT, {
      ...parsed,
      isRemote: true,
      ...(tracestate === undefined ? {} : { traceState: api.createTraceState(tracestate) }),
    });
  } catch {
    return undefined;
  }
}

/** A traceparent of version 00 with non-zero ids, or undefined. */
export function readTraceparent(value: unknown): { traceId: string; spanId: string; traceFlags: number } | undefined {
  if (typeof value !== "string" || value.length !== 55) return undefined;
  const match = RegExpPrototypeExec(TRACEPARENT, value);
  if (match === null) return undefined;
  const [, traceId, spanId, flags] = match as unknown as [string, string, string, string];
  if (RegExpPrototypeExec(ALL_ZEROS, traceId) !== null || RegExpPrototypeExec(ALL_ZEROS, spanId) !== null) return undefined;
  return { traceId, spanId, traceFlags: hexDigit(flags, 0) * 16 + hexDigit(flags, 1) };
}

/** A tracestate within the W3C grammar and the bounds above, or undefined (the whole of it is dropped). */
export function readTracestate(value: unknown): string | undefined {
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_TRACESTATE_LENGTH) return undefined;
  return RegExpPrototypeExec(TRACESTATE, value) === null ? undefined : value;
}

/** The value of the lowercase hex digit at `index` (the pattern admitted only those). */
function hexDigit(text: string, index: number): number {
  const code = StringPrototypeCharCodeAt(text, index);
  return code <= 0x39 ? code - 0x30 : code - 0x57;
}
