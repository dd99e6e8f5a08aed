// What crosses Redis, in both directions, and the Redis names both sides agree on. Only
// JSON crosses machines: the agent sends the call's frozen JSON arguments snapshot (never a
// validator's output, which may hold Dates or transformed values), and the host sends back
// the bounded content string, a fatal error's message, or "cancelled". Everything read from
// Redis is untrusted: any client of the server could have written it, so it is decoded
// field by field and anything unexpected becomes a TOOL_EXECUTION_FAILED result.
// docs/contract.md: rule 13 — frozen, linked results (re-linked on the agent), rule W4 — re-link and freeze on the main thread; docs/queue.md — Guarantees, and what is not guaranteed.
import type { JsonValue } from "../contract/call.js";
import { Limits, ToolErrorCode } from "../contract/constants.js";
import { ObjectFreeze } from "../contract/primordials.js";
import { errorContent } from "../contract/results.js";
import { cutToCodePoints } from "../contract/serialize.js";
import type { ToolOutcome } from "../executor/run-tool.js";
import { decodeAttachments, decodeFacts, type EncodedAttachment, type HostFacts } from "./result-codec.js";

/** Agent → host: one job's data. The host runs it through its own full pipeline. */
export interface QueueJobData {
  readonly v: 1;
  readonly callId: string;
  readonly toolName: string;
  readonly arguments: Readonly<Record<string, JsonValue>>;
  /** The call's limit in ms as the agent applies it (call > tool > executor), absent for none: the host stops the tool at it too. */
  readonly timeoutMs?: number;
  /** Present when the agent listens to the call's progress: the host relays the tool's reports then. */
  readonly progress?: true;
  /** The agent's attachment budgets, when not the defaults: the host bounds the result's attachments by them (a tool's own override them). */
  readonly attachmentBudgets?: { readonly maxAttachments: number; readonly maxAttachmentBytes: number };
}

/** Host → agent: a job's return value. */
export type QueueJobResult = (
  | { readonly kind: "result"; readonly content: string; readonly isError: boolean; readonly attachments?: readonly EncodedAttachment[] }
  | { readonly kind: "fatal"; readonly message: string }
  | { readonly kind: "cancelled" }
) & { readonly facts?: HostFacts };

/** How the agent reads a finished job: an outcome, or a NonRecoverableToolError's message. */
export type DecodedResult = (
  | { readonly fatal: false; readonly outcome: ToolOutcome }
  | { readonly fatal: true; readonly message: string }
) & { readonly facts?: HostFacts };

/** Why the agent asks hosts to stop a job. */
export type CancelReason = "abort" | "timeout" | "gave-up";

/** BullMQ's default key prefix: jobs live at `bull:<queue>:<jobId>`. */
export const BULL_PREFIX = "bull";

/** The hash of a job, and (with `:lock`) the lock its host renews while it runs. */
export const jobKey = (queue: string, jobId: string): string => `${BULL_PREFIX}:${queue}:${jobId}`;

/** Set by the agent when it stops waiting for a job: a host never starts a marked job. */
export const cancelMarkKey = (queue: string, jobId: string): string => `toolgate:${queue}:cancelled:${jobId}`;

/** Pub/sub channel on which the agent tells hosts to stop a running job. */
export const cancelChannel = (queue: string): string => `toolgate:${queue}:cancel`;

/** How long a cancel mark lives: longer than any job should wait for a host. */
export const CANCEL_MARK_TTL_MS = 24 * 60 * 60 * 1000;

/** Finished jobs stay readable this long (seconds), so a lost event can be recovered from the job itself. */
export const FINISHED_JOB_RETENTION = ObjectFreeze({ age: 600, count: 10_000 });

export function encodeCancel(jobId: string, reason: CancelReason): string {
  return JSON.stringify({ jobId, reason });
}

/** A cancel message, or undefined when it is not one of ours. */
export function decodeCancel(message: string): { jobId: string; reason: CancelReason } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const { jobId, reason } = parsed as { jobId?: unknown; reason?: unknown };
  if (typeof jobId !== "string" || (reason !== "abort" && reason !== "timeout" && reason !== "gave-up")) return undefined;
  return { jobId, reason };
}

/**
 * A job's return value as the agent reads it from the job's hash; `maxContentCodePoints` is
 * the budget the host serialized under (the tool's own `budgets`, else the default).
 */
export function decodeResult(value: unknown, maxContentCodePoints: number): DecodedResult {
  if (typeof value !== "object" || value === null) return malformed("the host's result is not an object");
  const facts = decodeFacts((value as { facts?: unknown }).facts);
  if (typeof facts === "string") return malformed(facts);
  const decoded = decodeKind(value, maxContentCodePoints);
  return facts === undefined ? decoded : { ...decoded, facts };
}

function decodeKind(value: object, maxContentCodePoints: number): DecodedResult {
  const { kind, content, isError, message } = value as { kind?: unknown; content?: unknown; isError?: unknown; message?: unknown };
  if (kind === "result") {
    if (typeof content !== "string" || typeof isError !== "boolean") return malformed("the host's result has no content string");
    if (cutToCodePoints(content, maxContentCodePoints).cut) return malformed("the host's content is over the content budget");
    // Attachments are bounded by the absolute limits here; the agent checks the call's budgets before publishing.
    const attachments = decodeAttachments((value as { attachments?: unknown }).attachments);
    if (typeof attachments === "string") return malformed(attachments);
    const outcome = attachments === undefined ? { content, isError } : { content, isError, attachments: ObjectFreeze(attachments) };
    return { fatal: false, outcome: ObjectFreeze(outcome) as ToolOutcome };
  }
  if (kind === "fatal") {
    return { fatal: true, message: typeof message === "string" ? cutToCodePoints(message, Limits.MAX_STRING_CODE_POINTS).text : "" };
  }
  if (kind === "cancelled") return { fatal: false, outcome: failedOutcome("the host stopped the tool before it finished") };
  return malformed("the host's result has an unknown kind");
}

/** A TOOL_EXECUTION_FAILED outcome with a bounded message. */
export function failedOutcome(text: string): ToolOutcome {
  return ObjectFreeze({
    content: errorContent(ToolErrorCode.EXECUTION_FAILED, cutToCodePoints(text, Limits.MAX_STRING_CODE_POINTS)),
    isError: true,
  });
}

function malformed(text: string): DecodedResult {
  return { fatal: false, outcome: failedOutcome(text) };
}
