// The agent's cancel of a job, in one atomic script: the mark (which hosts poll for their
// running jobs), the removal of the job if it is still waiting (then no host can ever take
// it: a host takes a job with BullMQ's own atomic moveToActive, which can only find it in the
// wait list), and the message that aborts the tool's signal on the host that took it.
// One round trip, as the MULTI it replaces; the host then needs no read of the mark before
// it starts a job.
// docs/queue.md — Guarantees, and what is not guaranteed.
import type { Redis } from "ioredis";
import { BULL_PREFIX, CANCEL_MARK_TTL_MS, type CancelReason, cancelChannel, cancelMarkKey, encodeCancel, jobKey } from "./protocol.js";

// KEYS: the mark, the wait list, the paused list, the job's hash. ARGV: reason, mark TTL, job id, channel, message.
const CANCEL_SCRIPT = `
redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
local removed = redis.call("LREM", KEYS[2], 0, ARGV[3]) + redis.call("LREM", KEYS[3], 0, ARGV[3])
if removed > 0 then redis.call("DEL", KEYS[4]) end
redis.call("PUBLISH", ARGV[4], ARGV[5])
return removed
`;

/** Cancels `jobId`: resolves to true when the job was still waiting (it is gone, and never starts). */
export async function cancelJob(client: Redis, queue: string, jobId: string, reason: CancelReason): Promise<boolean> {
  const removed = await client.eval(
    CANCEL_SCRIPT,
    4,
    cancelMarkKey(queue, jobId),
    `${BULL_PREFIX}:${queue}:wait`,
    `${BULL_PREFIX}:${queue}:paused`,
    jobKey(queue, jobId),
    reason,
    CANCEL_MARK_TTL_MS,
    jobId,
    cancelChannel(queue),
    encodeCancel(jobId, reason),
  );
  return removed !== 0;
}
