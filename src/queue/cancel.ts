// The agent's cancels and its lease, in one atomic script. A cancel sets the job's mark (hosts
// read it before they start a job that waited), removes the job if it is still waiting (then no
// host can ever take it: a host takes a job with BullMQ's atomic moveToActive, which finds it
// only in the wait list), and publishes the message that aborts the tool's signal on the host
// that took it. The lease says the agent still reaches Redis: hosts start an agent's jobs only
// while it is fresh. Its value is when it was renewed and when it runs out, on the server's
// clock ("<ms> <ms>", read by redis-data.ts), and Redis drops it then. A renewal always comes after the cancels of every call the agent has
// given up (they travel in the same script, first), so a host that sees a lease renewed after
// it connected also sees the mark of every job the agent gave up before that renewal.
// docs/queue.md — Guarantees, and what is not guaranteed.
import type { Redis } from "ioredis";
import type { QueueKeys } from "./keys.js";
import { CANCEL_MARK_TTL_MS, type CancelReason, encodeCancel } from "./protocol.js";
import { type QueueScript, runScript } from "./scripts.js";

/** One job the agent stops waiting for. */
export interface CancelOrder {
  readonly jobId: string;
  readonly reason: CancelReason;
}

// KEYS: the wait list, the paused list, the lease; then each cancel's mark and job hash.
// ARGV: mark TTL, channel, lease TTL (0: no renewal); then each cancel's job id, reason, message.
// A list or hash of the wrong type (not BullMQ's) costs that removal, never the script.
const CANCEL_SCRIPT: QueueScript = {
  name: "toolgateCancel",
  lua: `
for index = 0, (#KEYS - 3) / 2 - 1 do
  local jobId = ARGV[4 + 3 * index]
  redis.call("SET", KEYS[4 + 2 * index], ARGV[5 + 3 * index], "PX", ARGV[1])
  local removed = 0
  for list = 1, 2 do
    local count = redis.pcall("LREM", KEYS[list], 0, jobId)
    if type(count) == "number" then removed = removed + count end
  end
  if removed > 0 then redis.call("DEL", KEYS[5 + 2 * index]) end
  redis.call("PUBLISH", ARGV[2], ARGV[6 + 3 * index])
end
if ARGV[3] ~= "0" then
  local time = redis.call("TIME")
  local now = time[1] * 1000 + math.floor(time[2] / 1000)
  redis.call("SET", KEYS[3], string.format("%.0f %.0f", now, now + tonumber(ARGV[3])), "PX", ARGV[3])
end
return 1
`,
};

/**
 * Writes `cancels` (a job still waiting is gone after this, and never starts), then, given
 * `lease`, renews the agent's lease for `lease.ms`: one round trip.
 */
export async function cancelAndRenew(
  client: Redis,
  keys: QueueKeys,
  cancels: readonly CancelOrder[],
  lease: { readonly agentId: string; readonly ms: number } | undefined,
): Promise<void> {
  const names: string[] = [keys.wait, keys.paused, lease === undefined ? keys.wait : keys.lease(lease.agentId)];
  const args: (string | number)[] = [CANCEL_MARK_TTL_MS, keys.cancelChannel, lease === undefined ? 0 : lease.ms];
  for (const { jobId, reason } of cancels) {
    names.push(keys.mark(jobId), keys.job(jobId));
    args.push(jobId, reason, encodeCancel(jobId, reason));
  }
  await runScript(client, CANCEL_SCRIPT, names, args);
}
