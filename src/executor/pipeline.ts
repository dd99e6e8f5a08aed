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
  readOutputBudgets,
  resolveArgumentBudgets,
  resolveOutputBudgets,
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
  isPromise,
  isProxy,
  JSONStringify,
  MapPrototypeGet,
  MapPrototypeGetSize,
  mapKeyStepper,
  ObjectGetOwnPropertyDescriptor,
  ObjectHasOwn,
  PromisePrototypeThen,
  PromiseReject,
  PromiseResolve,
} from "../contract/primordials.js";
import { type CourseToolResultMessage, errorContent, toolResultMessage } from "../contract/results.js";
import { validateArguments } from "../contract/validation.js";
import { runBatch } from "./batch.js";
import type { ToolOutcome } from "./run-tool.js";
import { assertAbortSignal, throwIfAborted } from "./signal.js";
import type { BatchOptions, CallOptions, ExecutorBudgetOptions } from "./tool-executor.js";

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

/**
 * `executeToolCall` of every executor: the signal first, then the snapshot, then the call.
 * Never throws: every failure is a rejection. A call whose tool settles synchronously costs
 * one promise (the one returned); an asynchronous one, one more per step it waits on.
 */
export function executeCall(
  pipeline: Pipeline,
  call: unknown,
  signal: AbortSignal,
  options?: CallOptions,
): Promise<CourseToolResultMessage> {
  try {
    assertAbortSignal(signal);
    throwIfAborted(signal);
    const completed = completeCall(pipeline, snapshotToolCall(call, argumentBudgetsOf(pipeline, options)), signal);
    if (isPromise(completed))
      return PromisePrototypeThen(completed, (result) => publish(result, signal)) as Promise<CourseToolResultMessage>;
    return PromiseResolve(publish(completed as CourseToolResultMessage, signal));
  } catch (error) {
    return PromiseReject(error);
  }
}

/** The last abort check, just before the result is handed to the caller. */
function publish(result: CourseToolResultMessage, signal: AbortSignal): CourseToolResultMessage {
  throwIfAborted(signal);
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
  const results = await runBatch(calls, signal, options, budgets, (call, batchSignal) => completeCallAsync(pipeline, call, batchSignal));
  throwIfAborted(signal); // on the very promise the caller holds
  return results;
}

/**
 * A snapshotted call from there on: lookup, validation, the executor's run, linking. The
 * caller has checked the signal since the snapshot (which runs no code of the caller's).
 * Synchronous when the run is (it may then throw: the abort reason, a NonRecoverableToolError);
 * the final abort check is the caller's, on the promise it hands out.
 */
export function completeCall(
  pipeline: Pipeline,
  call: Readonly<CourseToolCall>,
  signal: AbortSignal,
): CourseToolResultMessage | Promise<CourseToolResultMessage> {
  const prepared = prepareToolCall(pipeline.tools, call, signal);
  if (prepared.kind === "answered") return prepared.result;
  const outputBudgets = pipeline.outputBudgets ?? DEFAULT_OUTPUT_BUDGETS;
  const outcome = pipeline.run({ call: prepared.call, tool: prepared.tool, args: prepared.args, signal, outputBudgets });
  if (!isPromise(outcome)) return toolResultMessage(prepared.call, (outcome as ToolOutcome).content, (outcome as ToolOutcome).isError);
  return PromisePrototypeThen(outcome as Promise<ToolOutcome>, (settled) =>
    toolResultMessage(prepared.call, settled.content, settled.isError),
  ) as Promise<CourseToolResultMessage>;
}

/** `completeCall` as a promise that never throws synchronously (what a batch runs, each call later). */
function completeCallAsync(pipeline: Pipeline, call: Readonly<CourseToolCall>, signal: AbortSignal): Promise<CourseToolResultMessage> {
  try {
    throwIfAborted(signal); // the batch may have been aborted since this call was snapshotted
    const completed = completeCall(pipeline, call, signal);
    return isPromise(completed) ? (completed as Promise<CourseToolResultMessage>) : PromiseResolve(completed as CourseToolResultMessage);
  } catch (error) {
    return PromiseReject(error);
  }
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
  const budgets = readOption(options, "argumentBudgets");
  return budgets === undefined ? base : resolveArgumentBudgets(base, readArgumentBudgets(budgets, "options.argumentBudgets"));
}

/**
 * An executor's budget options (an object), validated (INVALID_ARGUMENT naming the option) and
 * resolved over the defaults: what its Pipeline carries (`{ tools, run, ...executorBudgets(options) }`).
 */
export function executorBudgets(options: ExecutorBudgetOptions): {
  argumentBudgets: ResolvedArgumentBudgets;
  outputBudgets: ResolvedOutputBudgets;
} {
  const argumentBudgets = readOption(options, "argumentBudgets");
  const outputBudgets = readOption(options, "outputBudgets");
  return {
    argumentBudgets: resolveArgumentBudgets(
      DEFAULT_ARGUMENT_BUDGETS,
      argumentBudgets === undefined ? undefined : readArgumentBudgets(argumentBudgets, "options.argumentBudgets"),
    ),
    outputBudgets: resolveOutputBudgets(
      DEFAULT_OUTPUT_BUDGETS,
      outputBudgets === undefined ? undefined : readOutputBudgets(outputBudgets, "options.outputBudgets"),
    ),
  };
}

/** One own data option: an accessor is refused (not called), an inherited one ignored. */
function readOption(options: object, name: string): unknown {
  const descriptor = ObjectGetOwnPropertyDescriptor(options, name);
  if (descriptor === undefined) return undefined;
  if (!ObjectHasOwn(descriptor, "value"))
    throw new ToolContractError(COURSE_TOOL_INVALID_ARGUMENT, `options.${name} must be a data property`);
  return descriptor.value;
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
