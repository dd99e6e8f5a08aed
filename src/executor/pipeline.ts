// One call, top to bottom, written once for every executor:
//   signal → snapshot → lookup → validate → signal → run → re-link → freeze → signal.
// An executor supplies only `run`: how a validated call's tool is executed and its output
// serialized (in this thread, in a worker thread, on another machine).
import {
  DEFAULT_ARGUMENT_BUDGETS,
  DEFAULT_OUTPUT_BUDGETS,
  type ResolvedArgumentBudgets,
  type ResolvedOutputBudgets,
  readArgumentBudgets,
  resolveArgumentBudgets,
} from "../contract/budgets.js";
import { type CourseToolCall, snapshotToolCall } from "../contract/call.js";
import {
  COURSE_TOOL_INVALID_ARGUMENT,
  COURSE_TOOL_MAX_LISTED_TOOL_NAMES,
  COURSE_TOOL_NOT_FOUND,
  type RecoverableToolErrorCode,
} from "../contract/constants.js";
import { cutToCodePoints } from "../contract/content.js";
import type { CourseTool } from "../contract/definition.js";
import { ToolContractError } from "../contract/errors.js";
import type { FailureText } from "../contract/failure.js";
import {
  ArrayPrototypeJoin,
  isProxy,
  JSONStringify,
  MapPrototypeGet,
  MapPrototypeGetSize,
  mapKeyStepper,
  ObjectGetOwnPropertyDescriptor,
  ObjectHasOwn,
} from "../contract/primordials.js";
import { type CourseToolResultMessage, errorContent, toolResultMessage } from "../contract/results.js";
import { validateArguments } from "../contract/validation.js";
import { runBatch } from "./batch.js";
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
  /** The executor's output budgets; the tool's own `budgets` override them (runTool merges). */
  readonly outputBudgets: ResolvedOutputBudgets;
}

/**
 * Runs a validated call's tool and serializes its output. Resolves to the bounded outcome;
 * rejects with the signal's reason as soon as it aborts, or with a NonRecoverableToolError.
 */
export type ToolRunner = (request: RunRequest) => ToolOutcome | Promise<ToolOutcome>;

/** What an executor hands the pipeline: the tools it owns, how it runs one, and its budgets. */
export interface Pipeline {
  readonly tools: Map<string, CourseTool>;
  readonly run: ToolRunner;
  /** The executor's argument budgets (validated and resolved); the defaults when absent. */
  readonly argumentBudgets?: ResolvedArgumentBudgets;
  /** The executor's output budgets (validated and resolved), handed to `run`; the defaults when absent. */
  readonly outputBudgets?: ResolvedOutputBudgets;
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
  throwIfAborted(signal);
  const result = await completeCall(pipeline, snapshotToolCall(call, argumentBudgetsOf(pipeline, options)), signal);
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
  assertAbortSignal(signal); // before the options, as for a single call
  const budgets = argumentBudgetsOf(pipeline, options);
  const results = await runBatch(calls, signal, options, budgets, (call, batchSignal) => completeCall(pipeline, call, batchSignal));
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
): Promise<CourseToolResultMessage> {
  throwIfAborted(signal);
  const prepared = prepareToolCall(pipeline.tools, call, signal);
  if (prepared.kind === "answered") return prepared.result;
  const outputBudgets = pipeline.outputBudgets ?? DEFAULT_OUTPUT_BUDGETS;
  const outcome = await pipeline.run({ call: prepared.call, tool: prepared.tool, args: prepared.args, signal, outputBudgets });
  return toolResultMessage(prepared.call, outcome.content, outcome.isError);
}

/**
 * The argument budgets of one call (or batch): the executor's, with the call's
 * `options.argumentBudgets` over them. Validated here, before anything is snapshotted.
 */
function argumentBudgetsOf(pipeline: Pipeline, options: CallOptions | undefined): ResolvedArgumentBudgets {
  const base = pipeline.argumentBudgets ?? DEFAULT_ARGUMENT_BUDGETS;
  if (options === undefined) return base;
  if (typeof options !== "object" || options === null || isProxy(options)) {
    throw new ToolContractError(COURSE_TOOL_INVALID_ARGUMENT, "options must be an object");
  }
  const descriptor = ObjectGetOwnPropertyDescriptor(options, "argumentBudgets");
  if (descriptor === undefined) return base;
  if (!ObjectHasOwn(descriptor, "value")) {
    throw new ToolContractError(COURSE_TOOL_INVALID_ARGUMENT, "options.argumentBudgets must be a data property");
  }
  if (descriptor.value === undefined) return base;
  return resolveArgumentBudgets(base, readArgumentBudgets(descriptor.value, "options.argumentBudgets"));
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
