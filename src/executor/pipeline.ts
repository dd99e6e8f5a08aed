// One call, top to bottom, written once for every executor:
//   signal → snapshot → lookup → validate → signal → run → re-link → freeze → signal.
// An executor supplies only `run`: how a validated call's tool is executed and its output
// serialized (in this thread, in a worker thread, on another machine).
import { type CourseToolCall, snapshotToolCall } from "../contract/call.js";
import { COURSE_TOOL_MAX_LISTED_TOOL_NAMES, COURSE_TOOL_NOT_FOUND, type RecoverableToolErrorCode } from "../contract/constants.js";
import { cutToCodePoints } from "../contract/content.js";
import type { CourseTool } from "../contract/definition.js";
import type { FailureText } from "../contract/failure.js";
import { ArrayPrototypeJoin, JSONStringify, MapPrototypeGet, MapPrototypeGetSize, mapKeyStepper } from "../contract/primordials.js";
import { type CourseToolResultMessage, errorContent, toolResultMessage } from "../contract/results.js";
import { validateArguments } from "../contract/validation.js";
import { runBatch } from "./batch.js";
import { type ProgressListener, readProgressListener } from "./progress.js";
import type { ToolOutcome } from "./run-tool.js";
import { assertAbortSignal, throwIfAborted } from "./signal.js";
import type { BatchOptions, CallOptions } from "./tool-executor.js";

/** A validated call, ready for its tool to run. */
export interface RunRequest {
  readonly call: Readonly<CourseToolCall>;
  readonly tool: CourseTool;
  /** What the validator accepted: the value `execute` receives. */
  readonly args: unknown;
  readonly signal: AbortSignal;
  /** The caller's `onProgress`, if any: where the tool's progress reports go. */
  readonly onProgress: ProgressListener | undefined;
}

/**
 * Runs a validated call's tool and serializes its output. Resolves to the bounded outcome;
 * rejects with the signal's reason as soon as it aborts, or with a NonRecoverableToolError.
 */
export type ToolRunner = (request: RunRequest) => ToolOutcome | Promise<ToolOutcome>;

/** What an executor hands the pipeline: the tools it owns, and how it runs one. */
export interface Pipeline {
  readonly tools: Map<string, CourseTool>;
  readonly run: ToolRunner;
}

/** A call after the main-thread steps: either already answered, or ready to run. */
export type PreparedCall =
  | { readonly kind: "answered"; readonly result: CourseToolResultMessage }
  | { readonly kind: "ready"; readonly call: Readonly<CourseToolCall>; readonly tool: CourseTool; readonly args: unknown };

/** `executeToolCall` of every executor: the signal first, then the snapshot, then the call. */
export async function executeCall(
  pipeline: Pipeline,
  call: unknown,
  signal: AbortSignal,
  options?: CallOptions,
): Promise<CourseToolResultMessage> {
  assertAbortSignal(signal);
  const onProgress = readProgressListener(options);
  throwIfAborted(signal);
  const result = await completeCall(pipeline, snapshotToolCall(call), signal, onProgress);
  throwIfAborted(signal); // the last check, on the very promise the caller holds
  return result;
}

/** `executeBatch` of every executor. */
export async function executeCalls(
  pipeline: Pipeline,
  calls: readonly unknown[],
  signal: AbortSignal,
  options?: BatchOptions,
): Promise<CourseToolResultMessage[]> {
  const onProgress = readProgressListener(options);
  const results = await runBatch(calls, signal, options, (call, batchSignal) => completeCall(pipeline, call, batchSignal, onProgress));
  throwIfAborted(signal); // on the very promise the caller holds
  return results;
}

/**
 * A snapshotted call from there on: lookup, validation, the executor's run, publication.
 * The final abort check is the caller's, on the promise it returns.
 */
export async function completeCall(
  pipeline: Pipeline,
  call: Readonly<CourseToolCall>,
  signal: AbortSignal,
  onProgress?: ProgressListener,
): Promise<CourseToolResultMessage> {
  throwIfAborted(signal);
  const prepared = prepareToolCall(pipeline.tools, call, signal);
  if (prepared.kind === "answered") return prepared.result;
  const outcome = await pipeline.run({ call: prepared.call, tool: prepared.tool, args: prepared.args, signal, onProgress });
  return toolResultMessage(prepared.call, outcome.content, outcome.isError);
}

/** Lookup and validation, then the signal again. Synchronous; nothing here runs the tool. */
export function prepareToolCall(tools: Map<string, CourseTool>, snapshot: Readonly<CourseToolCall>, signal: AbortSignal): PreparedCall {
  const tool = MapPrototypeGet(tools, snapshot.name);
  if (tool === undefined) return answered(snapshot, COURSE_TOOL_NOT_FOUND, notFound(snapshot.name, tools));
  const validation = validateArguments(tool, snapshot.arguments);
  throwIfAborted(signal); // the validator may have taken long, or aborted the run itself
  if (!validation.ok) return answered(snapshot, validation.code, validation.failure);
  return { kind: "ready", call: snapshot, tool, args: validation.value };
}

function answered(call: Readonly<CourseToolCall>, code: RecoverableToolErrorCode, failure: FailureText): PreparedCall {
  return { kind: "answered", result: toolResultMessage(call, errorContent(code, failure), true) };
}

const MAX_ECHOED_NAME_CODE_POINTS = 128;
const MAX_LISTED_NAME_CODE_POINTS = 64;

/** Names what is registered (bounded), so the model can correct itself. */
function notFound(name: string, tools: Map<string, CourseTool>): FailureText {
  const echoed = JSONStringify(cutToCodePoints(name, MAX_ECHOED_NAME_CODE_POINTS).text);
  const total = MapPrototypeGetSize(tools);
  if (total === 0) return { text: `Tool ${echoed} is not registered. No tools are registered.`, cut: false };
  const listed: string[] = [];
  const next = mapKeyStepper(tools);
  for (let step = next(); step.done !== true && listed.length < COURSE_TOOL_MAX_LISTED_TOOL_NAMES; step = next()) {
    listed[listed.length] = cutToCodePoints(step.value, MAX_LISTED_NAME_CODE_POINTS).text;
  }
  const more = total > listed.length ? `, and ${total - listed.length} more` : "";
  return { text: `Tool ${echoed} is not registered. Available tools: ${ArrayPrototypeJoin(listed, ", ")}${more}.`, cut: false };
}
