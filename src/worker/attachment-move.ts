// Attachments leave a worker thread without a copy: each one's bytes are moved (structuredClone
// with a transfer list, in this thread) into a buffer nothing else references, which then rides
// in the reply's transfer list. Moving here, not in Piscina's postMessage, means a buffer the
// tool detached or made untransferable fails this call with a result, never the reply itself.
// The tool's own `attachment.data` is detached afterwards: one imageContent (audioContent,
// fileContent) goes out once. Every kind of attachment moves the same way; a resource link has
// no bytes, and crosses as its fields.
// docs/contract.md: rule W4 — re-link and freeze on the main thread (attachments re-checked there).
// The `buffer` getter is captured before any tool module loads: a patched one cannot pick what moves.
import { MapPrototypeGet, MapPrototypeSet, StructuredClone, TypedArrayPrototypeGetBuffer } from "../contract/primordials.js";
import type { CarriedAttachment, ToolAttachment } from "../contract/results.js";
import { describeFailure } from "../contract/untrusted.js";
import type { WireAttachment, WireBytes } from "./protocol.js";

/** The moved attachments, and the buffers to transfer with them (each once). */
export class MovedAttachments {
  constructor(
    readonly list: readonly WireAttachment[],
    readonly buffers: readonly ArrayBuffer[],
  ) {}
}

/**
 * Moves each attachment's bytes (an attachment listed twice moves once and is sent twice);
 * gives the moved list, or why an attachment cannot be sent.
 */
export function moveAttachments(attachments: readonly CarriedAttachment[]): MovedAttachments | string {
  const list: WireAttachment[] = [];
  const buffers: ArrayBuffer[] = [];
  const moved = new Map<Uint8Array, Uint8Array>();
  for (let index = 0; index < attachments.length; index += 1) {
    const attachment = attachments[index] as CarriedAttachment;
    if (attachment.type === "resourceLink") {
      list[index] = attachment; // frozen, strings only: cloned as it is
      continue;
    }
    const data = attachment.data; // a frozen attachment made by imageContent (audioContent, fileContent): own data properties
    let bytes = MapPrototypeGet(moved, data);
    if (bytes === undefined) {
      try {
        bytes = StructuredClone(data, { transfer: [TypedArrayPrototypeGetBuffer(data)] }) as Uint8Array;
      } catch (error) {
        return `attachment [${index}] cannot be moved to the main thread (${describeFailure(error).text}); a worker moves an attachment's bytes, so return a new attachment (imageContent, audioContent, fileContent) in each result`;
      }
      MapPrototypeSet(moved, data, bytes);
      buffers[buffers.length] = TypedArrayPrototypeGetBuffer(bytes);
    }
    list[index] = wireAttachment(attachment, bytes);
  }
  return new MovedAttachments(list, buffers);
}

/** The record that crosses: the attachment's fields, its bytes moved; a file's `name` and `uri` only when it has them. */
function wireAttachment(attachment: ToolAttachment, bytes: Uint8Array): WireBytes {
  if (attachment.type !== "file") return { type: attachment.type, mimeType: attachment.mimeType, data: bytes };
  const record: { -readonly [key in keyof WireBytes]: WireBytes[key] } = {
    type: "file",
    mimeType: attachment.mimeType,
    data: bytes,
  };
  if (attachment.name !== undefined) record.name = attachment.name;
  if (attachment.uri !== undefined) record.uri = attachment.uri;
  return record;
}
