// What a call gives back: the frozen, linked result message (rule 13), then the attachments
// (images, audio, files, resource links) a result may carry.
//
// Result messages: frozen, and linked to their call by toolCallId, toolName and id.
// docs/contract.md: rule 13 — frozen, linked results (and rule 12 — content cap for errors).

import { DEFAULT_ATTACHMENT_BUDGETS, type ResolvedAttachmentBudgets } from "./budgets.js";
import { ContractErrorCode, Limits, type RecoverableToolErrorCode } from "./constants.js";
import { ToolContractError } from "./errors.js";
import { describeValue } from "./grammar.js";
import {
  type AttachmentKind,
  type AudioMimeType,
  contentMismatch,
  type FileMimeType,
  type ImageMimeType,
  isMimeTypeOf,
  MAX_FILE_NAME_CHARS,
  MAX_FILE_URI_CHARS,
  MAX_LINK_DESCRIPTION_CHARS,
  MAX_LINK_MIME_TYPE_CHARS,
  MAX_LINK_NAME_CHARS,
  MIME_TYPES_BY_KIND,
} from "./media-types.js";
import {
  ArrayIsArray,
  ArrayPrototypeJoin,
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
import { readOptions } from "./validators.js";

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
   * Non-text output (images, audio, files), frozen; present only when the tool returned at least one, so a
   * text-only result keeps exactly the six fields above.
   */
  readonly attachments?: readonly ToolAttachment[];
  /**
   * Links to resources the result names without carrying them (`resourceLink`), frozen, in the
   * order the tool gave them; present only when it gave at least one. Apart from `attachments`
   * so that every attachment keeps its bytes.
   */
  readonly resourceLinks?: readonly ToolResourceLink[];
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
  attachments?: readonly CarriedAttachment[],
): ToolResultMessage {
  const id = "tool-result-" + call.id;
  // Two literals, not a spread: a spread in the literal makes every result on the slow path.
  if (attachments === undefined || attachments.length === 0) {
    return seal({ role: "toolResult", id, toolCallId: call.id, toolName: call.name, content, isError });
  }
  return seal(withCarried({ role: "toolResult", id, toolCallId: call.id, toolName: call.name, content, isError }, attachments));
}

/** `result` with the carried list split into `attachments` and `resourceLinks`, each only when it has a member. */
function withCarried(
  result: { -readonly [key in keyof ToolResultMessage]: ToolResultMessage[key] },
  carried: readonly CarriedAttachment[],
): ToolResultMessage {
  const attachments: ToolAttachment[] = [];
  const links: ToolResourceLink[] = [];
  for (let index = 0; index < carried.length; index += 1) {
    const member = carried[index] as CarriedAttachment;
    if (member.type === "resourceLink") links[links.length] = member;
    else attachments[attachments.length] = member;
  }
  if (attachments.length > 0) result.attachments = ObjectFreeze(attachments);
  if (links.length > 0) result.resourceLinks = ObjectFreeze(links);
  return result;
}

/**
 * `result` as it may be handed to a promise now: itself, or, when a `then` was planted on
 * Object.prototype since it was made (by a hook, say), an equal copy that hides it.
 */
export function guardThen(result: ToolResultMessage): ToolResultMessage {
  if (!isThenPlanted() || ObjectHasOwn(result, "then")) return result;
  const { role, id, toolCallId, toolName, content, isError, attachments, resourceLinks } = result;
  return seal({
    role,
    id,
    toolCallId,
    toolName,
    content,
    isError,
    ...(attachments === undefined ? {} : { attachments }),
    ...(resourceLinks === undefined ? {} : { resourceLinks }),
  });
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

// Non-text output: a tool returns `imageContent(bytes, mimeType)`, `audioContent(bytes,
// mimeType)`, `fileContent(bytes, { mimeType, name?, uri? })`, or `withAttachments(value,
// [...attachments])`; the result keeps its text `content` (the serialized value) and gains a
// frozen `attachments` list. Only objects made by these functions carry attachments: a
// look-alike `{ type: "image", ... }` is ordinary output for the serializer.
// docs/contract.md: rule 13 — frozen, linked results (a frozen attachments list), and
// Attachments: images, audio and files; docs/operations.md — Images and other attachments.

/** An image: its bytes, and their media type (checked by type only). */
export interface ToolImageAttachment {
  readonly type: "image";
  readonly mimeType: ImageMimeType;
  readonly data: Uint8Array;
}

/** A sound recording: its bytes start with the signature of `mimeType`. */
export interface ToolAudioAttachment {
  readonly type: "audio";
  readonly mimeType: AudioMimeType;
  readonly data: Uint8Array;
}

/**
 * A document: a PDF (its bytes start with `%PDF-`) or UTF-8 text. `name` (a file name) and
 * `uri` (what MCP calls the resource's URI) are present only when the tool gave them.
 */
export interface ToolFileAttachment {
  readonly type: "file";
  readonly mimeType: FileMimeType;
  readonly data: Uint8Array;
  readonly name?: string;
  readonly uri?: string;
}

/**
 * A link to a resource the tool does not carry (MCP's `resource_link`): its URI and name, and
 * its media type and a description when the tool gave them. Frozen. No bytes: it counts
 * towards the attachment budget's number of attachments, not its bytes.
 */
export interface ToolResourceLink {
  readonly type: "resourceLink";
  readonly uri: string;
  readonly name: string;
  readonly mimeType?: string;
  readonly description?: string;
}

/**
 * One piece of non-text output. Frozen; `data` is toolgate's own copy of the bytes, in an
 * ArrayBuffer of exactly its size (so a worker can transfer it); a published result's is its
 * own (adoptAttachments). A Uint8Array cannot be frozen: writing into `data` changes only
 * this result's copy.
 */
export type ToolAttachment = ToolImageAttachment | ToolAudioAttachment | ToolFileAttachment;

/**
 * What a tool's output carries besides its text, as it travels to the result (across a thread,
 * Redis, a durable store): attachments and resource links in one list, in the tool's order.
 * The result message splits them (`attachments`, `resourceLinks`).
 */
export type CarriedAttachment = ToolAttachment | ToolResourceLink;

export type { AudioMimeType, FileMimeType, ImageMimeType };

/** What a tool returns to have both text (the serialized `value`) and attachments. Opaque. */
export interface ToolOutputWithAttachments {
  readonly [outputBrand]: true;
}
declare const outputBrand: unique symbol;

const madeAttachments = new WeakSet<object>();
const madeOutputs = new WeakMap<object, { readonly value: unknown; readonly attachments: readonly CarriedAttachment[] }>();

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
  return made("image", "imageContent", bytes, mimeType, undefined, undefined);
}

/**
 * An audio attachment: as `imageContent`, for `audio/wav`, `audio/mpeg`, `audio/ogg` or
 * `audio/flac`; the bytes must start with that format's signature (RIFF…WAVE, an ID3 tag or
 * an MPEG frame, OggS, fLaC), else ToolContractError(INVALID_ARGUMENT) naming what they are not.
 */
export function audioContent(bytes: Uint8Array, mimeType: AudioMimeType): ToolAttachment;
export function audioContent(bytes: unknown, mimeType: unknown): ToolAttachment;
export function audioContent(bytes: unknown, mimeType: unknown): ToolAttachment {
  return made("audio", "audioContent", bytes, mimeType, undefined, undefined);
}

/** How a file attachment is described: its media type, and optionally a file name and a URI. */
export interface FileContentOptions {
  /** `application/pdf` (bytes starting `%PDF-`), or `text/plain`, `text/markdown`, `text/csv`, `application/json` (well-formed UTF-8). */
  readonly mimeType: FileMimeType;
  /** A file name: 1 to 255 characters, no path separator, no control character. */
  readonly name?: string;
  /** The document's URI (`scheme:…`, at most 2048 characters, no space or control character); MCP shows it as the resource's `uri`. */
  readonly uri?: string;
}

/**
 * A file attachment (a document): as `imageContent`, with `options` (own data properties,
 * no others) naming its media type and optionally its name and URI. Throws
 * ToolContractError(INVALID_ARGUMENT) for anything else, or for bytes that are not what
 * `mimeType` says.
 */
export function fileContent(bytes: Uint8Array, options: FileContentOptions): ToolAttachment;
export function fileContent(bytes: unknown, options: unknown): ToolAttachment;
export function fileContent(bytes: unknown, options: unknown): ToolAttachment {
  const read = readOptions(options, "fileContent: options", FILE_OPTION_KEYS);
  return made("file", "fileContent", bytes, read.mimeType, read.name, read.uri);
}

const FILE_OPTION_KEYS: readonly ("mimeType" | "name" | "uri")[] = ["mimeType", "name", "uri"];

/** A resource link, as `resourceLink` takes it. */
export interface ResourceLinkOptions {
  /** The resource's URI (`scheme:…`, at most 2048 characters, no space or control character; not javascript:, vbscript: or data:). */
  readonly uri: string;
  /** Its name: 1 to 255 characters, no control character. */
  readonly name: string;
  /** Its media type (`type/subtype`, lower case, at most 127 characters), when known. */
  readonly mimeType?: string;
  /** What it is: 1 to 1024 characters, no control character but line feed and tab. */
  readonly description?: string;
}

/**
 * A link to a resource (MCP's `resource_link`): `options` (own data properties, no others)
 * give its URI and name, and optionally its media type and a description. Carries no bytes;
 * counts towards the call's `maxAttachments`. Throws ToolContractError(INVALID_ARGUMENT)
 * naming the field for anything else.
 */
export function resourceLink(options: ResourceLinkOptions): ToolResourceLink;
export function resourceLink(options: unknown): ToolResourceLink;
export function resourceLink(options: unknown): ToolResourceLink {
  const { uri, name, mimeType, description } = readOptions(options, "resourceLink: options", LINK_OPTION_KEYS);
  if (uri === undefined) invalid("resourceLink: uri is required");
  if (name === undefined) invalid("resourceLink: name is required");
  const problem = linkProblem(uri, name, mimeType, description);
  if (problem !== undefined) invalid(`resourceLink: ${problem.field} must be ${problem.reason} (got ${describeMime(problem.value)})`);
  return brandLink(uri as string, name as string, mimeType as string | undefined, description as string | undefined);
}

const LINK_OPTION_KEYS: readonly ("uri" | "name" | "mimeType" | "description")[] = ["uri", "name", "mimeType", "description"];

/**
 * A resource link read from another thread, process or Redis, its fields given apart (absent:
 * undefined): a plain record when each is a string within its limit (the URI and the name not
 * empty), else undefined. Bounds only: whoever adopts it checks it whole (linkProblem).
 */
export function linkWithinLimits(uri: unknown, name: unknown, mimeType: unknown, description: unknown): ToolResourceLink | undefined {
  if (typeof uri !== "string" || uri.length === 0 || uri.length > MAX_FILE_URI_CHARS) return undefined;
  if (typeof name !== "string" || name.length === 0 || name.length > MAX_LINK_NAME_CHARS) return undefined;
  if (!(mimeType === undefined || (typeof mimeType === "string" && mimeType.length <= MAX_LINK_MIME_TYPE_CHARS))) return undefined;
  if (!(description === undefined || (typeof description === "string" && description.length <= MAX_LINK_DESCRIPTION_CHARS)))
    return undefined;
  const link: { -readonly [key in keyof ToolResourceLink]: ToolResourceLink[key] } = { type: "resourceLink", uri, name };
  if (mimeType !== undefined) link.mimeType = mimeType;
  if (description !== undefined) link.description = description;
  return link;
}

// A media type's two tokens (RFC 6838's restricted names), lower case, no parameters.
const LINK_MIME_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;
const CONTROL = /\p{Cc}/u;
// Control characters but line feed and tab.
const DESCRIPTION_CONTROL = /[^\P{Cc}\n\t]/u;

/** What is wrong with a resource link's fields (the first that is), or undefined. */
function linkProblem(
  uri: unknown,
  name: unknown,
  mimeType: unknown,
  description: unknown,
): { field: string; reason: string; value: unknown } | undefined {
  const uriReason = uriProblem(uri);
  if (uriReason !== undefined) return { field: "uri", reason: uriReason, value: uri };
  if (typeof name !== "string" || name.length === 0 || name.length > MAX_LINK_NAME_CHARS || RegExpPrototypeExec(CONTROL, name) !== null) {
    return { field: "name", reason: `a string of 1 to ${MAX_LINK_NAME_CHARS} characters without a control character`, value: name };
  }
  if (
    mimeType !== undefined &&
    (typeof mimeType !== "string" || mimeType.length > MAX_LINK_MIME_TYPE_CHARS || RegExpPrototypeExec(LINK_MIME_TYPE, mimeType) === null)
  ) {
    return {
      field: "mimeType",
      reason: `a media type (type/subtype, lower case) of at most ${MAX_LINK_MIME_TYPE_CHARS} characters`,
      value: mimeType,
    };
  }
  if (
    description !== undefined &&
    (typeof description !== "string" ||
      description.length === 0 ||
      description.length > MAX_LINK_DESCRIPTION_CHARS ||
      RegExpPrototypeExec(DESCRIPTION_CONTROL, description) !== null)
  ) {
    return {
      field: "description",
      reason: `a string of 1 to ${MAX_LINK_DESCRIPTION_CHARS} characters without a control character but line feed and tab`,
      value: description,
    };
  }
  return undefined;
}

function made(kind: AttachmentKind, api: string, bytes: unknown, mimeType: unknown, name: unknown, uri: unknown): ToolAttachment {
  if (!isMimeTypeOf(kind, mimeType)) {
    invalid(`${api}: mimeType must be one of ${ArrayPrototypeJoin(MIME_TYPES_BY_KIND[kind], ", ")} (got ${describeMime(mimeType)})`);
  }
  if (!isUint8Array(bytes) || isProxy(bytes)) invalid(`${api}: bytes must be a Uint8Array (got ${describeValue(bytes)})`);
  const length = TypedArrayPrototypeGetLength(bytes);
  if (length === 0) invalid(`${api}: bytes is empty`);
  if (length > Limits.ATTACHMENT_BYTES_LIMIT) {
    invalid(`${api}: ${length} bytes is over the ${Limits.ATTACHMENT_BYTES_LIMIT}-byte attachment limit`);
  }
  const fileName = describeFileName(name, api);
  const fileUri = describeUri(uri, api);
  // Copied before it is checked: what is checked is what is published.
  const copy = copyOf(bytes);
  const mismatch = contentMismatch(mimeType as string, copy);
  if (mismatch !== undefined) invalid(`${api}: the bytes are not ${mismatch}, as mimeType ${describeMime(mimeType)} says`);
  return brand(kind, mimeType as string, copy, fileName, fileUri);
}

// Control characters (C0, DEL, C1) and path separators: a name is a name, never a path.
const BAD_NAME = /[\p{Cc}/\\]/u;
const URI = /^[A-Za-z][A-Za-z0-9+.-]*:[^\p{Cc} ]+$/u;
// Schemes a client would run or render inline if it followed the link: never a document's URI.
const ACTIVE_SCHEME = /^(?:javascript|vbscript|data):/i;

function describeFileName(name: unknown, api: string): string | undefined {
  if (name === undefined) return undefined;
  const reason = nameProblem(name);
  if (reason !== undefined) invalid(`${api}: name must be ${reason} (got ${describeMime(name)})`);
  return name as string;
}

function describeUri(uri: unknown, api: string): string | undefined {
  if (uri === undefined) return undefined;
  const reason = uriProblem(uri);
  if (reason !== undefined) invalid(`${api}: uri must be ${reason} (got ${describeMime(uri)})`);
  return uri as string;
}

function nameProblem(name: unknown): string | undefined {
  if (typeof name !== "string" || name.length === 0 || name.length > MAX_FILE_NAME_CHARS || RegExpPrototypeExec(BAD_NAME, name) !== null) {
    return `a file name of 1 to ${MAX_FILE_NAME_CHARS} characters, without a path separator or a control character`;
  }
  return undefined;
}

function uriProblem(uri: unknown): string | undefined {
  if (
    typeof uri !== "string" ||
    uri.length > MAX_FILE_URI_CHARS ||
    RegExpPrototypeExec(URI, uri) === null ||
    RegExpPrototypeExec(ACTIVE_SCHEME, uri) !== null
  ) {
    return `an absolute URI (scheme:…, not javascript:, vbscript: or data:) of at most ${MAX_FILE_URI_CHARS} characters, without a space or a control character`;
  }
  return undefined;
}

/** The bytes an attachment carries (a resource link: none). */
export function attachmentBytes(attachment: CarriedAttachment): number {
  return attachment.type === "resourceLink" ? 0 : TypedArrayPrototypeGetLength(attachment.data);
}

/** The bytes in a buffer of their own, exactly their size (so a worker can transfer it). */
function copyOf(bytes: Uint8Array): Uint8Array {
  const copy = new NativeUint8Array(TypedArrayPrototypeGetLength(bytes));
  TypedArrayPrototypeSet(copy, bytes);
  return copy;
}

/**
 * Output with text and attachments: `value` is serialized into the result's `content` as
 * any output is; `attachments` (made by `imageContent`, `audioContent` or `fileContent`, at
 * most Limits.ATTACHMENTS_LIMIT, Limits.ATTACHMENT_BYTES_LIMIT in total; the call's
 * attachment budgets apply to its result) become the result's `attachments`. The list is
 * read by index once, now.
 */
export function withAttachments(value: unknown, attachments: readonly (ToolAttachment | ToolResourceLink)[]): ToolOutputWithAttachments {
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
): { readonly value: unknown; readonly attachments: readonly CarriedAttachment[] | undefined } | undefined {
  if (typeof output !== "object" || output === null) return undefined;
  if (WeakSetPrototypeHas(madeAttachments, output)) return { value: undefined, attachments: ObjectFreeze([output as CarriedAttachment]) };
  return WeakMapPrototypeGet(madeOutputs, output);
}

/**
 * Attachments as they come back from an executor's runner, for one result: made here (the
 * tool still holds them and may return them again, so each result gets its own copy of the
 * bytes), or plain `{ type, mimeType, data, name?, uri? }` records rebuilt after crossing a
 * thread or Redis (their bytes were transferred into a buffer nothing else references, so they
 * are adopted without a copy, after the same checks a tool's attachment passes). The whole
 * list is checked against `budgets`. Gives the frozen list, or a message saying what is wrong.
 */
export function adoptAttachments(
  attachments: unknown,
  budgets: ResolvedAttachmentBudgets = DEFAULT_ATTACHMENT_BUDGETS,
): readonly CarriedAttachment[] | string {
  return checkedList(attachments, "the runner's attachments", budgets, adoptOne);
}

/** A tool's attachments (already made here) against the call's budgets; undefined when within them, else why not. */
export function checkAttachments(attachments: readonly CarriedAttachment[], budgets: ResolvedAttachmentBudgets): string | undefined {
  const length = attachments.length;
  if (length > budgets.maxAttachments) {
    return `${length} attachments is over the limit of ${budgets.maxAttachments} (attachment budget maxAttachments)`;
  }
  let bytes = 0;
  for (let index = 0; index < length; index += 1) bytes += attachmentBytes(attachments[index] as CarriedAttachment);
  if (bytes > budgets.maxAttachmentBytes) {
    return `the attachments' ${bytes} bytes are over the ${budgets.maxAttachmentBytes}-byte budget in total (attachment budget maxAttachmentBytes)`;
  }
  return undefined;
}

function adoptOne(record: object): CarriedAttachment | undefined {
  if (WeakSetPrototypeHas(madeAttachments, record)) {
    const made = record as CarriedAttachment;
    // A link holds no bytes, and is frozen: the very one may be on many results.
    if (made.type === "resourceLink") return made;
    // Emptied since it was checked (the tool detached its buffer): nothing left to publish.
    if (TypedArrayPrototypeGetLength(made.data) === 0) return undefined;
    return brand(made.type, made.mimeType, copyOf(made.data), fileNameOf(made), fileUriOf(made));
  }
  const type = readOwnDataProperty(record, "type");
  const mimeType = readOwnDataProperty(record, "mimeType");
  const name = readOwnDataProperty(record, "name");
  const uri = readOwnDataProperty(record, "uri");
  if (type === "resourceLink") {
    const description = readOwnDataProperty(record, "description");
    if (readOwnDataProperty(record, "data") !== undefined || linkProblem(uri, name, mimeType, description) !== undefined) return undefined;
    return brandLink(uri as string, name as string, mimeType as string | undefined, description as string | undefined);
  }
  const data = readOwnDataProperty(record, "data");
  if (type !== "image" && type !== "audio" && type !== "file") return undefined;
  if (!isMimeTypeOf(type, mimeType)) return undefined;
  if (!isUint8Array(data) || isProxy(data) || TypedArrayPrototypeGetLength(data) === 0) return undefined;
  if (type !== "file" && (name !== undefined || uri !== undefined)) return undefined;
  if ((name !== undefined && nameProblem(name) !== undefined) || (uri !== undefined && uriProblem(uri) !== undefined)) return undefined;
  if (contentMismatch(mimeType as string, data as Uint8Array) !== undefined) return undefined;
  return brand(type, mimeType as string, data as Uint8Array, name as string | undefined, uri as string | undefined);
}

function fileNameOf(attachment: ToolAttachment): string | undefined {
  return attachment.type === "file" ? attachment.name : undefined;
}

function fileUriOf(attachment: ToolAttachment): string | undefined {
  return attachment.type === "file" ? attachment.uri : undefined;
}

/** A frozen copy of the list, each member made here (or adopted), within the budgets; else why not. */
function checkedList(
  attachments: unknown,
  what: string,
  budgets: ResolvedAttachmentBudgets,
  admit: (record: object) => CarriedAttachment | undefined = madeHere,
): readonly CarriedAttachment[] | string {
  if (!ArrayIsArray(attachments) || isProxy(attachments)) return `${what} must be an array (got ${describeValue(attachments)})`;
  const length = attachments.length;
  if (length > budgets.maxAttachments) return `${what}: ${length} attachments is over the limit of ${budgets.maxAttachments}`;
  const list: CarriedAttachment[] = [];
  let bytes = 0;
  for (let index = 0; index < length; index += 1) {
    const member = readOwnDataProperty(attachments, String(index));
    const attachment = typeof member === "object" && member !== null && !isProxy(member) ? admit(member) : undefined;
    if (attachment === undefined) {
      return `${what}: [${index}] is not an attachment made by imageContent, audioContent, fileContent or resourceLink (got ${describeValue(member)})`;
    }
    bytes += attachmentBytes(attachment);
    if (bytes > budgets.maxAttachmentBytes) {
      return `${what}: the attachments are over the ${budgets.maxAttachmentBytes}-byte budget in total`;
    }
    list[index] = attachment;
  }
  return ObjectFreeze(list);
}

function madeHere(record: object): CarriedAttachment | undefined {
  return WeakSetPrototypeHas(madeAttachments, record) ? (record as CarriedAttachment) : undefined;
}

/** A frozen resource link; `mimeType` and `description` are own properties only when given. */
function brandLink(uri: string, name: string, mimeType: string | undefined, description: string | undefined): ToolResourceLink {
  const record: { type: "resourceLink"; uri: string; name: string; mimeType?: string; description?: string } = {
    type: "resourceLink",
    uri,
    name,
  };
  if (mimeType !== undefined) record.mimeType = mimeType;
  if (description !== undefined) record.description = description;
  const attachment = ObjectFreeze(record);
  WeakSetPrototypeAdd(madeAttachments, attachment);
  return attachment;
}

/** A frozen attachment; a file's `name` and `uri` are own properties only when given (an image keeps exactly three). */
function brand(
  type: AttachmentKind,
  mimeType: string,
  data: Uint8Array,
  name: string | undefined,
  uri: string | undefined,
): ToolAttachment {
  const record: { type: AttachmentKind; mimeType: string; data: Uint8Array; name?: string; uri?: string } = { type, mimeType, data };
  if (name !== undefined) record.name = name;
  if (uri !== undefined) record.uri = uri;
  const attachment = ObjectFreeze(record) as ToolAttachment;
  WeakSetPrototypeAdd(madeAttachments, attachment);
  return attachment;
}

function describeMime(value: unknown): string {
  return typeof value === "string" ? JSONStringify(StringPrototypeSlice(value, 0, 64)) : describeValue(value);
}

function invalid(message: string): never {
  throw new ToolContractError(ContractErrorCode.INVALID_ARGUMENT, message);
}
