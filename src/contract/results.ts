// Result messages: frozen, and linked to their call by toolCallId, toolName and id.
import type { RecoverableToolErrorCode } from "./constants.js";
import { capContent } from "./content.js";
import type { FailureText } from "./failure.js";
import { JSONStringify, ObjectFreeze } from "./primordials.js";

/** The transcript entry for one tool call. Frozen. */
export interface CourseToolResultMessage {
  readonly role: "toolResult";
  /** Exactly `tool-result-${toolCall.id}`. */
  readonly id: string;
  readonly toolCallId: string;
  readonly toolName: string;
  /** At most 4096 Unicode code points; error content is `{"error":{"code","message"}}` JSON. */
  readonly content: string;
  /** True for recoverable errors the model should read and react to. */
  readonly isError: boolean;
}

/** The part of a call a result links to. */
export interface ToolCallLink {
  readonly id: string;
  readonly name: string;
}

/** A frozen result linked to `call`. */
export function toolResultMessage(call: ToolCallLink, content: string, isError: boolean): CourseToolResultMessage {
  return ObjectFreeze({
    role: "toolResult",
    id: "tool-result-" + call.id,
    toolCallId: call.id,
    toolName: call.name,
    content,
    isError,
  });
}

/** Deterministic error content: the code first, so it survives any truncation (cap: 4096 code points by default). */
export function errorContent(code: RecoverableToolErrorCode, failure: FailureText, maxCodePoints?: number): string {
  const json = '{"error":{"code":' + JSONStringify(code) + ',"message":' + JSONStringify(failure.text) + "}}";
  return capContent(json, failure.cut, maxCodePoints);
}
