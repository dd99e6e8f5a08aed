// The `tracing` executor option: what a call's span records beyond the conventions' required
// attributes. Arguments and results are the conventions' opt-in attributes (they may hold what
// the model or the tool saw: personal data, secrets), off unless asked for, and bounded.
// docs/operations.md — Tracing.
import { ObjectFreeze } from "../contract/primordials.js";
import { integerOr, readOptions, validateBoolean } from "../contract/validators.js";

/** `ExecutorOptions.tracing`. */
export interface TracingOptions {
  /** Record each call's JSON arguments as `gen_ai.tool.call.arguments` (default false). */
  readonly recordArguments?: boolean;
  /** Record each result's `content` as `gen_ai.tool.call.result` (default false). */
  readonly recordResults?: boolean;
  /** Code points kept of a recorded value (default 1024, 1 to 4096). */
  readonly maxRecordedCodePoints?: number;
}

/** `TracingOptions` resolved. */
export interface TracingSettings {
  readonly recordArguments: boolean;
  readonly recordResults: boolean;
  readonly maxRecordedCodePoints: number;
}

/** Spans without arguments or results: an executor made without `tracing`. */
export const NO_RECORDING: TracingSettings = ObjectFreeze({ recordArguments: false, recordResults: false, maxRecordedCodePoints: 1024 });

const TRACING_OPTION_KEYS = ObjectFreeze(["recordArguments", "recordResults", "maxRecordedCodePoints"] as const);
const MAX_RECORDED_CODE_POINTS = 4096;

/** Reads `options.tracing` (absent: NO_RECORDING); a ToolContractError(INVALID_ARGUMENT) naming a bad or unknown key. */
export function readTracingOptions(tracing: unknown): TracingSettings {
  if (tracing === undefined) return NO_RECORDING;
  const read = readOptions(tracing, "options.tracing", TRACING_OPTION_KEYS);
  const recordArguments = read.recordArguments ?? false;
  const recordResults = read.recordResults ?? false;
  validateBoolean(recordArguments, "options.tracing.recordArguments");
  validateBoolean(recordResults, "options.tracing.recordResults");
  const maxRecordedCodePoints = integerOr(read.maxRecordedCodePoints, "options.tracing.maxRecordedCodePoints", {
    min: 1,
    max: MAX_RECORDED_CODE_POINTS,
    fallback: NO_RECORDING.maxRecordedCodePoints,
  });
  return ObjectFreeze({ recordArguments, recordResults, maxRecordedCodePoints });
}
