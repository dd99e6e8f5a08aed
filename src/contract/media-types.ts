// Which media types an attachment may declare, and whether its bytes are what it declares.
// An allow-list, not a deny-list: a type a model provider or an MCP client could render as
// active content (HTML, SVG, scripts) is never carried, and a type nobody listed is refused
// rather than passed on as opaque bytes. Where a format has a signature (its first bytes),
// the bytes must start with it; text types must be well-formed UTF-8. Checked when a tool
// makes an attachment and again wherever one is adopted from another thread or from Redis.
// docs/contract.md — Attachments: images, audio and files.
import { isUtf8 } from "node:buffer";
import { ObjectFreeze, TypedArrayPrototypeGetLength } from "./primordials.js";

/** Image formats the model providers accept. SVG is left out: it is a document that can carry script. */
export type ImageMimeType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";
/** Audio formats MCP clients and the model providers accept, each with a signature the bytes must start with. */
export type AudioMimeType = "audio/wav" | "audio/mpeg" | "audio/ogg" | "audio/flac";
/** Document formats a file attachment may be: PDF (signature `%PDF-`), or text in UTF-8. */
export type FileMimeType = "application/pdf" | "text/plain" | "text/markdown" | "text/csv" | "application/json";

/** The longest file name a file attachment may have. */
export const MAX_FILE_NAME_CHARS = 255;
/** The longest URI a file attachment may have. */
export const MAX_FILE_URI_CHARS = 2048;

/** The longest name a resource link may have. */
export const MAX_LINK_NAME_CHARS = 255;
/** The longest description a resource link may have. */
export const MAX_LINK_DESCRIPTION_CHARS = 1024;
/** The longest media type a resource link may name. */
export const MAX_LINK_MIME_TYPE_CHARS = 127;

/** The kinds of attachment that carry bytes; each has its own list of media types. */
export type AttachmentKind = "image" | "audio" | "file";

export const MIME_TYPES_BY_KIND: { readonly [kind in AttachmentKind]: readonly string[] } = ObjectFreeze({
  image: ObjectFreeze(["image/png", "image/jpeg", "image/gif", "image/webp"]),
  audio: ObjectFreeze(["audio/wav", "audio/mpeg", "audio/ogg", "audio/flac"]),
  file: ObjectFreeze(["application/pdf", "text/plain", "text/markdown", "text/csv", "application/json"]),
});

/** Whether `mimeType` is one of `kind`'s types (exact, lower case: a look-alike is not one). */
export function isMimeTypeOf(kind: AttachmentKind, mimeType: unknown): boolean {
  if (typeof mimeType !== "string") return false;
  const list = MIME_TYPES_BY_KIND[kind];
  for (let index = 0; index < list.length; index += 1) if (list[index] === mimeType) return true;
  return false;
}

/**
 * Undefined when `bytes` are what `mimeType` says, else what they are not. Images are checked
 * by type only (as they always were: a model provider decodes them itself).
 */
export function contentMismatch(mimeType: string, bytes: Uint8Array): string | undefined {
  switch (mimeType) {
    case "audio/wav":
      return startsWith(bytes, 0, RIFF) && startsWith(bytes, 8, WAVE) ? undefined : "a WAV file (RIFF....WAVE)";
    case "audio/mpeg":
      return startsWith(bytes, 0, ID3) || isMpegFrameSync(bytes) ? undefined : "an MP3 file (an ID3 tag or an MPEG frame)";
    case "audio/ogg":
      return startsWith(bytes, 0, OGGS) ? undefined : "an Ogg file (OggS)";
    case "audio/flac":
      return startsWith(bytes, 0, FLAC) ? undefined : "a FLAC file (fLaC)";
    case "application/pdf":
      return startsWith(bytes, 0, PDF) ? undefined : "a PDF file (%PDF-)";
    case "text/plain":
    case "text/markdown":
    case "text/csv":
    case "application/json":
      return isUtf8(bytes) ? undefined : "well-formed UTF-8 text";
    default:
      return undefined;
  }
}

const RIFF = [0x52, 0x49, 0x46, 0x46];
const WAVE = [0x57, 0x41, 0x56, 0x45];
const ID3 = [0x49, 0x44, 0x33];
const OGGS = [0x4f, 0x67, 0x67, 0x53];
const FLAC = [0x66, 0x4c, 0x61, 0x43];
const PDF = [0x25, 0x50, 0x44, 0x46, 0x2d];

function startsWith(bytes: Uint8Array, at: number, signature: readonly number[]): boolean {
  if (TypedArrayPrototypeGetLength(bytes) < at + signature.length) return false;
  for (let index = 0; index < signature.length; index += 1) if (bytes[at + index] !== signature[index]) return false;
  return true;
}

/** An MPEG audio frame header: 11 set sync bits, then a layer that is not "reserved". */
function isMpegFrameSync(bytes: Uint8Array): boolean {
  if (TypedArrayPrototypeGetLength(bytes) < 2) return false;
  const second = bytes[1] as number;
  return bytes[0] === 0xff && (second & 0xe0) === 0xe0 && (second & 0x06) !== 0;
}
