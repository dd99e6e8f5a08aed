// The agent's periodic look at its jobs, in one atomic script per tick: the fault path that
// does not depend on events arriving. And its confirmation of the jobs an event said finished:
// one HMGET of the fields that say so per job (a durable job's host mark among them), all in
// one request (an event is a hint anyone can write: a forged one meets a hash without
// `finishedOn`, and is not acted on). A job whose host renews no lock after having started
// has lost its host; a job gone from Redis was lost with the server's data; a finished job
// whose event never came is read from its hash. Each job is read alone: a key of the wrong
// type (not a job's hash) is that job's "not-a-job", never the whole look's failure.
// docs/queue.md — Failure scenarios (a lost host, a lost Redis, a missed event).
import type { Redis } from "ioredis";
import { ArrayIsArray } from "../contract/primordials.js";
import { HOST_RECORDED_FIELD } from "../durable/scripts.js";
import type { QueueKeys } from "./keys.js";
import { decodeFinishedJob, decodeJobStates, type JobState } from "./redis-data.js";
import { type QueueScript, runScript } from "./scripts.js";

// moveToActive sets `processedOn` and the lock in one script; moveToFinished sets
// `finishedOn` and `returnvalue` (or `failedReason`) and drops the lock in one script; so
// "started, not finished, no lock" is only ever a host that stopped renewing it.
// s, p: the state and its payload; f: the hash's fields, or a WRONGTYPE error as a value.
const JOB_STATES_SCRIPT: QueueScript = {
  name: "toolgateJobStates",
  lua: `local o={}
for i=1,#KEYS do
local k=KEYS[i]
local f=redis.pcall("HMGET",k,"timestamp","finishedOn","returnvalue","failedReason","processedOn")
local s,p="waiting",""
if f.err then s="not-a-job"
elseif not f[1] then s=redis.call("EXISTS",k)==1 and "not-a-job" or "missing"
elseif f[2] then if f[3] then s,p="completed",f[3] else s,p="failed",f[4] or "" end
elseif redis.call("EXISTS",k..":lock")==1 then s="running"
elseif f[5] then s="stalled" end
o[#o+1]=s o[#o+1]=p
end
return o`,
};

/** The state of every job in `jobIds`, in order. */
export async function readJobStates(client: Redis, keys: QueueKeys, jobIds: readonly string[]): Promise<JobState[]> {
  const names = jobIds.map((jobId) => keys.job(jobId));
  return decodeJobStates(await runScript(client, JOB_STATES_SCRIPT, names, []), jobIds.length);
}

/** The fields a confirmation reads: the job's own (a hash without `timestamp` is no job), whether it finished, and how. */
export const FINISHED_FIELDS: readonly string[] = ["timestamp", "finishedOn", "returnvalue", "failedReason"];
/** A durable job's confirmation reads one field more, its host's mark (the same HMGET: one read serves it). */
const DURABLE_FINISHED_FIELDS: readonly string[] = [...FINISHED_FIELDS, HOST_RECORDED_FIELD];

/** A job to confirm: a durable call's also has its host's mark read. */
export interface FinishedJob {
  readonly jobId: string;
  readonly durable: boolean;
  /** Its read as `finishedRead` made it before, when the caller keeps it (the job's key built once). */
  readonly read?: readonly string[] | undefined;
}

/** What one confirmation read says: the job's state, and whether its host's outcome is the recorded one (durable jobs only). */
export interface FinishedReading {
  readonly job: JobState;
  readonly hostRecorded: boolean;
}

/** The one confirmation's HMGET arguments for a job: its key and its fields (the read that also rides behind the events read). */
export function finishedRead(keys: QueueKeys, { jobId, durable, read }: FinishedJob): readonly string[] {
  return read ?? [keys.job(jobId), ...(durable ? DURABLE_FINISHED_FIELDS : FINISHED_FIELDS)];
}

/**
 * One confirmation read's reply (untrusted): the state its hash says, and for a durable job
 * whether the mark names this very job (a mark is the host's, written with its outcome).
 */
export function finishedReading(reply: unknown, { jobId, durable }: FinishedJob): FinishedReading {
  if (!durable) return { job: decodeFinishedJob(reply), hostRecorded: false };
  const job = decodeFinishedJob(reply, DURABLE_FINISHED_FIELDS.length);
  // The mark is the last field; a reply of another length decoded as "waiting" above, unmarked.
  const hostRecorded = ArrayIsArray(reply) && reply.length === DURABLE_FINISHED_FIELDS.length && reply[FINISHED_FIELDS.length] === jobId;
  return { job, hostRecorded };
}

/** The confirmation of `jobs`, in order, one HMGET each in one request: a state is "waiting" unless its hash says it finished (left to the heartbeat). */
export async function readFinishedJobs(client: Redis, keys: QueueKeys, jobs: readonly FinishedJob[]): Promise<FinishedReading[]> {
  if (jobs.length === 1) {
    const job = jobs[0] as FinishedJob;
    return [finishedReading(await client.hmget(...(finishedRead(keys, job) as [string, ...string[]])), job)];
  }
  const pipeline = client.pipeline();
  for (const job of jobs) {
    pipeline.hmget(...(finishedRead(keys, job) as [string, ...string[]]));
  }
  const replies = await pipeline.exec();
  return jobs.map((job, index) => {
    const reply = replies?.[index];
    return finishedReading(reply?.[0] === null ? reply[1] : undefined, job);
  });
}
