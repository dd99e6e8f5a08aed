// A durable call's claim and its job's add leave the agent in one socket write, and a host's
// outcome and BullMQ's completion of the job leave the host in one (durable.ts: coalesceWrites):
// each write to a loopback socket costs the agent, Redis and the host a system call and a
// wake-up, far more CPU than the script. Watched on the connection's own stream.
import { Redis } from "ioredis";
import { afterAll, describe, expect, test } from "vitest";
import { durableKeyOf } from "../../src/durable/key.js";
import { QueueAgentDurable, QueueHostDurable, readQueueDurableOptions } from "../../src/queue/durable.js";
import { queueKeys } from "../../src/queue/keys.js";
import { findRedis, uniqueQueue } from "../support/redis.js";

const found = await findRedis();
const url = "url" in found ? found.url : "";

type Stream = { write: (chunk: unknown, ...rest: unknown[]) => boolean; writableCorked: number };

/** Each write `client` hands its socket from now on, and whether the socket was corked then (held for one write). */
function watchWrites(client: Redis): { writes: { chunk: string; corked: boolean }[]; stream: Stream } {
  const stream = client.stream as unknown as Stream;
  const writes: { chunk: string; corked: boolean }[] = [];
  const write = stream.write;
  stream.write = function (this: unknown, chunk: unknown, ...rest: unknown[]) {
    writes.push({ chunk: String(chunk), corked: stream.writableCorked > 0 });
    return write.call(this, chunk, ...rest);
  };
  return { writes, stream };
}

describe.runIf(url !== "")("durable queue calls: one write for the claim and its job", () => {
  const clients: Redis[] = [];
  afterAll(() => {
    for (const client of clients) client.disconnect();
  });

  test("the early claim and the command sent right after it on that connection go out in one write, in order", async () => {
    const [control, jobClient] = [new Redis(url), new Redis(url)];
    clients.push(control, jobClient);
    await Promise.all([control.ping(), jobClient.ping()]);
    const queue = uniqueQueue("coalesce");
    const keys = queueKeys(queue);
    const settings = readQueueDurableOptions({ assumeNoEviction: true }, false);
    const durable = new QueueAgentDurable(control, keys, settings, 1000, () => "job-1", jobClient);
    const { writes, stream } = watchWrites(jobClient);
    const claim = await durable.claim({
      key: "a".repeat(64),
      fingerprint: "f".repeat(64),
      toolName: "ping",
      maxAttempts: 1,
      token: "t",
      state: "running",
    });
    expect(claim).toEqual({ claimed: true, token: "job-1", attempt: 1 });
    // What the executor's add is: the next command on that connection, sent in the same turn.
    const next = jobClient.get(`${keys.durable("a".repeat(64))}:absent`);
    expect(writes.map(({ corked }) => corked)).toEqual([true, true]);
    expect(writes[0]?.chunk).toMatch(/EVAL/i);
    expect(writes[1]?.chunk).toMatch(/\bget\b/i);
    expect(await durable.earlyClaim("a".repeat(64), "job-1")).toBe(true);
    expect(await next).toBeNull();
    expect(stream.writableCorked).toBe(0);
    await control.del(keys.durable("a".repeat(64)));
  });

  test("the host's outcome and the command sent right after it on the worker's connection go out in one write, in order", async () => {
    const [control, agentJobs, workerClient] = [new Redis(url), new Redis(url), new Redis(url)];
    clients.push(control, agentJobs, workerClient);
    await Promise.all([control.ping(), agentJobs.ping(), workerClient.ping()]);
    const keys = queueKeys(uniqueQueue("coalesce-host"));
    const key = durableKeyOf("run", "call-2");
    const order = { key, fingerprint: "f".repeat(64), toolName: "ping", maxAttempts: 1, token: "t", state: "running" } as const;
    const agent = new QueueAgentDurable(
      control,
      keys,
      readQueueDurableOptions({ assumeNoEviction: true }, false),
      1000,
      () => "job-2",
      agentJobs,
    );
    await agent.claim(order);
    expect(await agent.earlyClaim(key, "job-2")).toBe(true);
    const host = new QueueHostDurable(control, keys, workerClient);
    expect(host.expect("job-2", "call-2", { runId: "run", leaseMs: 15_000, retentionMs: 86_400_000 })).toBe(key);
    // The host's pipeline takes the key expect made (not hashed again).
    expect(host.keyOf("run", "call-2")).toBe(key);
    expect(await host.claim(order)).toEqual({ claimed: true, token: "job-2", attempt: 1 });
    const { writes, stream } = watchWrites(workerClient);
    expect(await host.finish(key, "job-2", '{"k":"r","c":"1","e":0,"a":[]}')).toBe(true);
    // What BullMQ's completion is: the next command on that connection, sent in the same turn.
    const next = workerClient.get(`${keys.durable(key)}:absent`);
    expect(writes.map(({ corked }) => corked)).toEqual([true, true]);
    expect(writes[0]?.chunk).toMatch(/EVAL/i);
    expect(writes[1]?.chunk).toMatch(/\bget\b/i);
    expect(await next).toBeNull();
    expect(stream.writableCorked).toBe(0);
    expect((await host.read(key))?.[0]).toBe("done");
    await control.del(keys.durable(key));
  });
});
