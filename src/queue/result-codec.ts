// The host's half of a result's attachments: within the call's attachment budgets, their bytes
// in base64 (the agent reads them back in redis-data.ts, as untrusted data, and adopts them
// after the checks a tool's attachment passes). Every kind of attachment crosses the same way;
// a resource link as its fields, after the attachments (the result message keeps them apart).
// docs/queue.md — Attachments, progress and thread facts across machines.
import type { ResolvedAttachmentBudgets } from "../contract/budgets.js";
import type { CarriedAttachment, ToolAttachment, ToolResourceLink, ToolResultMessage } from "../contract/results.js";
import { checkAttachments } from "../contract/results.js";

/** An attachment as it crosses Redis; a file's `name` and `uri` only when it has them; a resource link as its fields. */
export type EncodedAttachment =
  | {
      readonly type: ToolAttachment["type"];
      readonly mimeType: string;
      /** The bytes, base64 (RFC 4648, with padding). */
      readonly data: string;
      readonly name?: string;
      readonly uri?: string;
    }
  | ToolResourceLink;

/** A result's attachments and resource links as one list (undefined: neither). */
export function carriedOf(message: ToolResultMessage): readonly CarriedAttachment[] | undefined {
  const { attachments, resourceLinks } = message;
  if (resourceLinks === undefined || resourceLinks.length === 0)
    return attachments === undefined || attachments.length === 0 ? undefined : attachments;
  return attachments === undefined ? resourceLinks : [...attachments, ...resourceLinks];
}

/** Host side: a result's attachments for the job's return value (already within the call's budgets). */
export function encodeAttachments(attachments: readonly CarriedAttachment[]): EncodedAttachment[] {
  return attachments.map((attachment) => {
    if (attachment.type === "resourceLink") return { ...attachment };
    const data = Buffer.from(attachment.data.buffer, attachment.data.byteOffset, attachment.data.byteLength).toString("base64");
    if (attachment.type !== "file") return { type: attachment.type, mimeType: attachment.mimeType, data };
    const { name, uri } = attachment;
    return {
      type: "file",
      mimeType: attachment.mimeType,
      data,
      ...(name === undefined ? {} : { name }),
      ...(uri === undefined ? {} : { uri }),
    };
  });
}

/** Host side: the attachments against the call's budgets; undefined when within them, else why not. */
export function attachmentsOverBudget(attachments: readonly CarriedAttachment[], budgets: ResolvedAttachmentBudgets): string | undefined {
  return checkAttachments(attachments, budgets);
}
