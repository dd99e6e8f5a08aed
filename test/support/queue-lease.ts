// Jobs added by hand (a test playing an agent with BullMQ alone) need what an agent's jobs
// have: an id that starts with the agent's id, and the agent's lease in Redis, renewed after
// the host connected (src/queue/start-check.ts). This writes one as an agent does: when it was
// renewed and when it runs out, on the server's clock, for `ms`.
import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";

/** A fresh agent id with its lease written now; job ids of that agent are `<id>.<n>.<call id>`. */
export async function handmadeAgent(client: Redis, queue: string, ms = 60_000): Promise<string> {
  const agentId = `tg-${randomUUID()}`;
  await renewHandmadeLease(client, queue, agentId, ms);
  return agentId;
}

export async function renewHandmadeLease(client: Redis, queue: string, agentId: string, ms = 60_000): Promise<void> {
  await client.eval(
    'local t = redis.call("TIME") local now = t[1] * 1000 + math.floor(t[2] / 1000) return redis.call("SET", KEYS[1], string.format("%.0f %.0f", now, now + tonumber(ARGV[1])), "PX", ARGV[1])',
    1,
    `toolgate:${queue}:lease:${agentId}`,
    ms,
  );
}
