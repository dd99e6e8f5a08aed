// What a call gives back: the frozen, linked result message (rule 13), then the attachments
// (images) a result may carry.
//
// Result messages: frozen, and linked to their call by toolCallId, toolName and id.
// docs/contract.md: rule 13 — frozen, linked results (and rule 12 — content cap for errors).

import { DEFAULT_ATTACHMENT_BUDGETS, type ResolvedAttachmentBudgets } from "./budgets.js";
import { ContractErrorCode, Limits, type RecoverableToolErrorCode } from "./constants.js";
import { ToolContractError } from "./errors.js";
import { describeValue } from "./grammar.js";
import {
  ArrayIsArray,
  isProxy,
  isUint8Array,
  JSONStringify,
  NativeUint8Array,
  ObjectDefineProperty,
  ObjectFreeze,
  ObjectHasOwn,
  ObjectPrototype,
  RegExpPrototypeExec,
  StringPrototypeSlice,
  TypedArrayPrototypeGetLength,
  TypedArrayPrototypeSet,
  WeakMapPrototypeGet,
  WeakMapPrototypeSet,
  WeakSetPrototypeAdd,
  WeakSetPrototypeHas,
} from "./primordials.js";
import { capContent } from "./serialize.js";
import { type FailureText, readOwnDataProperty } from "./untrusted.js";

/** The transcript entry for one tool call. Frozen. */
export interface ToolResultMessage {
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

function seal(result: ToolResultMessage): ToolResultMessage {
  if (isThenPlanted()) ObjectDefineProperty(result, "then", HIDDEN_THEN);
  return ObjectFreeze(result);
}

/** A frozen result linked to `call`; `attachments` (a frozen list) only when there are some. */
export function toolResultMessage(
  call: ToolCallLink,
  content: string,
  isError: boolean,
  attachments?: readonly ToolAttachment[],
): ToolResultMessage {
  const id = "tool-result-" + call.id;
  // Two literals, not a spread: a spread in the literal makes every result on the slow path.
  return seal(
    attachments !== undefined && attachments.length > 0
      ? { role: "toolResult", id, toolCallId: call.id, toolName: call.name, content, isError, attachments }
      : { role: "toolResult", id, toolCallId: call.id, toolName: call.name, content, isError },
  );
}

/**
 * `result` as it may be handed to a promise now: itself, or, when a `then` was planted on
 * Object.prototype since it was made (by a hook, say), an equal copy that hides it.
 */
export function guardThen(result: ToolResultMessage): ToolResultMessage {
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

// Non-text output: a tool returns `imageContent(bytes, mimeType)`, or
// `withAttachments(value, [...images])`; the result keeps its text `content` (the serialized
// value) and gains a frozen `attachments` list. Only objects made by these functions carry
// attachments: a look-alike `{ type: "image", ... }` is ordinary output for the serializer.
// docs/contract.md: rule 13 — frozen, linked results (a frozen attachments list); docs/operations.md — Images and other attachments.

/** Image formats the model providers accept. SVG is left out: it is a document that can carry script. */
export type ImageMimeType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";
function isImageMimeType(value: unknown): value is ImageMimeType {
  return value === "image/png" || value === "image/jpeg" || value === "image/gif" || value === "image/webp";
}

/**
 * One piece of non-text output. Frozen; `data` is toolgate's own copy of the bytes, in an
 * ArrayBuffer of exactly its size (so a worker can transfer it); a published result's is its
 * own (adoptAttachments). A Uint8Array cannot be frozen: writing into `data` changes only
 * this result's copy.
 */
export interface ToolAttachment {
  readonly type: "image";
  readonly mimeType: ImageMimeType;
  readonly data: Uint8Array;
}

/** What a tool returns to have both text (the serialized `value`) and attachments. Opaque. */
export interface ToolOutputWithAttachments {
  readonly [outputBrand]: true;
}
declare const outputBrand: unique symbol;

const madeAttachments = new WeakSet<object>();
const madeOutputs = new WeakMap<object, { readonly value: unknown; readonly attachments: readonly ToolAttachment[] }>();

// The constructors know no executor: they refuse only what no budget admits (the limits);
// the call's own budgets (the tool's over the executor's, default 16 and 8 MiB) are checked
// when the result is made (checkAttachments) and again on the calling thread (adoptAttachments).
const CONSTRUCTOR_LIMITS: ResolvedAttachmentBudgets = ObjectFreeze({
  maxAttachments: Limits.ATTACHMENTS_LIMIT,
  maxAttachmentBytes: Limits.ATTACHMENT_BYTES_LIMIT,
});

/**
 * An image attachment. `bytes` must be a Uint8Array (a Buffer is one) of 1 to
 * Limits.ATTACHMENT_BYTES_LIMIT bytes (the call's attachment budgets, 8 MiB by default,
 * apply to its result); it is copied now, so later writes to it change nothing. `mimeType` is one of `image/png`, `image/jpeg`, `image/gif`, `image/webp`.
 * Anything else throws ToolContractError(INVALID_ARGUMENT) (inside a tool: its call becomes
 * a TOOL_EXECUTION_FAILED result naming the problem).
 */
export function imageContent(bytes: Uint8Array, mimeType: ImageMimeType): ToolAttachment;
export function imageContent(bytes: unknown, mimeType: unknown): ToolAttachment;
export function imageContent(bytes: unknown, mimeType: unknown): ToolAttachment {
  if (!isImageMimeType(mimeType)) {
    invalid(`imageContent: mimeType must be one of image/png, image/jpeg, image/gif, image/webp (got ${describeMime(mimeType)})`);
  }
  if (!isUint8Array(bytes) || isProxy(bytes)) invalid(`imageContent: bytes must be a Uint8Array (got ${describeValue(bytes)})`);
  const length = TypedArrayPrototypeGetLength(bytes);
  if (length === 0) invalid("imageContent: bytes is empty");
  if (length > Limits.ATTACHMENT_BYTES_LIMIT) {
    invalid(`imageContent: ${length} bytes is over the ${Limits.ATTACHMENT_BYTES_LIMIT}-byte attachment limit`);
  }
  return brand(mimeType, copyOf(bytes));
}

/** The bytes in a buffer of their own, exactly their size (so a worker can transfer it). */
function copyOf(bytes: Uint8Array): Uint8Array {
  const copy = new NativeUint8Array(TypedArrayPrototypeGetLength(bytes));
  TypedArrayPrototypeSet(copy, bytes);
  return copy;
}

/**
 * Output with text and attachments: `value` is serialized into the result's `content` as
 * any output is; `attachments` (made by `imageContent`, at most Limits.ATTACHMENTS_LIMIT,
 * Limits.ATTACHMENT_BYTES_LIMIT in total; the call's attachment budgets apply to its
 * result) become the result's `attachments`. The list is read by index once, now.
 */
export function withAttachments(value: unknown, attachments: readonly ToolAttachment[]): ToolOutputWithAttachments {
  const list = checkedList(attachments, "withAttachments", CONSTRUCTOR_LIMITS);
  if (typeof list === "string") invalid(list);
  const output = ObjectFreeze({}) as ToolOutputWithAttachments;
  WeakMapPrototypeSet(madeOutputs, output, { value, attachments: list });
  return output;
}

/**
 * A tool's output split into the value to serialize and its attachments; undefined for plain
 * output (the common case allocates nothing).
 */
export function splitOutput(
  output: unknown,
): { readonly value: unknown; readonly attachments: readonly ToolAttachment[] | undefined } | undefined {
  if (typeof output !== "object" || output === null) return undefined;
  if (WeakSetPrototypeHas(madeAttachments, output)) return { value: undefined, attachments: ObjectFreeze([output as ToolAttachment]) };
  return WeakMapPrototypeGet(madeOutputs, output);
}

/**
 * Attachments as they come back from an executor's runner, for one result: made here (the
 * tool still holds them and may return them again, so each result gets its own copy of the
 * bytes), or plain `{ type, mimeType, data }` records rebuilt after crossing a thread (their
 * bytes were transferred into a buffer nothing else references, so they are adopted without
 * a copy). The whole list is checked against `budgets`. Gives the frozen list, or a message
 * saying what is wrong.
 */
export function adoptAttachments(
  attachments: unknown,
  budgets: ResolvedAttachmentBudgets = DEFAULT_ATTACHMENT_BUDGETS,
): readonly ToolAttachment[] | string {
  return checkedList(attachments, "the runner's attachments", budgets, adoptOne);
}

/** A tool's attachments (already made here) against the call's budgets; undefined when within them, else why not. */
export function checkAttachments(attachments: readonly ToolAttachment[], budgets: ResolvedAttachmentBudgets): string | undefined {
  const length = attachments.length;
  if (length > budgets.maxAttachments) {
    return `${length} attachments is over the limit of ${budgets.maxAttachments} (attachment budget maxAttachments)`;
  }
  let bytes = 0;
  for (let index = 0; index < length; index += 1) bytes += TypedArrayPrototypeGetLength((attachments[index] as ToolAttachment).data);
  if (bytes > budgets.maxAttachmentBytes) {
    return `the attachments' ${bytes} bytes are over the ${budgets.maxAttachmentBytes}-byte budget in total (attachment budget maxAttachmentBytes)`;
  }
  return undefined;
}

function adoptOne(record: object): ToolAttachment | undefined {
  if (WeakSetPrototypeHas(madeAttachments, record)) {
    const made = record as ToolAttachment;
    // Emptied since it was checked (the tool detached its buffer): nothing left to publish.
    return TypedArrayPrototypeGetLength(made.data) === 0 ? undefined : brand(made.mimeType, copyOf(made.data));
  }
  const type = readOwnDataProperty(record, "type");
  const mimeType = readOwnDataProperty(record, "mimeType");
  const data = readOwnDataProperty(record, "data");
  if (type !== "image" || !isImageMimeType(mimeType)) return undefined;
  if (!isUint8Array(data) || isProxy(data) || TypedArrayPrototypeGetLength(data) === 0) return undefined;
  return brand(mimeType, data as Uint8Array);
}

/** A frozen copy of the list, each member made here (or adopted), within the budgets; else why not. */
function checkedList(
  attachments: unknown,
  what: string,
  budgets: ResolvedAttachmentBudgets,
  admit: (record: object) => ToolAttachment | undefined = madeHere,
): readonly ToolAttachment[] | string {
  if (!ArrayIsArray(attachments) || isProxy(attachments)) return `${what} must be an array (got ${describeValue(attachments)})`;
  const length = attachments.length;
  if (length > budgets.maxAttachments) return `${what}: ${length} attachments is over the limit of ${budgets.maxAttachments}`;
  const list: ToolAttachment[] = [];
  let bytes = 0;
  for (let index = 0; index < length; index += 1) {
    const member = readOwnDataProperty(attachments, String(index));
    const attachment = typeof member === "object" && member !== null && !isProxy(member) ? admit(member) : undefined;
    if (attachment === undefined) return `${what}: [${index}] is not an attachment made by imageContent (got ${describeValue(member)})`;
    bytes += TypedArrayPrototypeGetLength(attachment.data);
    if (bytes > budgets.maxAttachmentBytes) {
      return `${what}: the attachments are over the ${budgets.maxAttachmentBytes}-byte budget in total`;
    }
    list[index] = attachment;
  }
  return ObjectFreeze(list);
}

function madeHere(record: object): ToolAttachment | undefined {
  return WeakSetPrototypeHas(madeAttachments, record) ? (record as ToolAttachment) : undefined;
}

function brand(mimeType: ImageMimeType, data: Uint8Array): ToolAttachment {
  const attachment: ToolAttachment = ObjectFreeze({ type: "image", mimeType, data });
  WeakSetPrototypeAdd(madeAttachments, attachment);
  return attachment;
}

function describeMime(value: unknown): string {
  return typeof value === "string" ? JSONStringify(StringPrototypeSlice(value, 0, 64)) : describeValue(value);
}

function invalid(message: string): never {
  throw new ToolContractError(ContractErrorCode.INVALID_ARGUMENT, message);
}
