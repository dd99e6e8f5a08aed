import { type CallEndEvent, isToolContractError, type ToolResultMessage } from "toolgate";
import { describe, expect, test } from "vitest";
import { call, neverAborted, settle } from "../support/helpers.js";
import { durableTestbed } from "./durable-testbed.js";
import { monitorOf, type Seen } from "./monitor.js";

const { url, redis, cleanups, unique, count, agent, host } = await durableTestbed();

/** BullMQ's add of a job (its script names the queue's id counter and wait list; the job id is packed in its arguments). */
const isAdd = (command: Seen): boolean =>
  command.args.some((arg) => arg.endsWith(":wait")) && command.args.some((arg) => /^bull:.*:id$/.test(arg));

/** The durable job ids the agents added, in order. */
function addedJobs(seen: readonly Seen[]): string[] {
  return seen.filter(isAdd).flatMap((command) => /tg-[0-9a-f-]+\.\d+\.durable/.exec(command.args.join(" "))?.[0] ?? []);
}

/** The claim of job `jobId` (its token) and the job's add: sent back to back on one connection (nothing of that connection in between). */
function claimThenAdd(seen: readonly Seen[], jobId: string): void {
  const claim = seen.findIndex((command) => command.args.at(-1) === "claimed" && command.args.includes(jobId));
  const add = seen.findIndex((command, index) => index > claim && isAdd(command) && command.args.join(" ").includes(jobId));
  expect(claim).toBeGreaterThanOrEqual(0);
  expect(add).toBeGreaterThan(claim);
  const from = seen[claim]?.from;
  expect(seen[add]?.from).toBe(from);
  expect(seen.slice(claim + 1, add).filter((command) => command.from === from)).toEqual([]);
}

/**
 * The job id of the first claim seen (its token); when that job was added at all (an agent
 * whose lease is not yet fresh holds its add back, and a claim answered meanwhile as not made
 * never sends it), its add came right behind its claim on the same connection.
 */
function firstClaimedJob(seen: readonly Seen[]): string {
  const claim = seen.find((command) => command.args.at(-1) === "claimed");
  const jobId = claim?.args.find((arg) => /^tg-.*\.durable$/.test(arg));
  expect(jobId).toBeDefined();
  if (addedJobs(seen).includes(jobId as string)) claimThenAdd(seen, jobId as string);
  return jobId as string;
}

/** Resolves once nothing of `queue` waits or is active (a refused job may still be on its way through a host). */
async function drained(queue: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await redis.llen(`bull:${queue}:wait`)) + (await redis.llen(`bull:${queue}:active`)) > 0) {
    if (Date.now() > deadline) throw new Error("jobs were left behind");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const content = (result: ToolResultMessage): unknown => JSON.parse(result.content);

describe.runIf(url !== "")("durable queue calls: the claim sent with its job", () => {
  test("a fresh key: the claim and the job's add go out back to back on one connection, and the call runs once", async () => {
    const queue = unique("early");
    await host(queue);
    const executor = await agent(queue);
    const [counter, runId] = [unique("count"), unique("run")];
    const seen = await monitorOf(url, queue, cleanups);
    const result = await executor.executeToolCall(call("charge", { counter, amount: 3 }, "e1"), neverAborted(), { durable: { runId } });
    expect(content(result)).toMatchObject({ charged: 3, attempt: 1 });
    const [jobId] = addedJobs(seen);
    expect(jobId).toBeDefined();
    claimThenAdd(seen, jobId as string);
    expect(await count(counter)).toBe(1);
  });

  test("done (replay) with no host up: the early claim is not made, its job is removed while it waits, the call replays; nothing runs", async () => {
    const queue = unique("early");
    await host(queue);
    const [counter, runId] = [unique("count"), unique("run")];
    const first = await (await agent(queue)).executeToolCall(call("charge", { counter }, "d1"), neverAborted(), { durable: { runId } });
    // Every host (and the first agent) gone: only the cancel can take the second agent's job away again.
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    const events: CallEndEvent[] = [];
    const second = await agent(queue, { events });
    const seen = await monitorOf(url, queue, cleanups);
    const again = await second.executeToolCall(call("charge", { counter }, "d1"), neverAborted(), { durable: { runId } });
    expect(again.content).toBe(first.content);
    expect(events.map((event) => event.durable)).toEqual(["replayed"]);
    const jobId = firstClaimedJob(seen);
    // The cancel removed it: no wait-list entry, no job hash.
    expect(await redis.lrange(`bull:${queue}:wait`, 0, -1)).toEqual([]);
    expect(await redis.exists(`bull:${queue}:${jobId}`)).toBe(0);
    expect(await count(counter)).toBe(1);
  });

  test("running (attach), a host up: the second agent's early claim is not made; it attaches, its job never runs the tool, nothing is left", async () => {
    const queue = unique("early");
    await host(queue);
    const [counter, gate, begun, runId] = [unique("count"), unique("gate"), unique("started"), unique("run")];
    const toolCall = call("charge", { counter, gate, started: begun }, "a1");
    const first = (await agent(queue)).executeToolCall(toolCall, neverAborted(), { durable: { runId } });
    const deadline = Date.now() + 10_000;
    while ((await redis.llen(begun)) === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    const events: CallEndEvent[] = [];
    const seen = await monitorOf(url, queue, cleanups);
    const second = (await agent(queue, { events })).executeToolCall(toolCall, neverAborted(), { durable: { runId } });
    // Its early claim, then (not made: the key is running) the claim that waits for its answer and attaches.
    const claims = () => seen.filter((command) => command.args.at(-1) === "claimed").length;
    while (claims() < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    const jobId = firstClaimedJob(seen);
    // Its job is gone (removed while it waited, or refused by the host's other thread) while the first still runs.
    while (Date.now() < deadline) {
      const [waiting, active] = await Promise.all([redis.lrange(`bull:${queue}:wait`, 0, -1), redis.lrange(`bull:${queue}:active`, 0, -1)]);
      if (!waiting.includes(jobId) && !active.includes(jobId)) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(await redis.lrange(`bull:${queue}:active`, 0, -1)).not.toContain(jobId);
    expect(await count(counter)).toBe(1);
    await redis.rpush(gate, "go");
    const [one, two] = await Promise.all([first, second]);
    expect(two.content).toBe(one.content);
    expect(events.map((event) => event.durable)).toEqual(["attached"]);
    await drained(queue);
    expect(await count(counter)).toBe(1);
    expect(await redis.llen(begun)).toBe(1);
  });

  test("another call's key (conflict): the early claim is not made, DURABLE_CALL_CONFLICT, the job is gone, nothing runs", async () => {
    const queue = unique("early");
    await host(queue);
    const [counter, runId] = [unique("count"), unique("run")];
    await (await agent(queue)).executeToolCall(call("charge", { counter, amount: 1 }, "x1"), neverAborted(), { durable: { runId } });
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    const seen = await monitorOf(url, queue, cleanups);
    const refused = await settle(
      (await agent(queue)).executeToolCall(call("charge", { counter, amount: 2 }, "x1"), neverAborted(), { durable: { runId } }),
    );
    const reason = (refused as { reason: unknown }).reason;
    expect(isToolContractError(reason) && reason.code).toBe("DURABLE_CALL_CONFLICT");
    const jobId = firstClaimedJob(seen);
    expect(await redis.lrange(`bull:${queue}:wait`, 0, -1)).toEqual([]);
    expect(await redis.exists(`bull:${queue}:${jobId}`)).toBe(0);
    expect(await count(counter)).toBe(1);
  });

  test("50 concurrent re-issues of one key in one agent: one claim goes early, the rest ask first; one execution, one outcome", async () => {
    const queue = unique("early");
    await host(queue);
    const executor = await agent(queue);
    const [counter, runId] = [unique("count"), unique("run")];
    const seen = await monitorOf(url, queue, cleanups);
    const results = await Promise.all(
      Array.from({ length: 50 }, () => executor.executeToolCall(call("charge", { counter }, "c1"), neverAborted(), { durable: { runId } })),
    );
    expect(new Set(results.map((result) => result.content)).size).toBe(1);
    expect(await count(counter)).toBe(1);
    // One claim went with a job (on the connection that adds the jobs); the others were sent alone, and waited.
    const adders = new Set(seen.filter(isAdd).map((command) => command.from));
    const claims = seen.filter((command) => command.args.at(-1) === "claimed");
    expect(claims.length).toBeGreaterThanOrEqual(50);
    expect(claims.filter((command) => adders.has(command.from))).toHaveLength(1);
  });

  test("with beforeExecute or a write concern the claim is answered before the job is added (nothing early)", async () => {
    const queue = unique("early");
    await host(queue);
    const executor = await agent(queue, { hooks: { beforeExecute: () => ({ allow: true }) } });
    const [counter, runId] = [unique("count"), unique("run")];
    const seen = await monitorOf(url, queue, cleanups);
    await executor.executeToolCall(call("charge", { counter }, "b1"), neverAborted(), { durable: { runId } });
    const [jobId] = addedJobs(seen);
    const claim = seen.find((command) => command.args.at(-1) === "claimed");
    const add = seen.find((command) => command.args.includes(jobId as string) && command.args.some((arg) => arg.endsWith(":wait")));
    // The claim goes on the executor's control connection, its job on the queue's: not sent together.
    expect(claim?.from).not.toBe(add?.from);
    expect(await count(counter)).toBe(1);
  });
});
