// The agent's periodic look at its jobs, in one atomic script per tick: the fault path that
// does not depend on events arriving. A job whose host renews no lock after having started
// has lost its host; a job gone from Redis was lost with the server's data; a finished job
// whose event never came is read from its hash.
// docs/queue.md — Failure scenarios (a lost host, a lost Redis, a missed event).
import type { Redis } from "ioredis";
import { jobKey } from "./protocol.js";

/** What Redis says about one job. */
export type JobState =
  | { readonly state: "waiting" | "running" | "stalled" | "missing" }
  | { readonly state: "completed"; readonly returnValue: string }
  | { readonly state: "failed"; readonly failedReason: string };

// moveToActive sets `processedOn` and the lock in one script; moveToFinished sets
// `finishedOn` and `returnvalue` (or `failedReason`) and drops the lock in one script; so
// "started, not finished, no lock" is only ever a host that stopped renewing it.
const JOB_STATES_SCRIPT = `
local out = {}
for index = 1, #KEYS do
  local key = KEYS[index]
  local fields = redis.call("HMGET", key, "timestamp", "finishedOn", "returnvalue", "failedReason", "processedOn")
  if not fields[1] then
    out[#out + 1] = "missing"; out[#out + 1] = ""
  elseif fields[2] then
    if fields[3] then out[#out + 1] = "completed"; out[#out + 1] = fields[3]
    else out[#out + 1] = "failed"; out[#out + 1] = fields[4] or "" end
  elseif redis.call("EXISTS", key .. ":lock") == 1 then
    out[#out + 1] = "running"; out[#out + 1] = ""
  elseif fields[5] then
    out[#out + 1] = "stalled"; out[#out + 1] = ""
  else
    out[#out + 1] = "waiting"; out[#out + 1] = ""
  end
end
return out
`;

/** The state of every job in `jobIds`, in order. */
export async function readJobStates(client: Redis, queue: string, jobIds: readonly string[]): Promise<JobState[]> {
  const keys = jobIds.map((jobId) => jobKey(queue, jobId));
  const flat = (await client.eval(JOB_STATES_SCRIPT, keys.length, ...keys)) as string[];
  const states: JobState[] = [];
  for (let index = 0; index < jobIds.length; index += 1) {
    const state = flat[2 * index];
    const payload = flat[2 * index + 1] ?? "";
    if (state === "completed") states.push({ state, returnValue: payload });
    else if (state === "failed") states.push({ state, failedReason: payload });
    else states.push({ state: state === "running" || state === "stalled" || state === "missing" ? state : "waiting" });
  }
  return states;
}
