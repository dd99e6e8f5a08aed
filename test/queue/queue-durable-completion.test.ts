// Fault test 6 of issue 42 on the queue: a host SIGKILLed between recording a durable call's
// outcome and BullMQ's completion of its job. The gap is held open without timing: the host
// connects as an ACL user of a redis-server of the test's own, and while its tool waits on a
// gate the test takes away that user's write access to BullMQ's keys (toolgate's own stay
// writable). The tool then finishes, the host records the outcome, BullMQ's completion is
// refused, and the test SIGKILLs the host: the record says done, the job never completed.
import { Redis } from "ioredis";
import { QueueToolExecutor } from "toolgate/queue";
import { afterEach, describe, expect, test } from "vitest";
import { durableKeyOf } from "../../dist/src/durable/key.js";
import { call, neverAborted } from "../support/helpers.js";
import { hasRedisServerBinary, startRedisServer, uniqueQueue } from "../support/redis.js";
import { startHostProcess } from "./host-process.js";

const TOOLS = new URL("../durable/fixtures/durable-tools.mjs", import.meta.url);

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

async function until(check: () => Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.runIf(hasRedisServerBinary())("issue 42, 6: a host SIGKILLed between recording the outcome and BullMQ's completion", () => {
  test("the job never completed, the record is done: the caller and a later re-issue get the recorded outcome, 1 execution", async () => {
    const server = await startRedisServer();
    cleanups.push(() => server.kill());
    const redis = new Redis(server.url);
    cleanups.push(async () => redis.disconnect());
    await redis.acl("SETUSER", "host", "on", ">host-password", "~*", "&*", "+@all");
    process.env.DURABLE_TEST_REDIS = server.url; // the tools count on this server, as the default user
    const queue = uniqueQueue("durable-gap");
    const hostUrl = `redis://host:host-password@127.0.0.1:${server.port}`;
    const victim = await startHostProcess(hostUrl, queue, [TOOLS], ["--threads", "1", "--lock-duration", "1000"]);
    cleanups.push(() => victim.stop("SIGKILL"));
    const executor = await QueueToolExecutor.create({
      connection: server.url,
      queue,
      modules: [TOOLS],
      heartbeatMs: 100,
      durable: { leaseMs: 1000 },
    });
    cleanups.push(() => executor.close());
    const [counter, gate, begun, runId] = [uniqueQueue("count"), uniqueQueue("gate"), uniqueQueue("started"), uniqueQueue("run")];
    const toolCall = call("charge", { counter, gate, started: begun }, "g1");
    const pending = executor.executeToolCall(toolCall, neverAborted(), { durable: { runId } });
    await until(async () => (await redis.llen(begun)) === 1, "the tool started");
    // From now on the host may write toolgate's keys (the record) and the jobs' own hashes (its
    // outcome's write marks the job's), but only read BullMQ's lists and streams: its completion is refused.
    await redis.acl("SETUSER", "host", "resetkeys", `%RW~toolgate:${queue}:*`, `%RW~bull:${queue}:tg-*`, `%R~bull:${queue}:*`);
    await redis.rpush(gate, "go");
    const record = `toolgate:${queue}:durable:${durableKeyOf(runId, "g1")}`;
    await until(async () => (await redis.hget(record, "state")) === "done", "the host recorded the outcome");
    await victim.stop("SIGKILL");
    expect(await redis.hget(`bull:${queue}:${await onlyJobId(redis, queue)}`, "finishedOn")).toBeNull(); // BullMQ never completed it
    const result = await pending;
    expect(JSON.parse(result.content)).toMatchObject({ charged: 0, attempt: 1 });
    const again = await executor.executeToolCall(toolCall, neverAborted(), { durable: { runId } });
    expect(again.content).toBe(result.content);
    expect(Number(await redis.get(counter))).toBe(1);
  });
});

/** The id of the queue's one job (the test's call). */
async function onlyJobId(redis: Redis, queue: string): Promise<string> {
  const ids = await redis.lrange(`bull:${queue}:active`, 0, -1);
  expect(ids).toHaveLength(1);
  return ids[0] as string;
}
