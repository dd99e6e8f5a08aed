// A durable call's record: its states, its stored outcome, and the one reader of what a store
// gives back. A Redis record is untrusted (anyone who can write to the server could have
// written it), so every record, from either store, is decoded here: each field checked and
// bounded before it is used, nothing thrown (what is not well-formed is a damaged record).
// docs/durable.md — Records, and what a party with write access to Redis can do.
import { Limits } from "../contract/constants.js";
import {
  type AttachmentKind,
  isMimeTypeOf,
  MAX_FILE_NAME_CHARS,
  MAX_FILE_URI_CHARS,
  MAX_LINK_DESCRIPTION_CHARS,
  MAX_LINK_MIME_TYPE_CHARS,
  MAX_LINK_NAME_CHARS,
} from "../contract/media-types.js";
import {
  ArrayIsArray,
  JSONParse,
  JSONStringify,
  NumberIsSafeInteger,
  ObjectFreeze,
  StringPrototypeCharCodeAt,
  TypedArrayPrototypeGetLength,
} from "../contract/primordials.js";
import { type CarriedAttachment, linkWithinLimits, type ToolResourceLink } from "../contract/results.js";
import { MAX_DURABLE_ATTEMPTS } from "../contract/tools.js";

/**
 * Where a key stands. "claimed": an executor claimed it and asks beforeExecute before the tool
 * starts; "running": the tool started, its executor holds the lease; "done": its
 * outcome is kept; "lost": an execution ended without an outcome (its process died or its
 * lease ran out, or it was stopped mid-run); "released": claimed, then given up before the
 * tool started.
 */
export type DurableState = "claimed" | "running" | "done" | "lost" | "released";

/** What a done record keeps: a result's content (and attachments), or a NonRecoverableToolError's message. */
export type StoredOutcome =
  | {
      readonly fatal: false;
      readonly content: string;
      readonly isError: boolean;
      readonly attachments: readonly StoredAttachment[] | undefined;
    }
  | { readonly fatal: true; readonly message: string };

/**
 * An attachment as a record holds it, decoded: an image, audio or a file of a type toolgate
 * carries, and a file's name and URI when it has them; or a resource link's fields. The adopter
 * (adoptAttachments) checks it again, its bytes against its type included, before a replay hands it out.
 */
export type StoredAttachment = StoredBytes | ToolResourceLink;

/** An image, audio or file as a record holds it. */
export interface StoredBytes {
  readonly type: AttachmentKind;
  readonly mimeType: string;
  readonly data: Uint8Array;
  readonly name?: string;
  readonly uri?: string;
}

/** A record as read, checked. */
export interface DurableRecord {
  readonly state: DurableState;
  readonly fingerprint: string;
  readonly toolName: string;
  /** The attempt the record is at (1-based). */
  readonly attempt: number;
  /** Attempts the tool allowed when it was claimed (1 for at-most-once). */
  readonly maxAttempts: number;
  /** A done record's outcome; for any other state, undefined. */
  readonly outcome: StoredOutcome | undefined;
}

/** The longest tool name a record may hold (a name is checked, never trusted to be short). */
export const MAX_STORED_TOOL_NAME = 4096;
/** The longest content a stored outcome may hold: the largest content budget an executor may set. */
const MAX_STORED_CONTENT = 16_777_216 * 2;
const MAX_STORED_MESSAGE = 1_048_576;
/** What an attachment adds to an encoded outcome besides its base64: its kind, type, name and URI, or a link's fields (each character of them escaped by JSON at worst). */
const STORED_ATTACHMENT_OVERHEAD =
  64 +
  (Math.max(MAX_FILE_NAME_CHARS, MAX_LINK_NAME_CHARS + MAX_LINK_DESCRIPTION_CHARS + MAX_LINK_MIME_TYPE_CHARS) + MAX_FILE_URI_CHARS) * 6;

/** The encoded form of an outcome (what a store keeps, as a string). */
export function encodeOutcome(outcome: StoredOutcome): string {
  if (outcome.fatal) return JSONStringify({ k: "f", m: outcome.message });
  const attachments = outcome.attachments;
  // Each attachment as [kind, media type, base64, name or null, URI or null]; a resource link as
  // ["resourceLink", media type or null, null, name, URI, description or null].
  const encoded: (string | null)[][] = [];
  if (attachments !== undefined) {
    for (let index = 0; index < attachments.length; index += 1) {
      const attachment = attachments[index] as StoredAttachment;
      if (attachment.type === "resourceLink") {
        const { mimeType, name, uri, description } = attachment;
        encoded[index] = ["resourceLink", mimeType ?? null, null, name, uri, description ?? null];
        continue;
      }
      const { type, mimeType, data, name, uri } = attachment;
      encoded[index] = [
        type,
        mimeType,
        Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64"),
        name ?? null,
        uri ?? null,
      ];
    }
  }
  return JSONStringify({ k: "r", c: outcome.content, e: outcome.isError ? 1 : 0, a: encoded });
}

/** Total bytes of an outcome's attachments. */
export function attachmentBytesOf(attachments: readonly CarriedAttachment[] | readonly StoredAttachment[] | undefined): number {
  if (attachments === undefined) return 0;
  let bytes = 0;
  for (let index = 0; index < attachments.length; index += 1) {
    const attachment = attachments[index] as StoredAttachment;
    if (attachment.type !== "resourceLink") bytes += TypedArrayPrototypeGetLength(attachment.data);
  }
  return bytes;
}

/** The longest encoded outcome a store with this attachment budget can hold (base64 grows bytes by 4/3). */
export function maxEncodedOutcomeChars(maxAttachmentBytes: number): number {
  return MAX_STORED_CONTENT + 1024 + Limits.ATTACHMENTS_LIMIT * STORED_ATTACHMENT_OVERHEAD + Math.ceil(maxAttachmentBytes / 3) * 4;
}

/**
 * Reads a record's fields as a store gave them (strings or numbers as Redis returns them), or
 * undefined when any is not what a record holds: a damaged record is never acted on as a
 * state, and never replayed.
 */
export function readRecord(fields: readonly unknown[], maxAttachmentBytes: number): DurableRecord | undefined {
  if (!ArrayIsArray(fields) || fields.length !== 6) return undefined;
  const [state, fingerprint, toolName, attempt, maxAttempts, outcome] = fields;
  if (state !== "claimed" && state !== "running" && state !== "done" && state !== "lost" && state !== "released") return undefined;
  if (typeof fingerprint !== "string" || !isHexDigest(fingerprint)) return undefined;
  if (typeof toolName !== "string" || toolName.length === 0 || toolName.length > MAX_STORED_TOOL_NAME) return undefined;
  const attemptNumber = attemptOf(attempt);
  const maxAttemptsNumber = attemptOf(maxAttempts);
  if (attemptNumber === undefined || maxAttemptsNumber === undefined) return undefined;
  let stored: StoredOutcome | undefined;
  if (state === "done") {
    stored = typeof outcome === "string" ? readOutcome(outcome, maxAttachmentBytes) : undefined;
    if (stored === undefined) return undefined;
  }
  return ObjectFreeze({ state, fingerprint, toolName, attempt: attemptNumber, maxAttempts: maxAttemptsNumber, outcome: stored });
}

function attemptOf(value: unknown): number | undefined {
  const number = typeof value === "string" && value.length <= 3 ? +value : value;
  return typeof number === "number" && NumberIsSafeInteger(number) && number >= 1 && number <= MAX_DURABLE_ATTEMPTS ? number : undefined;
}

function isHexDigest(text: string): boolean {
  if (text.length !== 64) return false;
  for (let index = 0; index < 64; index += 1) {
    const unit = StringPrototypeCharCodeAt(text, index);
    if (!((unit >= 0x30 && unit <= 0x39) || (unit >= 0x61 && unit <= 0x66))) return false;
  }
  return true;
}

/** An encoded outcome, measured before it is parsed, each field checked; undefined when damaged. */
export function readOutcome(text: string, maxAttachmentBytes: number): StoredOutcome | undefined {
  if (text.length > maxEncodedOutcomeChars(maxAttachmentBytes)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSONParse(text); // iterative in V8: nesting cannot overflow the stack
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null || ArrayIsArray(parsed)) return undefined;
  const record = parsed as Record<string, unknown>;
  if (record.k === "f") {
    const message = record.m;
    return typeof message === "string" && message.length <= MAX_STORED_MESSAGE ? ObjectFreeze({ fatal: true, message }) : undefined;
  }
  if (record.k !== "r") return undefined;
  const content = record.c;
  const isError = record.e;
  const list = record.a;
  if (typeof content !== "string" || content.length > MAX_STORED_CONTENT) return undefined;
  if (isError !== 0 && isError !== 1) return undefined;
  if (!ArrayIsArray(list) || list.length > Limits.ATTACHMENTS_LIMIT) return undefined;
  const attachments: StoredAttachment[] = [];
  let bytes = 0;
  for (let index = 0; index < list.length; index += 1) {
    const member: unknown = list[index];
    if (ArrayIsArray(member) && member.length === 6) {
      const link = readLink(member);
      if (link === undefined) return undefined;
      attachments[index] = link;
      continue;
    }
    if (!ArrayIsArray(member) || member.length !== 5) return undefined;
    const [type, mimeType, data, name, uri] = member as unknown[];
    if ((type !== "image" && type !== "audio" && type !== "file") || !isMimeTypeOf(type, mimeType)) return undefined;
    // A name and a URI belong to files alone, within their limits.
    if (!(name === null || (type === "file" && typeof name === "string" && name.length > 0 && name.length <= MAX_FILE_NAME_CHARS)))
      return undefined;
    if (!(uri === null || (type === "file" && typeof uri === "string" && uri.length > 0 && uri.length <= MAX_FILE_URI_CHARS)))
      return undefined;
    const decoded = typeof data === "string" ? canonicalBase64(data) : undefined;
    if (decoded === undefined) return undefined;
    bytes += decoded.length;
    if (bytes > maxAttachmentBytes) return undefined;
    const base = { type: type as AttachmentKind, mimeType: mimeType as string, data: decoded };
    attachments[index] = ObjectFreeze(
      name === null && uri === null
        ? base
        : { ...base, ...(name === null ? {} : { name: name as string }), ...(uri === null ? {} : { uri: uri as string }) },
    );
  }
  return ObjectFreeze({
    fatal: false,
    content,
    isError: isError === 1,
    attachments: attachments.length === 0 ? undefined : ObjectFreeze(attachments),
  });
}

/** A stored resource link (absent fields are stored as null), each field within its limit; else undefined. */
function readLink(member: readonly unknown[]): ToolResourceLink | undefined {
  const [type, mimeType, data, name, uri, description] = member;
  if (type !== "resourceLink" || data !== null) return undefined;
  const link = linkWithinLimits(uri, name, mimeType === null ? undefined : mimeType, description === null ? undefined : description);
  return link === undefined ? undefined : ObjectFreeze(link);
}

/**
 * The bytes of canonical, padded, non-empty base64, or undefined: Node's decoder skips what is
 * not base64, so the bytes are encoded back and must give the very text (both linear).
 */
function canonicalBase64(text: string): Uint8Array | undefined {
  if (text.length === 0 || text.length % 4 !== 0) return undefined;
  const bytes = Buffer.from(text, "base64");
  if (bytes.toString("base64") !== text) return undefined;
  // An own buffer, exactly sized: the result that adopts it owns it (a pooled Buffer shares its memory).
  const owned = new Uint8Array(bytes.length);
  owned.set(bytes);
  return owned;
}
