// Everything the agent and the hosts read from Redis, read here and only here: anyone who can
// write to the server could have written it. Each reader is one pass over its input, bounded
// before it is walked: a text is measured before JSON.parse sees it (V8's parser is iterative,
// so nesting cannot overflow the stack), a list before it is iterated, base64 is decoded and
// encoded back by Node's own codec, both linear (a regular expression over a 4 MiB image
// overflowed the stack).
// Nothing here throws: what is not well-formed is `undefined`, or a reason the caller turns
// into that one entry's failed result. A batch reply is read entry by entry, so one bad entry
// costs that entry alone.
// docs/queue.md — What a party with write access to Redis can and cannot do.
import { Limits } from "../contract/constants.js";
import { type AttachmentKind, isMimeTypeOf, MAX_FILE_NAME_CHARS, MAX_FILE_URI_CHARS } from "../contract/media-types.js";
import {
  ArrayIsArray,
  isProxy,
  JSONParse,
  NativeUint8Array,
  NumberIsFinite,
  NumberIsSafeInteger,
  ObjectFreeze,
  ObjectHasOwn,
  StringPrototypeCharCodeAt,
} from "../contract/primordials.js";
import { linkWithinLimits, type ToolResourceLink } from "../contract/results.js";
import { cutToCodePoints } from "../contract/serialize.js";
import { ownDataOr, readOwnDataProperty } from "../contract/untrusted.js";
import type { ToolOutcome } from "../executor/run-tool.js";
import { readJobId } from "./keys.js";
import { type CancelReason, failedOutcome, type QueueJobFacts } from "./protocol.js";

/** The host's facts of a call, as checked here. */
export type HostFacts = QueueJobFacts;

/** How the agent reads a finished job: an outcome, or a NonRecoverableToolError's message. */
export type DecodedResult = (
  | { readonly fatal: false; readonly outcome: ToolOutcome }
  | { readonly fatal: true; readonly message: string }
) & { readonly facts?: HostFacts; readonly stopped: boolean; readonly notStarted?: true; readonly recorded?: true };

/** What bounds one call's result, as the agent knows them. */
export interface ResultLimits {
  /** The content budget the host serialized under (the tool's own, else the default). */
  readonly maxContentCodePoints: number;
  /** The call's attachment budget in bytes (all attachments together). */
  readonly maxAttachmentBytes: number;
  /** The call's attachment budget in count. */
  readonly maxAttachments: number;
}

/** What Redis says about one job (the agent's heartbeat and confirmation). */
export type JobState =
  | { readonly state: "waiting" | "running" | "stalled" | "missing" | "not-a-job" }
  | { readonly state: "completed"; readonly returnValue: string }
  | { readonly state: "failed"; readonly failedReason: string };

/** What a host's start check read (see start-check.ts): MGET of the mark, the lock and the lease. */
export interface StartReading {
  /** The job's cancel mark is set (any value counts). */
  readonly marked: boolean;
  /** The lock's value (its holder's token), when it is a string. */
  readonly lock: string | undefined;
  /** When the agent renewed its lease and when it runs out, on the server's clock (ms); undefined when there is none. */
  readonly lease: { readonly renewedAt: number; readonly expiresAt: number } | undefined;
}

/**
 * A progress event's data: the host writes `{ progress, total?, message? }`, the message cut to
 * 256 code points; a forged one up to this size is still read as a report (its message cut).
 */
const MAX_PROGRESS_CHARS = 64 * 1024;
/** A cancel message: `{ jobId, reason }`. */
const MAX_CANCEL_CHARS = 2048;
/** Characters a result may take beyond its content and attachment data (kind, flags, facts, a record's fields). */
const RESULT_OVERHEAD_CHARS = 1024;
/** JSON writes a code point in at most 6 characters (`\uXXXX`). */
const MAX_JSON_CHARS_PER_CODE_POINT = 6;
/** An attachment's fields beside its data: the kind and type, and a file's name and URI, each JSON-escaped at worst. */
const ATTACHMENT_OVERHEAD_CHARS = 96 + MAX_JSON_CHARS_PER_CODE_POINT * (MAX_FILE_NAME_CHARS + MAX_FILE_URI_CHARS);
/** No fact is larger than a day: a larger one is not a host's. */
const MAX_FACT_MS = 24 * 60 * 60 * 1000;

/** JSON text of at most `maxChars` characters, parsed; undefined for anything else. */
export function readJson(text: unknown, maxChars: number): unknown {
  if (typeof text !== "string" || text.length > maxChars) return undefined;
  try {
    return JSONParse(text);
  } catch {
    return undefined;
  }
}

/**
 * The bytes of canonical, padded base64 (RFC 4648, sections 4 and 3.5), or undefined: Node's
 * decoder skips what is not base64, so the bytes are encoded back and must give the very text
 * (any other character, a missing pad, non-zero pad bits or the URL alphabet do not). Linear,
 * native, no regular expression.
 */
export function decodeBase64(text: string): Uint8Array | undefined {
  if (text.length === 0 || text.length % 4 !== 0) return undefined;
  const bytes = Buffer.from(text, "base64");
  return bytes.toString("base64") === text ? bytes : undefined;
}

/** The bytes padded base64 of `length` characters ending in `padding` "=" decodes to. */
const decodedLength = (length: number, padding: number): number => (length / 4) * 3 - padding;

/** The longest result text a call with these limits can have: longer is not a host's. */
export function maxResultChars(limits: ResultLimits): number {
  const content = MAX_JSON_CHARS_PER_CODE_POINT * Math.max(limits.maxContentCodePoints, Limits.MAX_STRING_CODE_POINTS);
  const attachments = Math.ceil(limits.maxAttachmentBytes / 3) * 4 + limits.maxAttachments * (ATTACHMENT_OVERHEAD_CHARS + 4);
  return content + attachments + RESULT_OVERHEAD_CHARS;
}

/**
 * A job's return value as the agent reads it from the job's hash (its raw text). Anything not
 * a host's result is a TOOL_EXECUTION_FAILED outcome naming what was wrong.
 */
export function decodeResult(text: unknown, limits: ResultLimits): DecodedResult {
  if (typeof text === "string" && text.length > maxResultChars(limits)) return malformed("the host's result is over the call's budgets");
  const value = readJson(text, Number.POSITIVE_INFINITY);
  if (typeof value !== "object" || value === null || ArrayIsArray(value)) return malformed("the host's result is not an object");
  const facts = decodeFacts(readOwnDataProperty(value, "facts"));
  if (typeof facts === "string") return malformed(facts);
  const kind = decodeKind(value, limits);
  // A durable job's host says the outcome is the one it recorded (as untrusted as the record itself).
  const decoded = readOwnDataProperty(value, "recorded") === true && !kind.notStarted ? { ...kind, recorded: true as const } : kind;
  if (facts === undefined) return decoded;
  // The facts first: a field added after a spread goes through V8's runtime (about 0.6 µs a call on Node 20).
  const withFacts = { facts, ...decoded };
  return facts.stopped === true && !decoded.stopped ? { ...withFacts, stopped: true } : withFacts;
}

function decodeKind(value: object, limits: ResultLimits): DecodedResult {
  const kind = readOwnDataProperty(value, "kind");
  if (kind === "result") {
    const content = readOwnDataProperty(value, "content");
    const isError = readOwnDataProperty(value, "isError");
    if (typeof content !== "string" || typeof isError !== "boolean") return malformed("the host's result has no content string");
    if (cutToCodePoints(content, limits.maxContentCodePoints).cut) return malformed("the host's content is over the content budget");
    // Bounded by the absolute limits here; the agent checks the call's budgets before publishing.
    const attachments = decodeAttachments(readOwnDataProperty(value, "attachments"));
    if (typeof attachments === "string") return malformed(attachments);
    const outcome = attachments === undefined ? { content, isError } : { content, isError, attachments: ObjectFreeze(attachments) };
    return { fatal: false, outcome: ObjectFreeze(outcome) as ToolOutcome, stopped: false };
  }
  if (kind === "fatal") {
    const message = readOwnDataProperty(value, "message");
    return {
      fatal: true,
      message: typeof message === "string" ? cutToCodePoints(message, Limits.MAX_STRING_CODE_POINTS).text : "",
      stopped: false,
    };
  }
  if (kind === "cancelled") return { fatal: false, outcome: failedOutcome("the host stopped the tool before it finished"), stopped: true };
  if (kind === "not-started") {
    const reason = readOwnDataProperty(value, "reason");
    const why = typeof reason === "string" && ObjectHasOwn(NOT_STARTED, reason) ? NOT_STARTED[reason] : undefined;
    return {
      fatal: false,
      outcome: failedOutcome(`the host did not start the tool: ${why ?? "it gave no known reason"}`),
      stopped: false,
      notStarted: true,
    };
  }
  return malformed("the host's result has an unknown kind");
}

/** Why a host did not start a job, as the agent says it (the reasons of protocol.ts's NotStartedReason). */
const NOT_STARTED: Readonly<Record<string, string>> = ObjectFreeze({
  cancelled: "the call was cancelled before the host could start it",
  "lock-lost": "the host no longer held the job's lock (it was cut off from Redis too long)",
  "lease-expired": "the agent's lease in Redis had expired (the agent had not reached Redis for longer than its redisLostMs)",
  unconfirmed: "the host could not reach Redis to confirm the call was still wanted",
  "no-agent": "the job was not made by a toolgate agent",
  durable: "the durable call's record no longer wanted this job (its claim was given up, or is another job's)",
});

/** An attachment as the agent decodes it: the pipeline adopts it only after the checks a tool's attachment passes. */
export type DecodedAttachment = DecodedBytes | ToolResourceLink;

/** An image, audio or file as the agent decodes it. */
interface DecodedBytes {
  readonly type: AttachmentKind;
  readonly mimeType: string;
  readonly data: Uint8Array;
  readonly name?: string;
  readonly uri?: string;
}

/**
 * A result's `attachments` (absent: none) as plain `{ type, mimeType, data, name?, uri? }`
 * records with exactly sized bytes, for the pipeline to adopt (which checks each kind's media
 * types, the bytes' signature, a file's name and URI); or why they are not a host's. The
 * decoded size is known before any byte is decoded: a forged giant costs nothing.
 */
export function decodeAttachments(value: unknown): readonly DecodedAttachment[] | undefined | string {
  if (value === undefined) return undefined;
  if (!ArrayIsArray(value)) return "the host's attachments are not a list";
  const count = value.length;
  if (count > Limits.ATTACHMENTS_LIMIT) return `the host sent ${count} attachments, over the limit of ${Limits.ATTACHMENTS_LIMIT}`;
  const decoded: DecodedAttachment[] = [];
  let total = 0;
  for (let index = 0; index < count; index += 1) {
    const member: unknown = value[index];
    if (typeof member !== "object" || member === null || ArrayIsArray(member)) return "a host's attachment is not an object";
    const type = readOwnDataProperty(member, "type");
    const mimeType = readOwnDataProperty(member, "mimeType");
    const name = readOwnDataProperty(member, "name");
    const uri = readOwnDataProperty(member, "uri");
    if (type === "resourceLink") {
      const link = linkWithinLimits(uri, name, mimeType, readOwnDataProperty(member, "description"));
      if (link === undefined) return "a host's resource link is malformed";
      decoded.push(link);
      continue;
    }
    const data = readOwnDataProperty(member, "data");
    if ((type !== "image" && type !== "audio" && type !== "file") || !isMimeTypeOf(type, mimeType)) {
      return "a host's attachment is not an image, audio or a file of a type toolgate carries";
    }
    if (!isOptionalShortString(name, MAX_FILE_NAME_CHARS) || !isOptionalShortString(uri, MAX_FILE_URI_CHARS)) {
      return "a host's attachment has a malformed name or uri";
    }
    if (typeof data !== "string" || data.length === 0 || data.length % 4 !== 0) return "a host's attachment data is not base64";
    total += decodedLength(data.length, data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0);
    if (total > Limits.ATTACHMENT_BYTES_LIMIT) return `the host's attachments are over the ${Limits.ATTACHMENT_BYTES_LIMIT}-byte limit`;
    const bytes = decodeBase64(data);
    if (bytes === undefined) return "a host's attachment data is not base64";
    // An exactly sized buffer of its own: the result's attachment owns it.
    const own = new NativeUint8Array(bytes.length);
    own.set(bytes);
    const record: { -readonly [key in keyof DecodedBytes]: DecodedBytes[key] } = {
      type,
      mimeType: mimeType as string,
      data: own,
    };
    if (name !== undefined) record.name = name as string;
    if (uri !== undefined) record.uri = uri as string;
    decoded.push(record);
  }
  return decoded;
}

function isOptionalShortString(value: unknown, maxChars: number): boolean {
  return value === undefined || (typeof value === "string" && value.length <= maxChars);
}

/** A result's `facts` (absent: none), or why they are not a host's. */
export function decodeFacts(value: unknown): HostFacts | undefined | string {
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || ArrayIsArray(value)) return "the host's facts are not an object";
  const waitMs = readOwnDataProperty(value, "waitMs");
  const runMs = readOwnDataProperty(value, "runMs");
  const threadId = readOwnDataProperty(value, "threadId");
  const killed = readOwnDataProperty(value, "killed");
  const stopped = readOwnDataProperty(value, "stopped");
  if (!isDuration(waitMs) || !isDuration(runMs) || typeof killed !== "boolean" || (stopped !== undefined && stopped !== true)) {
    return "the host's facts are malformed";
  }
  if (threadId !== undefined && (typeof threadId !== "number" || !NumberIsSafeInteger(threadId) || threadId < 0)) {
    return "the host's thread id is malformed";
  }
  return ObjectFreeze({
    waitMs,
    runMs,
    killed,
    ...(threadId === undefined ? {} : { threadId }),
    ...(stopped === true ? { stopped } : {}),
  });
}

function isDuration(value: unknown): value is number {
  return typeof value === "number" && NumberIsFinite(value) && value >= 0 && value <= MAX_FACT_MS;
}

function malformed(text: string): DecodedResult {
  return { fatal: false, outcome: failedOutcome(text), stopped: false };
}

/** A cancel reason as agents write it (a mark's value, a message's `reason`), or undefined. */
export function readCancelReason(value: unknown): CancelReason | undefined {
  return value === "abort" || value === "timeout" || value === "gave-up" ? value : undefined;
}

/** A cancel message from the queue's channel, or undefined when it is not one of ours. */
export function decodeCancel(message: unknown): { jobId: string; reason: CancelReason } | undefined {
  const parsed = readJson(message, MAX_CANCEL_CHARS);
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const jobId = readJobId(readOwnDataProperty(parsed, "jobId"));
  const reason = readCancelReason(readOwnDataProperty(parsed, "reason"));
  return jobId === undefined || reason === undefined ? undefined : { jobId, reason };
}

/** A progress event's data, parsed (the agent's progress channel checks it as a tool's report). */
export function decodeProgress(data: unknown): unknown {
  return readJson(data, MAX_PROGRESS_CHARS);
}

/**
 * The well-formed entries of an XREAD reply on one stream, each handed to `visit` in order as it
 * is read (the agent's reader allocates no event objects), and the id of the reply's last entry
 * (where the next read starts, even when that entry itself is not well-formed).
 */
export function forEachStreamEvent(
  reply: unknown,
  visit: (id: string, event: string, jobId: string, data: string | undefined) => void,
): string | undefined {
  let lastId: string | undefined;
  const stream = ArrayIsArray(reply) ? reply[0] : undefined;
  const entries = ArrayIsArray(stream) ? stream[1] : undefined;
  if (!ArrayIsArray(entries)) return lastId;
  for (let index = 0; index < entries.length; index += 1) {
    const entry: unknown = entries[index];
    const id = ArrayIsArray(entry) ? readStreamId(entry[0]) : undefined;
    if (id === undefined) continue;
    lastId = id;
    const fields = (entry as unknown[])[1];
    if (!ArrayIsArray(fields)) continue;
    let event: unknown;
    let jobId: unknown;
    let data: unknown;
    for (let field = 0; field + 1 < fields.length; field += 2) {
      const name: unknown = fields[field];
      if (name === "event") event = fields[field + 1];
      else if (name === "jobId") jobId = fields[field + 1];
      else if (name === "data") data = fields[field + 1];
    }
    if (typeof event === "string" && typeof jobId === "string") visit(id, event, jobId, typeof data === "string" ? data : undefined);
  }
  return lastId;
}

/** The id of the newest entry in an XREVRANGE … COUNT 1 reply, null when the stream has none, undefined when the reply is not one. */
export function decodeStreamTop(reply: unknown): string | null | undefined {
  if (!ArrayIsArray(reply)) return undefined;
  if (reply.length === 0) return null;
  const entry: unknown = reply[0];
  return ArrayIsArray(entry) ? readStreamId(entry[0]) : undefined;
}

/** A stream entry id "<ms>-<seq>" (decimal, each at most 20 digits), or undefined. */
export function readStreamId(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const dash = value.indexOf("-");
  if (dash < 1 || dash > 20 || value.length - dash - 1 < 1 || value.length - dash - 1 > 20) return undefined;
  for (let index = 0; index < value.length; index += 1) {
    const unit = StringPrototypeCharCodeAt(value, index);
    if (index !== dash && (unit < 0x30 || unit > 0x39)) return undefined;
  }
  return value;
}

/** Orders two stream ids read by `readStreamId`: negative when `a` is older. */
export function compareStreamIds(a: string, b: string): number {
  const [aMs, aSeq] = splitStreamId(a);
  const [bMs, bSeq] = splitStreamId(b);
  return compareDecimal(aMs, bMs) || compareDecimal(aSeq, bSeq);
}

function splitStreamId(id: string): [string, string] {
  const dash = id.indexOf("-");
  return [trimZeros(id.slice(0, dash)), trimZeros(id.slice(dash + 1))];
}

function trimZeros(digits: string): string {
  let start = 0;
  while (start < digits.length - 1 && digits[start] === "0") start += 1;
  return digits.slice(start);
}

function compareDecimal(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The job states script's reply (state and payload per job, in order), read entry by entry. */
export function decodeJobStates(reply: unknown, count: number): JobState[] {
  const states: JobState[] = [];
  const flat = ArrayIsArray(reply) && reply.length === 2 * count ? reply : undefined;
  for (let index = 0; index < count; index += 1) {
    const state: unknown = flat?.[2 * index];
    const payload: unknown = flat?.[2 * index + 1];
    if (state === "completed" && typeof payload === "string") states.push({ state, returnValue: payload });
    else if (state === "failed" && typeof payload === "string") states.push({ state, failedReason: payload });
    else if (state === "waiting" || state === "running" || state === "stalled" || state === "missing" || state === "not-a-job") {
      states.push({ state });
    } else states.push({ state: "waiting" }); // not a reply of ours: the next look decides
  }
  return states;
}

/**
 * A confirmation's HMGET reply (job-states.ts's FINISHED_FIELDS): the job's state when its hash
 * says it finished (completed with its return value, or failed with its reason); anything else,
 * an unfinished hash, no job, or not a reply of ours, is "waiting" (the heartbeat decides).
 * `length`: the fields the HMGET asked for (a durable job's asks for one more after these four,
 * read by its caller from the same array).
 */
export function decodeFinishedJob(reply: unknown, length = 4): JobState {
  if (!ArrayIsArray(reply) || reply.length !== length) return { state: "waiting" };
  const [timestamp, finishedOn, returnValue, failedReason] = reply as unknown[];
  if (typeof timestamp !== "string" || typeof finishedOn !== "string") return { state: "waiting" };
  if (typeof returnValue === "string") return { state: "completed", returnValue };
  return { state: "failed", failedReason: typeof failedReason === "string" ? failedReason : "" };
}

/** The start check's MGET reply, [mark, lock, lease]; undefined when it is not one. */
export function decodeStartReading(reply: unknown): StartReading | undefined {
  if (!ArrayIsArray(reply) || reply.length !== 3) return undefined;
  const [mark, lock, lease] = reply as unknown[];
  return { marked: mark !== null, lock: typeof lock === "string" ? lock : undefined, lease: readLease(lease) };
}

/** A lease's value: "<renewed at> <expires at>", server milliseconds, as the agent's renewal writes it (cancel.ts). */
export function readLease(value: unknown): { renewedAt: number; expiresAt: number } | undefined {
  if (typeof value !== "string" || value.length > 64) return undefined;
  const space = value.indexOf(" ");
  const renewedAt = readMilliseconds(value.slice(0, space));
  const expiresAt = readMilliseconds(value.slice(space + 1));
  return space > 0 && renewedAt !== undefined && expiresAt !== undefined && expiresAt > renewedAt ? { renewedAt, expiresAt } : undefined;
}

/** The server's time from a TIME reply ([seconds, microseconds]), in ms; undefined when it is not one. */
export function decodeServerTime(reply: unknown): number | undefined {
  if (!ArrayIsArray(reply) || reply.length !== 2) return undefined;
  const seconds = readMilliseconds(reply[0]);
  const micros = readMilliseconds(reply[1]);
  return seconds === undefined || micros === undefined || micros >= 1_000_000 ? undefined : seconds * 1000 + Math.floor(micros / 1000);
}

/** Decimal digits (at most 15) as a number. */
function readMilliseconds(text: unknown): number | undefined {
  if (typeof text !== "string" || text.length === 0 || text.length > 15) return undefined;
  for (let index = 0; index < text.length; index += 1) {
    const unit = StringPrototypeCharCodeAt(text, index);
    if (unit < 0x30 || unit > 0x39) return undefined;
  }
  return Number(text);
}

/** The host's reading of a job's data (BullMQ parsed it from the job's hash): only its own data fields. */
export interface JobData {
  readonly call: { type: "toolCall"; id: unknown; name: unknown; arguments: unknown };
  readonly callId: string | undefined;
  /** Checked by the host's pipeline as a call's own limit (a malformed one refuses the job). */
  readonly timeoutMs: number | undefined;
  readonly progress: boolean;
  readonly attachmentBudgets: unknown;
  /** A durable job's settings, unread (durable.ts reads them). */
  readonly durable: unknown;
}

export function decodeJobData(data: unknown): JobData {
  // One Proxy check for the record, then its own data properties (readOwnDataProperty made the
  // check once a field: six calls into Node a job).
  const record = typeof data === "object" && data !== null && !ArrayIsArray(data) && !isProxy(data) ? data : {};
  const callId = ownDataOr(record, "callId", undefined);
  return {
    // The host's pipeline snapshots and checks the call as any caller's (its budgets bound the arguments).
    call: {
      type: "toolCall",
      id: callId,
      name: ownDataOr(record, "toolName", undefined),
      arguments: ownDataOr(record, "arguments", undefined),
    },
    callId: typeof callId === "string" ? callId : undefined,
    timeoutMs: ownDataOr(record, "timeoutMs", undefined) as number | undefined,
    progress: ownDataOr(record, "progress", undefined) === true,
    attachmentBudgets: ownDataOr(record, "attachmentBudgets", undefined),
    durable: ownDataOr(record, "durable", undefined),
  };
}
