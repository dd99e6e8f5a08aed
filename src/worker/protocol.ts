// What crosses the thread boundary, in both directions, and how the main thread decodes it.
// Outcomes are encoded explicitly: errors lose their class and own properties when
// structured-cloned. Every record that resolves a promise has an own `then` (undefined), so a
// `then` planted on Object.prototype (in either realm) never adopts it as a thenable.
// docs/contract.md: rule W4 — re-link and freeze on the main thread, rule W5 — faults are results.
import type { MessagePort } from "node:worker_threads";
import type { ResolvedAttachmentBudgets, ResolvedOutputBudgets } from "../contract/budgets.js";
import { type RecoverableToolErrorCode, ToolErrorCode } from "../contract/constants.js";
import { NonRecoverableToolError } from "../contract/errors.js";
import { ObjectFreeze, StringPrototypeSlice } from "../contract/primordials.js";
import type { CarriedAttachment, ToolAttachment, ToolResourceLink } from "../contract/results.js";
import { errorContent } from "../contract/results.js";
import { describeFailure } from "../contract/untrusted.js";
import { Outcome, OutcomeWithAttachments, type ToolOutcome } from "../executor/run-tool.js";

/**
 * Main → worker, one per call, as a Piscina task (the pool's own port: it is what wakes the
 * thread and what Piscina answers on): only validated arguments travel, and numbers where a
 * name would do (the module's index, the slot). A tuple, not a record: a record's keys are
 * written into every clone and looked up again on the thread (each internalized and matched to
 * a hidden class), measured ~1 µs of a no-op call's round trip; a tuple's elements are not.
 * Written as a tuple literal (dispatch.ts), read by the TASK_* indexes.
 */
export type WorkerTask = readonly [
  taskId: number,
  /** The task's cells on the task board. */
  slot: number,
  /** Index into `ToolWorkerData.modules` (a number clones faster than the URL). */
  module: number,
  toolName: string,
  toolCallId: string,
  args: unknown,
  /** The caller has an `onProgress`: the worker sends the tool's (throttled) reports as task messages. */
  progress: boolean,
  /** A durable call's `context.idempotencyKey` (absent for other calls: they clone two elements fewer). */
  idempotencyKey?: string,
  /** A durable call's `context.attempt`. */
  attempt?: number,
];

export const TASK_ID = 0;
export const TASK_SLOT = 1;
export const TASK_MODULE = 2;
export const TASK_TOOL_NAME = 3;
export const TASK_TOOL_CALL_ID = 4;
export const TASK_ARGS = 5;
export const TASK_PROGRESS = 6;
export const TASK_IDEMPOTENCY_KEY = 7;
export const TASK_ATTEMPT = 8;

/**
 * Main → worker: a no-op task, so Piscina starts a spare thread before a call needs it (only a
 * task makes it start one). A record, where a call's task is a tuple: that is how a thread tells them apart.
 */
export interface WorkerWarmup {
  readonly kind: "warmup";
}

/**
 * Worker → main, per task. `kind`: "result" (the bounded `content`, `isError`); "fatal" (a
 * NonRecoverableToolError's `message`); "stopped" (its abort won before the tool ran or
 * finished); "refused" (this thread is retiring and did not start the task: run it
 * elsewhere). `retire` asks the main thread to replace the thread once it is idle (a fault
 * the task did not cause).
 */
export interface WorkerOutcome {
  readonly kind: "result" | "fatal" | "stopped" | "refused" | "warm";
  readonly content: string;
  readonly isError: boolean;
  readonly message: string;
  readonly retire: boolean;
  /** A "result"'s attachments, their bytes transferred (own even when undefined: read without a prototype lookup). */
  readonly attachments: readonly WireAttachment[] | undefined;
}

/**
 * What a task returns to the main thread: a WorkerOutcome, or, for the commonest reply (a
 * success without attachments from a thread that is not retiring), its bare `content`: a
 * string is the smallest message a round trip can carry back (a record of six fields measured
 * 5-8% slower per bare Piscina round trip) and, being a primitive, is never adopted as a
 * thenable.
 */
export type WorkerReply = WorkerOutcome | string;

/**
 * An attachment as it crosses: a plain record whose `data` owns a transferred buffer (the
 * pipeline adopts it, after the checks a tool's attachment passes); a file's `name` and `uri`
 * only when it has them. A resource link crosses as its fields (adopted after the same checks).
 */
export type WireAttachment = WireBytes | ToolResourceLink;

/** An image, audio or file as it crosses, its bytes moved. */
export interface WireBytes {
  readonly type: ToolAttachment["type"];
  readonly mimeType: ToolAttachment["mimeType"];
  readonly data: Uint8Array;
  readonly name?: string;
  readonly uri?: string;
}

/** Why the main thread asks a worker to stop a task. */
export type StopReason = "abort" | "timeout";

/**
 * Worker → main over `parentPort`, once, as the thread starts: its end of the thread port.
 * `parentPort`, because the thread port does not exist on the main thread's side until this
 * arrives, and Piscina hands every other parentPort message on as a pool 'message' event.
 */
export interface ThreadHello {
  readonly toolgateThreadPort: true;
  readonly threadId: number;
  readonly port: MessagePort;
}

/**
 * Worker → main over `parentPort`, once its modules have loaded (before Piscina hears it is
 * ready). The same channel as the hello, so it never overtakes it: the thread's port is known
 * before the thread can be handed a task.
 */
export interface ThreadLoaded {
  readonly toolgateThreadLoaded: true;
  readonly threadId: number;
  /** Module index → why it failed to load in this thread (its file name, never a host path). */
  readonly failures: readonly (string | undefined)[];
}

/** `workerData` of every pool thread. */
export interface ToolWorkerData {
  /** URLs of the tool modules, in `create()` order. */
  readonly modules: readonly string[];
  /** The task board's memory (see task-board.ts). */
  readonly board: SharedArrayBuffer;
  readonly moduleLoadTimeoutMs: number;
  readonly setupTimeoutMs: number;
  /** URL of the module imported before the tool modules (the `loader` option), if any. */
  readonly loader: string | undefined;
  /** The executor's output budgets (a tool's own `budgets` override them). */
  readonly outputBudgets: ResolvedOutputBudgets;
  /** The executor's attachment budgets (a tool's own `attachmentBudgets` override them, in the thread that runs it). */
  readonly attachmentBudgets: ResolvedAttachmentBudgets;
}

/** A recoverable error outcome with a fixed message. */
export function failureOutcome(code: RecoverableToolErrorCode, text: string): ToolOutcome {
  return ObjectFreeze(new Outcome(errorContent(code, { text, cut: false }), true));
}

/** What a finished task means for its call: an outcome, or a NonRecoverableToolError to reject with. */
export function decodeOutcome(outcome: WorkerReply): ToolOutcome | NonRecoverableToolError {
  if (typeof outcome === "string") return new Outcome(outcome, false);
  const kind = outcome.kind;
  if (kind === "result") {
    const attachments = outcome.attachments;
    return attachments === undefined
      ? new Outcome(outcome.content, outcome.isError)
      : new OutcomeWithAttachments(outcome.content, attachments as readonly CarriedAttachment[]);
  }
  // A worker has its own realm: re-create the error here so it is genuine on this thread.
  if (kind === "fatal") return new NonRecoverableToolError(outcome.message);
  // "stopped" without an abort or timeout here: something else fired the tool's signal.
  return failureOutcome(ToolErrorCode.EXECUTION_FAILED, "the tool was stopped in the worker");
}

/** A task the pool itself failed: uncloneable arguments, or a thread that died mid-call. */
export function poolFailureOutcome(error: unknown): ToolOutcome {
  const description = describeFailure(error).text;
  if (StringPrototypeSlice(description, 0, 14) === "DataCloneError") {
    return failureOutcome(ToolErrorCode.VALIDATION_FAILED, `the validated arguments cannot be sent to a worker thread (${description})`);
  }
  return failureOutcome(ToolErrorCode.EXECUTION_FAILED, `the worker thread running the tool failed: ${description}`);
}
