// The host's half of a result's attachments: within the call's attachment budgets, their bytes
// in base64 (the agent reads them back in redis-data.ts, as untrusted data, and adopts them
// after the checks a tool's attachment passes). Every kind of attachment crosses the same way.
// docs/queue.md — Attachments, progress and thread facts across machines.
import type { ResolvedAttachmentBudgets } from "../contract/budgets.js";
import type { ToolAttachment } from "../contract/results.js";
import { checkAttachments } from "../contract/results.js";

/** An attachment as it crosses Redis; a file's `name` and `uri` only when it has them. */
export interface EncodedAttachment {
  readonly type: ToolAttachment["type"];
  readonly mimeType: string;
  /** The bytes, base64 (RFC 4648, with padding). */
  readonly data: string;
  readonly name?: string;
  readonly uri?: string;
}

/** Host side: a result's attachments for the job's return value (already within the call's budgets). */
export function encodeAttachments(attachments: readonly ToolAttachment[]): EncodedAttachment[] {
  return attachments.map((attachment) => {
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
export function attachmentsOverBudget(attachments: readonly ToolAttachment[], budgets: ResolvedAttachmentBudgets): string | undefined {
  return checkAttachments(attachments, budgets);
}
