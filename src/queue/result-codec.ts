// The parts of a job's result beyond its text: attachments (their bytes in base64) and the
// host's thread facts. The host encodes them within the call's attachment budgets; the
// agent decodes them as untrusted data (anyone with write access to Redis could have
// written them): strict base64, exact sizes, the absolute limits, then the call's budgets.
// docs/queue.md — Attachments, progress and thread facts across machines.

import type { ResolvedAttachmentBudgets } from "../contract/budgets.js";
import { Limits } from "../contract/constants.js";
import { ArrayIsArray, NativeUint8Array, NumberIsFinite, ObjectFreeze } from "../contract/primordials.js";
import type { ToolAttachment } from "../contract/results.js";
import { checkAttachments } from "../contract/results.js";

/** An attachment as it crosses Redis. */
export interface EncodedAttachment {
  readonly type: "image";
  readonly mimeType: string;
  /** The bytes, base64 (RFC 4648, with padding). */
  readonly data: string;
}

/** What the host tells the agent about where and how long its call ran. */
export interface HostFacts {
  /** Time the call waited on the host for a thread, in ms. */
  readonly waitMs: number;
  /** Time the tool ran on the host (execute and serialization), in ms. */
  readonly runMs: number;
  /** The host thread that ran the tool (an id on that host only); absent when none took it. */
  readonly threadId?: number;
  /** The host terminated that thread before the call settled there. */
  readonly killed: boolean;
}

/** No fact is larger than a day: a larger one is not a host's. */
const MAX_FACT_MS = 24 * 60 * 60 * 1000;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const IMAGE_TYPES: ReadonlySet<string> = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** Host side: a result's attachments for the job's return value (already within the call's budgets). */
export function encodeAttachments(attachments: readonly ToolAttachment[]): EncodedAttachment[] {
  return attachments.map((attachment) => ({
    type: "image",
    mimeType: attachment.mimeType,
    data: Buffer.from(attachment.data.buffer, attachment.data.byteOffset, attachment.data.byteLength).toString("base64"),
  }));
}

/** Host side: the attachments against the call's budgets; undefined when within them, else why not. */
export function attachmentsOverBudget(attachments: readonly ToolAttachment[], budgets: ResolvedAttachmentBudgets): string | undefined {
  return checkAttachments(attachments, budgets);
}

/**
 * Agent side: a return value's `attachments` (absent: none) as plain `{ type, mimeType, data }`
 * records with exactly sized bytes, for the pipeline to adopt; or why they are not a host's.
 */
export function decodeAttachments(value: unknown): readonly { type: "image"; mimeType: string; data: Uint8Array }[] | undefined | string {
  if (value === undefined) return undefined;
  if (!ArrayIsArray(value)) return "the host's attachments are not a list";
  if (value.length > Limits.ATTACHMENTS_LIMIT)
    return `the host sent ${value.length} attachments, over the limit of ${Limits.ATTACHMENTS_LIMIT}`;
  const decoded: { type: "image"; mimeType: string; data: Uint8Array }[] = [];
  let total = 0;
  for (const member of value as unknown[]) {
    if (typeof member !== "object" || member === null || ArrayIsArray(member)) return "a host's attachment is not an object";
    const { type, mimeType, data } = member as { type?: unknown; mimeType?: unknown; data?: unknown };
    if (type !== "image" || typeof mimeType !== "string" || !IMAGE_TYPES.has(mimeType)) return "a host's attachment is not an image";
    if (typeof data !== "string" || data.length === 0 || data.length % 4 !== 0) return "a host's attachment data is not base64";
    // The size the text decodes to, known before any byte is decoded: a forged giant costs nothing.
    total += (data.length / 4) * 3 - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0);
    if (total > Limits.ATTACHMENT_BYTES_LIMIT) return `the host's attachments are over the ${Limits.ATTACHMENT_BYTES_LIMIT}-byte limit`;
    if (!BASE64.test(data)) return "a host's attachment data is not base64";
    const bytes = Buffer.from(data, "base64");
    // An exactly sized buffer of its own: the result's attachment owns it.
    const own = new NativeUint8Array(bytes.length);
    own.set(bytes);
    decoded.push({ type: "image", mimeType, data: own });
  }
  return decoded;
}

/** Agent side: a return value's `facts` (absent: none), or why they are not a host's. */
export function decodeFacts(value: unknown): HostFacts | undefined | string {
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || ArrayIsArray(value)) return "the host's facts are not an object";
  const { waitMs, runMs, threadId, killed } = value as { waitMs?: unknown; runMs?: unknown; threadId?: unknown; killed?: unknown };
  if (!isDuration(waitMs) || !isDuration(runMs) || typeof killed !== "boolean") return "the host's facts are malformed";
  if (threadId !== undefined && (typeof threadId !== "number" || !Number.isSafeInteger(threadId) || threadId < 0)) {
    return "the host's thread id is malformed";
  }
  return ObjectFreeze(threadId === undefined ? { waitMs, runMs, killed } : { waitMs, runMs, threadId, killed });
}

function isDuration(value: unknown): value is number {
  return typeof value === "number" && NumberIsFinite(value) && value >= 0 && value <= MAX_FACT_MS;
}
