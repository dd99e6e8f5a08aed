// executeToolCall(): one untrusted call, top to bottom. The steps before execution
// (signal, snapshot, lookup, validation) are shared with the worker executor.
import {
  COURSE_TOOL_MAX_LISTED_TOOL_NAMES,
  COURSE_TOOL_NOT_FOUND,
  type RecoverableToolErrorCode,
} from "./constants.js";
import { type CourseToolCall, snapshotToolCall } from "./call.js";
import { cutToCodePoints } from "./content.js";
import type { CourseTool } from "./definition.js";
import type { FailureText } from "./failure.js";
import { ArrayPrototypeJoin, JSONStringify, MapPrototypeGet, MapPrototypeGetSize, ObjectFreeze, mapKeyStepper } from "./primordials.js";
import { type ToolRegistry, registeredTools } from "./registry.js";
import { type CourseToolResultMessage, errorContent, toolResultMessage } from "./results.js";
import { runTool } from "./run-tool.js";
import { assertAbortSignal, throwIfAborted } from "./signal.js";
import { validateArguments } from "./validation.js";

/** A call after the main-thread steps: either already answered, or ready to run. */
export type PreparedCall =
  | { readonly kind: "answered"; readonly result: CourseToolResultMessage }
  | { readonly kind: "ready"; readonly call: Readonly<CourseToolCall>; readonly tool: CourseTool; readonly args: unknown };

/**
 * Runs one tool call through the boundary. Resolves to a frozen result linked to the call
 * (a success, or a recoverable `isError: true` result); rejects with ToolContractError for
 * a malformed call, with `signal.reason` when the signal aborts first, and with a genuine
 * NonRecoverableToolError thrown by the tool.
 */
export async function executeToolCall(registry: ToolRegistry, call: unknown, signal: AbortSignal): Promise<CourseToolResultMessage> {
  const tools = registeredTools(registry);
  assertAbortSignal(signal);
  throwIfAborted(signal); // the signal first, then the snapshot
  const result = await completeCall(tools, snapshotToolCall(call), signal);
  throwIfAborted(signal); // the last check, on the very promise the caller holds
  return result;
}

/**
 * A snapshotted call from there on: lookup, validation, execution, publication, with the
 * signal checked at each boundary. Batches enter here with the snapshots they took up front.
 */
export async function completeCall(
  tools: Map<string, CourseTool>,
  call: Readonly<CourseToolCall>,
  signal: AbortSignal,
): Promise<CourseToolResultMessage> {
  throwIfAborted(signal);
  const prepared = prepareToolCall(tools, call, signal);
  if (prepared.kind === "answered") return prepared.result;
  const context = ObjectFreeze({ signal, toolCallId: prepared.call.id });
  const outcome = await runTool(prepared.tool, prepared.args, context);
  // The last check is the caller's (executeToolCall or the batch), on the promise it returns.
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
