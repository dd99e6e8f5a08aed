// docs/queue.md — Topology (fetching ahead): a host takes one job per thread, and one more per
// thread only while completions keep bringing jobs (src/queue/fetch-ahead.ts). Read off the
// job hashes (BullMQ's processedOn: when a fetch took the job; finishedOn) and the server's
// MONITOR stream: a job fetched ahead waits on the host, not in the pool, and is confirmed
// against Redis once it holds the thread; one call in flight never arms (no fetch but the blocking wait's).
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { QueueToolExecutor } from "toolgate/queue";
import { describe, expect, test, vi } from "vitest";
import { call, fixture, neverAborted } from "../support/helpers.js";
import { queueKit, within } from "../support/queue-kit.js";
import { findRedis, uniqueQueue } from "../support/redis.js";
import { monitorOf, type Seen } from "./monitor.js";

const TOOLS = fixture("queue-defect-tools");
const redis = await findRedis();
const url = "url" in redis ? redis.url : "";

const { cleanups, host, agent, client } = queueKit(url, [TOOLS]);

/** BullMQ's fetch (its moveToActive script: 11 keys, the wait list first), as MONITOR shows it. */
const isFetch = (queue: string) => (command: Seen) =>
  /^eval(sha)?$/i.test(command.args[0] ?? "") && command.args[2] === "11" && command.args[3] === `bull:${queue}:wait`;

/** The job hash of the call `callId` on `queue`, with BullMQ's times. */
async function jobTimes(
  queue: string,
  callId: string,
): Promise<{ key: string; jobId: string; processedOn: number; finishedOn: number; poolWaitMs: number }> {
  const redisClient = client();
  const [key] = await redisClient.keys(`bull:${queue}:*.${callId}`);
  if (key === undefined) throw new Error(`no job of ${callId}`);
  const [processedOn, finishedOn, returned] = await redisClient.hmget(key, "processedOn", "finishedOn", "returnvalue");
  // The host's facts of the call: how long it waited in the worker pool for a thread (its executor's queueWaitMs).
  const poolWaitMs = Number(JSON.parse(returned ?? "{}").facts?.waitMs);
  return { key, jobId: key.slice(`bull:${queue}:`.length), processedOn: Number(processedOn), finishedOn: Number(finishedOn), poolWaitMs };
}

/** `calls` calls of `one`, `inFlight` at a time. */
async function drive(calls: number, inFlight: number, one: (n: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < calls) await one(next++);
    }),
  );
}

/** BullMQ's completion (its moveToFinished script: 14 keys), as MONITOR shows it. */
const isCompletion = (command: Seen) => /^eval(sha)?$/i.test(command.args[0] ?? "") && command.args[2] === "14";

/**
 * One call in flight, `calls` times: BullMQ's fetches from a marker the test sends to the last
 * call's completion (what the burst before left armed included), and how many of them no
 * blocking wait woke. A fetch of the blocking wait follows its own BZPOPMIN on the queue's
 * marker; an armed slot's fetch follows a fetch or a completion. The blocking wait may also wake
 * once a call on the marker BullMQ leaves with the job it takes, before the next add: that
 * fetch finds nothing and the wait blocks again (docs/benchmarks.md, the BZPOPMIN/add crossing),
 * whenever the host is ahead of the agent (a loaded machine). `hostAhead` forces it: each next
 * call waits until that fetch was made.
 */
async function fetchesOfOneInFlight(
  queue: string,
  seen: Seen[],
  executor: { executeToolCall: typeof QueueToolExecutor.prototype.executeToolCall },
  { calls, label, hostAhead = false }: { calls: number; label: string; hostAhead?: boolean },
): Promise<{ fetches: number; unwoken: number }> {
  const fetch = isFetch(queue);
  const marker = `bull:${queue}:marker`;
  const isWait = (command: Seen) => command.args[0]?.toLowerCase() === "bzpopmin" && command.args[1] === marker;
  /** The fetches in seen[from, to), and those whose host command before (a fetch, a completion or a blocking wait) is no blocking wait. */
  const count = (from: number, to: number) => {
    let fetches = 0;
    let unwoken = 0;
    for (let index = from; index < to; index += 1) {
      if (!fetch(seen[index] as Seen)) continue;
      fetches += 1;
      const before = seen.findLast((command, at) => at < index && (fetch(command) || isCompletion(command) || isWait(command)));
      if (before === undefined || !isWait(before)) unwoken += 1;
    }
    return { fetches, unwoken };
  };

  await client().get(`${queue}:${label}`);
  const from = await vi.waitFor(() => {
    const at = seen.findIndex((command) => command.args[0]?.toLowerCase() === "get" && command.args[1] === `${queue}:${label}`);
    expect(at).toBeGreaterThanOrEqual(0);
    return at;
  });
  for (let n = 0; n < calls; n += 1) {
    const result = await executor.executeToolCall(call("echoId", {}, `${label}-${n}`), neverAborted());
    expect(JSON.parse(result.content)).toEqual({ toolCallId: `${label}-${n}` });
    if (hostAhead) await vi.waitFor(() => expect(count(from, seen.length).fetches).toBe(2 * (n + 1)), { timeout: 5000, interval: 5 });
  }
  const last = await jobTimes(queue, `${label}-${calls - 1}`);
  const to = await vi.waitFor(() => {
    const at = seen.findIndex((command) => isCompletion(command) && command.args.includes(last.key));
    expect(at).toBeGreaterThan(from);
    return at;
  });
  return count(from, to);
}

/** No fetch but the blocking wait's in `calls` calls one at a time: one a call, and one more a call at most (the crossing). */
function expectWokenFetches({ fetches, unwoken }: { fetches: number; unwoken: number }, calls: number): void {
  expect(unwoken).toBe(0);
  expect(fetches).toBeGreaterThanOrEqual(calls);
  expect(fetches).toBeLessThanOrEqual(2 * calls);
}

describe.skipIf(!("url" in redis))("docs/queue.md — fetching ahead", () => {
  test("jobs kept waiting arm one job ahead (it waits for the thread on the host and is confirmed once it holds it); then at one call in flight every fetch is the blocking wait's", async () => {
    const dir = mkdtempSync(join(tmpdir(), "toolgate-fetch-ahead-"));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const log = join(dir, "log");
    appendFileSync(log, "");
    const queue = uniqueQueue("ahead");
    await host(queue, { threads: 1 });
    const executor = await agent(queue);
    await executor.executeToolCall(call("echoId", {}, "warm"), neverAborted());
    const seen = await monitorOf(url, queue, cleanups);

    // Added together, one thread: `short` finishes while the others wait, so its completion
    // hands over `long` (armed: one job ahead); `ahead` is fetched while `long` runs (800 ms,
    // past FETCH_WAIT_MS: it waited, so it is confirmed once it has the thread); `last` after.
    const ids = ["short", "long", "ahead", "last"];
    const ms: Record<string, number> = { short: 0, long: 800, ahead: 0, last: 0 };
    const results = await within(
      Promise.all(ids.map((id) => executor.executeToolCall(call("slow", { ms: ms[id] ?? 0, log }, id), neverAborted()))),
      15_000,
      "four calls",
    );
    for (const [index, result] of results.entries()) expect(JSON.parse(result.content)).toEqual({ toolCallId: ids[index] });
    expect(readFileSync(log, "utf8").trim().split("\n")).toEqual(ids.map((id) => `started ${id}`));

    const long = await jobTimes(queue, "long");
    const ahead = await jobTimes(queue, "ahead");
    // Fetched ahead: taken while `long` ran (one job per thread would take it with long's completion, at its finishedOn).
    expect(ahead.processedOn).toBeLessThan(long.finishedOn);
    expect(long.finishedOn - ahead.processedOn).toBeGreaterThan(400);
    // It waited for the thread on the host, not in the worker pool (there it would have waited out `long`'s 800 ms).
    expect(ahead.poolWaitMs).toBeLessThan(300);
    // It waited on the host, not in the pool: its start check read its cancel mark after `long`'s
    // completion was sent (BullMQ's moveToFinished names long's job hash), right before it started.
    const longDone = seen.findIndex((command) => /^eval(sha)?$/i.test(command.args[0] ?? "") && command.args.includes(long.key));
    const aheadConfirmed = seen.findIndex(
      (command) => command.args[0]?.toLowerCase() === "mget" && command.args.some((arg) => arg.endsWith(`:cancelled:${ahead.jobId}`)),
    );
    expect(longDone).toBeGreaterThanOrEqual(0);
    expect(aheadConfirmed).toBeGreaterThan(longDone);

    // Disarmed at the queue's end: at one call in flight every fetch is the blocking wait's (its
    // completion finds nothing; the blocking wait brings the next), none an armed slot's.
    expectWokenFetches(await fetchesOfOneInFlight(queue, seen, executor, { calls: 6, label: "one" }), 6);
    // The host ahead of the agent (forced): after each completion the blocking wait wakes first on
    // the marker its job's fetch left, and that fetch finds nothing (the last one's comes after
    // the window); still none is an armed slot's.
    expect(await fetchesOfOneInFlight(queue, seen, executor, { calls: 3, label: "behind", hostAhead: true })).toEqual({
      fetches: 3 + 2,
      unwoken: 0,
    });
  });

  test("eight in flight, then one: no empty fetch at one in flight; a closing host answers the job it took ahead", async () => {
    const queue = uniqueQueue("ahead-close");
    const started = await host(queue, { threads: 1 });
    const executor = await agent(queue);
    await executor.executeToolCall(call("echoId", {}, "warm"), neverAborted());
    const seen = await monitorOf(url, queue, cleanups);

    const answered: string[] = [];
    await within(
      drive(48, 8, async (n) => {
        const result = await executor.executeToolCall(call("echoId", {}, `eight-${n}`), neverAborted());
        answered.push(JSON.parse(result.content).toolCallId);
      }),
      20_000,
      "48 calls, 8 in flight",
    );
    expect(answered.sort()).toEqual(Array.from({ length: 48 }, (_, n) => `eight-${n}`).sort());
    expectWokenFetches(await fetchesOfOneInFlight(queue, seen, executor, { calls: 6, label: "one" }), 6);

    // A job taken ahead while its thread is busy, then close(): it is answered (run), not left active.
    const dir = mkdtempSync(join(tmpdir(), "toolgate-fetch-ahead-"));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const log = join(dir, "log");
    appendFileSync(log, "");
    const ids = ["c-short", "c-long", "c-ahead"];
    const ms: Record<string, number> = { "c-short": 0, "c-long": 1000, "c-ahead": 0 };
    const pending = Promise.all(ids.map((id) => executor.executeToolCall(call("slow", { ms: ms[id] ?? 0, log }, id), neverAborted())));
    // Once `c-long` runs, `c-ahead` has been fetched ahead (armed by c-short's handover).
    for (let tries = 0; !readFileSync(log, "utf8").includes("started c-long") && tries < 200; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // Taken while `c-long` still runs (1 s): both are active in Redis, this host's.
    const active = client();
    for (let tries = 0; (await active.llen(`bull:${queue}:active`)) < 2 && tries < 60; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(await active.lrange(`bull:${queue}:active`, 0, -1)).toHaveLength(2);
    await within(started.close(), 10_000, "close()");
    const results = await within(pending, 5000, "the calls taken before close()");
    for (const [index, result] of results.entries()) expect(JSON.parse(result.content)).toEqual({ toolCallId: ids[index] });
    expect(await client().llen(`bull:${queue}:active`)).toBe(0);
  });
});
