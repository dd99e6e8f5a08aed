// The prefix option's names (issue 44): every Redis name of a queue under one prefix, BullMQ's
// and toolgate's, so that one hash tag puts them on one Cluster slot and one ACL pattern covers
// them; the default prefix keeps the names of before; the hash tag found as Redis finds it; and
// a queue under a prefix on a single server, end to end, writes nothing outside `<prefix>:<queue>:`.
import fc from "fast-check";
import { Redis } from "ioredis";
import { QueueToolExecutor, runToolWorkerHost } from "toolgate/queue";
import { afterEach, describe, expect, test } from "vitest";
import { hashTagOf, queueKeys } from "../../dist/src/queue/keys.js";
import { call, fixture, neverAborted } from "../support/helpers.js";
import { findRedis, uniqueQueue } from "../support/redis.js";

const TOOLS = fixture("queue-tools");
const redis = await findRedis();

/** Every name a queue's keys make for one job and one agent. */
const namesOf = (queue: string, prefix?: string): string[] => {
  const keys = prefix === undefined ? queueKeys(queue) : queueKeys(queue, prefix);
  return [keys.events, keys.wait, keys.paused, keys.cancelChannel, keys.job("j"), keys.lock("j"), keys.mark("j"), keys.lease("a")];
};

/** Redis Cluster's rule, written out the plain way: the text between the first "{" and the next "}", when not empty. */
function referenceTag(name: string): string | undefined {
  const open = name.indexOf("{");
  if (open < 0) return undefined;
  const close = name.indexOf("}", open + 1);
  return close > open + 1 ? name.slice(open + 1, close) : undefined;
}

describe("src/queue/keys.ts — a queue's names under its prefix", () => {
  test("the default prefix keeps the names of before: bull:<queue>:… and toolgate:<queue>:…", () => {
    expect(namesOf("tools")).toEqual([
      "bull:tools:events",
      "bull:tools:wait",
      "bull:tools:paused",
      "toolgate:tools:cancel",
      "bull:tools:j",
      "bull:tools:j:lock",
      "toolgate:tools:cancelled:j",
      "toolgate:tools:lease:a",
    ]);
  });

  test("under a prefix every name starts <prefix>:<queue>: and a hash-tagged prefix gives them all one tag", () => {
    const names = namesOf("tools", "{t}");
    for (const name of names) expect(name.startsWith("{t}:tools:")).toBe(true);
    expect(names).toContain("{t}:tools:toolgate:cancel");
    expect(names).toContain("{t}:tools:toolgate:cancelled:j");
    expect(new Set(names.map(hashTagOf))).toEqual(new Set(["t"]));
  });

  test("hashTagOf finds the tag as Redis does, on any text", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom("{", "}", "a", ":", "b") }), (name) => {
        expect(hashTagOf(name)).toBe(referenceTag(name));
      }),
      { numRuns: 2000 },
    );
  });
});

describe.skipIf(!("url" in redis))("a queue under a prefix on one server", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  });

  test("agent and host under a prefix serve a call, and every key they write is under <prefix>:<queue>:", async () => {
    const url = (redis as { url: string }).url;
    const queue = uniqueQueue("prefix");
    const prefix = `{${queue}}`;
    const host = await runToolWorkerHost({ connection: url, queue, prefix, modules: [TOOLS], threads: 2 });
    cleanups.push(() => host.close());
    const executor = await QueueToolExecutor.create({ connection: url, queue, prefix, modules: [TOOLS], heartbeatMs: 100 });
    cleanups.push(() => executor.close());
    const controller = new AbortController();
    const aborted = executor.executeToolCall(call("waitForStop", {}, "stopped"), controller.signal).catch(() => "aborted");
    expect((await executor.executeToolCall(call("count", { n: 1 }), neverAborted())).isError).toBe(false);
    controller.abort();
    expect(await aborted).toBe("aborted");
    const client = new Redis(url);
    cleanups.push(async () => client.disconnect());
    // The abort's cancel mark is written after the call settled: wait for it (bounded).
    let written: string[] = [];
    for (let tries = 0; tries < 100; tries += 1) {
      written = await client.keys(`*${queue}*`);
      if (written.some((key) => key.includes(":toolgate:cancelled:"))) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(written.length).toBeGreaterThan(3);
    for (const key of written) expect(key.startsWith(`${prefix}:${queue}:`)).toBe(true);
    expect(written.some((key) => key.includes(":toolgate:cancelled:"))).toBe(true);
    await client.del(...written);
  });
});
