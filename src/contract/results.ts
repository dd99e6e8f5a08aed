// Result messages: frozen, and linked to their call by toolCallId, toolName and id.
// docs/contract.md: rule 13 — frozen, linked results (and rule 12 — content cap for errors).
import type { ToolAttachment } from "./attachments.js";
import type { RecoverableToolErrorCode } from "./constants.js";
import { capContent } from "./content.js";
import type { FailureText } from "./failure.js";
import { JSONStringify, ObjectDefineProperty, ObjectFreeze, RegExpPrototypeExec } from "./primordials.js";

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
  /**
   * Non-text output (images), frozen; present only when the tool returned at least one, so a
   * text-only result keeps exactly the six fields above.
   */
  readonly attachments?: readonly ToolAttachment[];
}

/** The part of a call a result links to. */
export interface ToolCallLink {
  readonly id: string;
  readonly name: string;
}

/**
 * A result is a frozen instance of this class, whose prototype is Object.prototype plus a
 * non-enumerable `then` that is undefined (and `constructor` Object). A promise resolved with
 * a result looks `then` up on it and finds that one first, so a `then` planted on
 * Object.prototype never adopts a result. The result's own keys, its JSON and (vitest's
 * strict) deep equality are those of a plain object. A class, not an own hidden property:
 * defining a non-enumerable property on every result cost more than the rest of it.
 */
class ResultMessage implements CourseToolResultMessage {
  // Declared in the order a result's keys are listed.
  readonly role: "toolResult";
  readonly id: string;
  readonly toolCallId: string;
  readonly toolName: string;
  readonly content: string;
  readonly isError: boolean;
  declare readonly attachments?: readonly ToolAttachment[];

  constructor(call: ToolCallLink, content: string, isError: boolean) {
    this.role = "toolResult";
    this.id = "tool-result-" + call.id;
    this.toolCallId = call.id;
    this.toolName = call.name;
    this.content = content;
    this.isError = isError;
  }
}
ObjectDefineProperty(ResultMessage.prototype, "then", { value: undefined });
ObjectDefineProperty(ResultMessage.prototype, "constructor", { value: Object });
ObjectFreeze(ResultMessage.prototype);

/** A frozen result linked to `call`; `attachments` (a frozen list) only when there are some. */
export function toolResultMessage(
  call: ToolCallLink,
  content: string,
  isError: boolean,
  attachments?: readonly ToolAttachment[],
): CourseToolResultMessage {
  const result = new ResultMessage(call, content, isError);
  if (attachments !== undefined && attachments.length > 0) {
    ObjectDefineProperty(result, "attachments", { value: attachments, enumerable: true });
  }
  return ObjectFreeze(result);
}

/** Deterministic error content: the code first, so it survives any truncation (cap: 4096 code points by default). */
export function errorContent(code: RecoverableToolErrorCode, failure: FailureText, maxCodePoints?: number): string {
  const json = '{"error":{"code":' + JSONStringify(code) + ',"message":' + JSONStringify(failure.text) + "}}";
  return capContent(json, failure.cut, maxCodePoints);
}

const LEADING_CODE = /^\{"error":\{"code":"([A-Z_]+)"/;

/** The code `errorContent` put first in error content (it survives truncation); undefined for anything else. */
export function errorCodeOf(content: string): string | undefined {
  const match = RegExpPrototypeExec(LEADING_CODE, content);
  return match === null ? undefined : match[1];
}
