// Every Redis name the queue uses (keys and the cancel channel), made by one function from
// parts that one check admits: queue names, job ids, agent ids and the fixed prefixes alike.
// BullMQ and ioredis must encode a part to the same bytes, or the agent, BullMQ's scripts and
// the hosts look at different keys for one job: ioredis sends strings as UTF-8 with a lone
// surrogate replaced by U+FFFD, while BullMQ packs some key parts with msgpack, which writes a
// lone surrogate as its own three bytes (a queue name with one lost every call's job). So a
// part must be well-formed UTF-16 (then both encode it as plain UTF-8), without control
// characters (they reach logs and `redis-cli` output as they are), without BullMQ's separator
// ":", and at most MAX_KEY_PART_LENGTH code units long. Job ids are made to pass (the call id
// in them is escaped to printable ASCII); a queue name that does not pass is refused up front.
// A queue's names all start with its prefix (BullMQ's `prefix`, "bull" by default): toolgate's
// own names sit beside BullMQ's under it, so that a hash-tagged prefix (`{tools}`) puts every
// key of a queue on one Redis Cluster slot (each of its scripts touches several) and one ACL
// key pattern covers the queue. The default prefix keeps the names of before (`toolgate:<queue>:…`).
// docs/queue.md — Topology (job ids), Options (queue, prefix); docs/operations.md — Running Redis for toolgate.
import { ArrayPrototypeJoin, StringPrototypeCharCodeAt, StringPrototypeSlice } from "../contract/primordials.js";
import { cutToCodePoints } from "../contract/serialize.js";

/** The longest part: the longest job id fits (an agent id, a sequence, 64 code points escaped at up to 12 characters each). */
export const MAX_KEY_PART_LENGTH = 1024;
/** The longest queue name. */
export const MAX_QUEUE_NAME_LENGTH = 128;
/** BullMQ's default key prefix: jobs live at `bull:<queue>:<jobId>`. */
export const BULL_PREFIX = "bull";
const TOOLGATE_PREFIX = "toolgate";
/** The longest prefix. */
export const MAX_PREFIX_LENGTH = 128;
/** Code points of a call id kept in its job id. */
const MAX_CALL_ID_IN_JOB_ID = 64;
/** An agent's id: `tg-` and a UUID. It starts every job id the agent makes, up to the first ".". */
const AGENT_ID_LENGTH = 39;

/**
 * Why `part` cannot be a part of a Redis name, or undefined when it can: one pass over its
 * code units, no regular expression.
 */
export function keyPartProblem(part: string, maxLength = MAX_KEY_PART_LENGTH): string | undefined {
  if (part.length === 0) return "is empty";
  if (part.length > maxLength) return `is longer than ${maxLength} characters`;
  for (let index = 0; index < part.length; index += 1) {
    const unit = StringPrototypeCharCodeAt(part, index);
    if (unit === 0x3a) return 'contains ":" (the key separator)';
    if (unit < 0x20 || (unit >= 0x7f && unit <= 0x9f)) return `contains the control character U+${hex(unit)}`;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = index + 1 < part.length ? StringPrototypeCharCodeAt(part, index + 1) : 0;
      if (next < 0xdc00 || next > 0xdfff) return `contains a lone surrogate (U+${hex(unit)})`;
      index += 1;
    } else if (unit >= 0xdc00 && unit <= 0xdfff) {
      return `contains a lone surrogate (U+${hex(unit)})`;
    }
  }
  return undefined;
}

/** The one maker of Redis names: its parts joined by ":", each checked (a part that fails is a bug here, never sent). */
export function redisName(...parts: string[]): string {
  for (let index = 0; index < parts.length; index += 1) {
    const problem = keyPartProblem(parts[index] as string);
    if (problem !== undefined) throw new Error(`toolgate: a Redis key part ${problem}`);
  }
  return ArrayPrototypeJoin(parts, ":");
}

/** The names of one queue, both sides' (the queue name already checked by `keyPartProblem`). */
export interface QueueKeys {
  readonly queue: string;
  /** BullMQ's event stream, which the agent reads and hosts add thread kills to. */
  readonly events: string;
  readonly wait: string;
  readonly paused: string;
  /** The pub/sub channel on which agents tell hosts to stop a job. */
  readonly cancelChannel: string;
  /** A job's hash. */
  job(jobId: string): string;
  /** The lock its host holds while it has the job. */
  lock(jobId: string): string;
  /** The agent's mark on a job it stopped waiting for: no host starts a marked job. */
  mark(jobId: string): string;
  /** An agent's lease: hosts start its jobs only while it is fresh. */
  lease(agentId: string): string;
  /** A durable call's record (its key: a SHA-256 in hex), on the queue's slot. */
  durable(key: string): string;
}

/**
 * The names of `queue` under `prefix` (both already checked by `keyPartProblem`). BullMQ's are
 * `<prefix>:<queue>:…`; toolgate's are `<prefix>:<queue>:toolgate:…` (BullMQ puts nothing under
 * a "toolgate" part: its job keys' own parts are fixed words, and agents' job ids start "tg-"),
 * or `toolgate:<queue>:…` under the default prefix, as before there was a prefix option.
 */
export function queueKeys(queue: string, prefix: string = BULL_PREFIX): QueueKeys {
  // The queue's fixed parts are checked once, here: a job's names then check only the job id
  // (the agent builds a job's key on every events read; three checks a key were 2-3k
  // instructions a call, counted under callgrind).
  const jobs = `${redisName(prefix, queue)}:`;
  const own = prefix === BULL_PREFIX ? `${redisName(TOOLGATE_PREFIX, queue)}:` : `${redisName(prefix, queue, TOOLGATE_PREFIX)}:`;
  return {
    queue,
    events: `${jobs}events`,
    wait: `${jobs}wait`,
    paused: `${jobs}paused`,
    cancelChannel: `${own}cancel`,
    job: (jobId) => jobs + checkedPart(jobId),
    lock: (jobId) => `${jobs}${checkedPart(jobId)}:lock`,
    mark: (jobId) => `${own}cancelled:${checkedPart(jobId)}`,
    lease: (agentId) => `${own}lease:${checkedPart(agentId)}`,
    durable: (key) => `${own}durable:${checkedPart(key)}`,
  };
}

/** `part`, checked as `redisName` checks each part (a part that fails is a bug here, never sent). */
function checkedPart(part: string): string {
  const problem = keyPartProblem(part);
  if (problem !== undefined) throw new Error(`toolgate: a Redis key part ${problem}`);
  return part;
}

/**
 * The hash tag Redis Cluster hashes `name` by, as the server finds it (the text between the
 * first "{" and the first "}" after it, when not empty), or undefined when the whole name is hashed.
 */
export function hashTagOf(name: string): string | undefined {
  let open = -1;
  for (let index = 0; index < name.length; index += 1) {
    const unit = StringPrototypeCharCodeAt(name, index);
    if (open < 0) {
      if (unit === 0x7b) open = index;
    } else if (unit === 0x7d) {
      return index > open + 1 ? StringPrototypeSlice(name, open + 1, index) : undefined;
    }
  }
  return undefined;
}

/**
 * A job id of agent `agentId`: `<agent id>.<sequence>.<call id, escaped>`. The call id keeps
 * at most 64 code points, in printable ASCII: every code unit outside "!".."~", and the escape
 * "%" and the separator ":" themselves, becomes "%XX" (ASCII) or "%uXXXX" (above). Each escape
 * starts with "%" and none is a prefix of another, so distinct call ids stay distinct.
 */
export function jobIdFor(agentId: string, sequence: number, callId: string): string {
  // The common call id is already printable ASCII without "%" or ":", and short: it is kept
  // as it is, and the id is a valid key part by construction (an agent id, digits, printable
  // ASCII; at most 39 + 1 + 16 + 1 + 64 characters), so it is not checked again.
  if (callId.length <= MAX_CALL_ID_IN_JOB_ID && isPlainCallId(callId)) return `${agentId}.${sequence}.${callId}`;
  const kept = cutToCodePoints(callId, MAX_CALL_ID_IN_JOB_ID).text;
  let part = "";
  for (let index = 0; index < kept.length; index += 1) {
    const unit = StringPrototypeCharCodeAt(kept, index);
    if (unit > 0x20 && unit < 0x7f && unit !== 0x25 && unit !== 0x3a) part += kept[index];
    else if (unit < 0x80) part += `%${hex(unit).slice(2)}`;
    else part += `%u${hex(unit)}`;
  }
  return redisName(`${agentId}.${sequence}.${part}`);
}

/** Every code unit printable ASCII ("!".."~") other than the escape "%" and the separator ":". */
function isPlainCallId(callId: string): boolean {
  if (callId.length === 0) return false;
  for (let index = 0; index < callId.length; index += 1) {
    const unit = StringPrototypeCharCodeAt(callId, index);
    if (unit <= 0x20 || unit >= 0x7f || unit === 0x25 || unit === 0x3a) return false;
  }
  return true;
}

/** The agent id that starts a job id, or undefined when the job id is not one an agent makes. */
export function agentIdOf(jobId: unknown): string | undefined {
  if (typeof jobId !== "string" || jobId.length <= AGENT_ID_LENGTH || jobId[AGENT_ID_LENGTH] !== ".") return undefined;
  if (keyPartProblem(jobId) !== undefined) return undefined;
  return agentIdShape(jobId);
}

/** The agent id that starts a job id (a valid key part), or undefined: "tg-", a lowercase UUID, then ".". */
function agentIdShape(jobId: string): string | undefined {
  if (jobId.length <= AGENT_ID_LENGTH || jobId[AGENT_ID_LENGTH] !== ".") return undefined;
  if (jobId[0] !== "t" || jobId[1] !== "g" || jobId[2] !== "-") return undefined;
  for (let index = 3; index < AGENT_ID_LENGTH; index += 1) {
    const unit = StringPrototypeCharCodeAt(jobId, index);
    const dash = index === 11 || index === 16 || index === 21 || index === 26;
    if (dash ? unit !== 0x2d : !((unit >= 0x30 && unit <= 0x39) || (unit >= 0x61 && unit <= 0x66))) return undefined;
  }
  return jobId.slice(0, AGENT_ID_LENGTH);
}

/**
 * `agentIdOf` for a job id already checked by `readJobId` (the host's): the key part check is
 * not made again. `known`, an agent id this host met before: a job id that starts with it and
 * "." is that agent's (one native comparison instead of the scan).
 */
export function agentIdOfChecked(jobId: string, known: string | undefined): string | undefined {
  if (known !== undefined && jobId.length > AGENT_ID_LENGTH && jobId[AGENT_ID_LENGTH] === "." && jobId.startsWith(known)) return known;
  return agentIdShape(jobId);
}

/** A job id as read from Redis (BullMQ's job, a cancel message): a string that is a valid key part, else undefined. */
export function readJobId(value: unknown): string | undefined {
  return typeof value === "string" && keyPartProblem(value) === undefined ? value : undefined;
}

function hex(unit: number): string {
  return unit.toString(16).toUpperCase().padStart(4, "0");
}
