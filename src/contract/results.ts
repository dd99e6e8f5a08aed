// Result messages: frozen, and linked to their call by toolCallId, toolName and id.
// docs/contract.md: rule 13 — frozen, linked results (and rule 12 — content cap for errors).
import type { ToolAttachment } from "./attachments.js";
import type { RecoverableToolErrorCode } from "./constants.js";
import { capContent } from "./content.js";
import type { FailureText } from "./failure.js";
import { JSONStringify, ObjectDefineProperty, ObjectFreeze, ObjectHasOwn, ObjectPrototype, RegExpPrototypeExec } from "./primordials.js";

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
 * A promise resolved with an object looks `then` up on it: a `then` planted on
 * Object.prototype would adopt a result instead of handing it over. While one is planted, a
 * result gets an own non-enumerable `then` that is undefined (its keys, JSON and deep equality
 * stay those of a plain object). Only then: defining that property on every result would
 * cost more than the rest of it.
 */
const HIDDEN_THEN: PropertyDescriptor = ObjectFreeze({ __proto__: null, value: undefined }) as PropertyDescriptor;

function isThenPlanted(): boolean {
  return ObjectHasOwn(ObjectPrototype, "then");
}

function seal(result: CourseToolResultMessage): CourseToolResultMessage {
  if (isThenPlanted()) ObjectDefineProperty(result, "then", HIDDEN_THEN);
  return ObjectFreeze(result);
}

/** A frozen result linked to `call`; `attachments` (a frozen list) only when there are some. */
export function toolResultMessage(
  call: ToolCallLink,
  content: string,
  isError: boolean,
  attachments?: readonly ToolAttachment[],
): CourseToolResultMessage {
  const result: CourseToolResultMessage = {
    role: "toolResult",
    id: "tool-result-" + call.id,
    toolCallId: call.id,
    toolName: call.name,
    content,
    isError,
    ...(attachments !== undefined && attachments.length > 0 ? { attachments } : {}),
  };
  return seal(result);
}

/**
 * `result` as it may be handed to a promise now: itself, or, when a `then` was planted on
 * Object.prototype since it was made (by a hook, say), an equal copy that hides it.
 */
export function guardThen(result: CourseToolResultMessage): CourseToolResultMessage {
  if (!isThenPlanted() || ObjectHasOwn(result, "then")) return result;
  const { role, id, toolCallId, toolName, content, isError, attachments } = result;
  return seal({ role, id, toolCallId, toolName, content, isError, ...(attachments === undefined ? {} : { attachments }) });
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
