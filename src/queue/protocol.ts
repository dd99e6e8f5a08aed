// What crosses Redis, in both directions. Only JSON crosses machines: the agent sends the
// call's frozen JSON arguments snapshot (never a validator's output, which may hold Dates or
// transformed values), and the host sends back the bounded content string, a fatal error's
// message, "cancelled", or why it did not start the job. Everything read from Redis is
// untrusted and read by redis-data.ts alone; the Redis names both sides agree on are keys.ts's.
// docs/contract.md: rule 13 — frozen, linked results (re-linked on the agent), rule W4 — re-link and freeze on the main thread; docs/queue.md — Guarantees, and what is not guaranteed.
import type { JsonValue } from "../contract/call.js";
import { Limits, ToolErrorCode } from "../contract/constants.js";
import { ObjectFreeze } from "../contract/primordials.js";
import { errorContent } from "../contract/results.js";
import { cutToCodePoints } from "../contract/serialize.js";
import type { ToolOutcome } from "../executor/run-tool.js";
import type { JobDurability } from "./durable.js";
import type { EncodedAttachment } from "./result-codec.js";
import type { JobTraceContext } from "./trace-context.js";

/** Agent → host: one job's data (and its agent's trace context: trace-context.ts). The host runs it through its own full pipeline. */
export interface QueueJobData extends JobTraceContext {
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
  /** A durable call's: its run id and record settings (durable.ts); only a host that starts the call's claim runs it. */
  readonly durable?: JobDurability;
}

/** Why a host did not start a job it had taken (redis-data.ts says each in words on the agent). */
export type NotStartedReason = "cancelled" | "lock-lost" | "lease-expired" | "unconfirmed" | "no-agent" | "durable";

/** What the host tells the agent about where and how long its call ran (checked on the agent: redis-data.ts). */
export interface QueueJobFacts {
  readonly waitMs: number;
  readonly runMs: number;
  readonly threadId?: number;
  readonly killed: boolean;
  /** The host stopped the call itself (its time limit, its close()): the thread may be terminated after this answer. */
  readonly stopped?: true;
}

/** Host → agent: a job's return value. */
export type QueueJobResult = (
  | { readonly kind: "result"; readonly content: string; readonly isError: boolean; readonly attachments?: readonly EncodedAttachment[] }
  | { readonly kind: "fatal"; readonly message: string }
  | { readonly kind: "cancelled" }
  | { readonly kind: "not-started"; readonly reason: NotStartedReason }
) & {
  readonly facts?: QueueJobFacts;
  /** A durable job's: this result (or fatal) is the outcome the host recorded, first terminal write. */
  readonly recorded?: true;
};

/** Why the agent asks hosts to stop a job. */
export type CancelReason = "abort" | "timeout" | "gave-up";

/** How long a cancel mark lives: longer than any job should wait for a host. */
export const CANCEL_MARK_TTL_MS = 24 * 60 * 60 * 1000;

/** Finished jobs stay readable this long (seconds), so a lost event can be recovered from the job itself. */
export const FINISHED_JOB_RETENTION = ObjectFreeze({ age: 600, count: 10_000 });

export function encodeCancel(jobId: string, reason: CancelReason): string {
  return JSON.stringify({ jobId, reason });
}

/** A TOOL_EXECUTION_FAILED outcome with a bounded message. */
export function failedOutcome(text: string): ToolOutcome {
  return ObjectFreeze({
    content: errorContent(ToolErrorCode.EXECUTION_FAILED, cutToCodePoints(text, Limits.MAX_STRING_CODE_POINTS)),
    isError: true,
  });
}
