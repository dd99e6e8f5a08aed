// The queue on a Sentinel set (issue 44): one primary, one replica and three sentinels started
// by the test on free ports and ended by pid. Two `toolgate-worker --sentinel` host processes
// and an agent find the primary through the sentinels; the primary is SIGKILLed with 50 calls
// in flight and more arriving: each settles exactly once (its result, or a documented error)
// within its bounds, no call runs twice, and after the failover the same executor and the same
// hosts serve calls again, each host taking some (none left idle), each saying it is ready, and
// neither having found itself stuck (its fetch watchdog, at its default fetchStallMs, fired not once).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { QueueToolExecutor } from "toolgate/queue";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { call, errorOf, fixture, neverAborted, scratchDir, settle } from "../support/helpers.js";
import { freePort, hasRedisServerBinary } from "../support/redis.js";
import { awaitSentinelFailover, type RedisSentinelSet, startRedisSentinel } from "../support/redis-topologies.js";
import { type HostProcess, startHostProcess } from "./host-process.js";

const TOOLS = fixture("queue-tools");

const missing = hasRedisServerBinary() ? undefined : "no redis-server is on PATH";
if (missing !== undefined) process.stderr.write(`\n*** toolgate queue Sentinel tests DID NOT RUN: ${missing} ***\n\n`);

/** Lines of a tool's start log (one per start of a tool). */
const linesOf = (path: string): string[] => (existsSync(path) ? readFileSync(path, "utf8").trim().split("\n") : []);

const IN_FLIGHT = 50;
const ARRIVING = 30;
const REDIS_LOST_MS = 10_000;
/** Every call settles within its bound: Redis silent for redisLostMs at most, plus a heartbeat and the failover's own seconds. */
const SETTLE_BOUND_MS = REDIS_LOST_MS + 10_000;

describe.skipIf(missing !== undefined)(
  "the queue on Sentinel: 1 primary, 1 replica, 3 sentinels (docs/operations.md — Running Redis for toolgate)",
  () => {
    let set: RedisSentinelSet | undefined;
    beforeAll(async () => {
      set = await startRedisSentinel({
        masterName: `tg-queue-${process.pid}`,
        downAfterMs: 1000,
        failoverTimeoutMs: 5000,
        withinMs: 30_000,
      });
    }, 40_000);
    afterAll(() => set?.stop());

    const cleanups: (() => Promise<unknown>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
    });

    test("the primary SIGKILLed with 50 calls in flight and more arriving: each settles once within its bound, none runs twice, and the same executor and hosts carry on", async () => {
      const sentinels = set as RedisSentinelSet;
      const log = join(scratchDir(), "starts.log");
      const sentinelUrl = `redis://127.0.0.1:${sentinels.sentinelAddresses[0]?.port}`;
      const hosts: HostProcess[] = [];
      const metricsPorts: number[] = [];
      for (let index = 0; index < 2; index += 1) {
        const metricsPort = await freePort();
        const host = await startHostProcess(
          sentinelUrl,
          "q",
          [TOOLS],
          [...["--sentinel", sentinels.masterName, "--threads", "4"], ...["--metrics-port", String(metricsPort)]],
        );
        cleanups.push(() => host.stop("SIGKILL"));
        hosts.push(host);
        metricsPorts.push(metricsPort);
      }
      const executor = await QueueToolExecutor.create({
        connection: { sentinels: sentinels.sentinelAddresses.map((address) => ({ ...address })), name: sentinels.masterName },
        queue: "q",
        modules: [TOOLS],
        heartbeatMs: 100,
        redisLostMs: REDIS_LOST_MS,
      });
      cleanups.push(() => executor.close());

      const settled = new Map<string, { ok: boolean; text: string; ms: number }>();
      const calls: Promise<void>[] = [];
      const send = (id: string): void => {
        const sentAt = performance.now();
        calls.push(
          settle(executor.executeToolCall(call("whoAmI", { ms: 300, log }, id), neverAborted())).then((outcome) => {
            if (settled.has(id)) throw new Error(`${id} settled twice`);
            const text = outcome.ok ? (outcome.value.isError ? errorOf(outcome.value).message : "ok") : String(outcome.reason);
            settled.set(id, { ok: outcome.ok && !outcome.value.isError, text, ms: performance.now() - sentAt });
          }),
        );
      };
      for (let index = 0; index < IN_FLIGHT; index += 1) send(`before-${index}`);
      await new Promise((resolve) => setTimeout(resolve, 150));
      const killedAt = performance.now();
      await sentinels.primary.kill();
      for (let index = 0; index < ARRIVING; index += 1) {
        send(`during-${index}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const primary = await awaitSentinelFailover({ set: sentinels, formerPrimary: sentinels.primary, withinMs: 20_000 });
      const failoverMs = performance.now() - killedAt;
      await Promise.race([
        Promise.all(calls),
        new Promise((_resolve, reject) =>
          setTimeout(() => reject(new Error(`${calls.length - settled.size} calls still pending`)), SETTLE_BOUND_MS + 5000),
        ),
      ]);
      const lastMs = performance.now() - killedAt;

      expect(primary).toBe(sentinels.replica);
      expect(settled.size).toBe(IN_FLIGHT + ARRIVING);
      for (const [, entry] of settled) expect(entry.ms).toBeLessThan(SETTLE_BOUND_MS);
      const failed = [...settled.values()].filter((entry) => !entry.ok);
      for (const entry of failed) {
        expect(entry.text).toMatch(
          /the job is gone from Redis|Redis did not answer|could not be enqueued|stopped renewing its job lock|the host did not start the tool/,
        );
      }
      const starts = linesOf(log).map((line) => line.split(" ")[0]);
      expect(new Set(starts).size).toBe(starts.length); // no call ran twice

      // The same executor and the same two hosts, after the failover: every host takes calls.
      const after = await Promise.all(
        Array.from({ length: 16 }, (_, index) => executor.executeToolCall(call("whoAmI", { ms: 300 }, `after-${index}`), neverAborted())),
      );
      expect(after.map((message) => message.isError)).toEqual(Array(16).fill(false));
      const pids = new Set(after.map((message) => (JSON.parse(message.content) as { pid: number }).pid));
      expect(pids).toEqual(new Set(hosts.map((host) => host.pid)));
      for (const port of metricsPorts) {
        const readyz = await fetch(`http://127.0.0.1:${port}/readyz`);
        expect({ status: readyz.status, body: await readyz.text() }).toEqual({ status: 200, body: "ready\n" });
      }
      for (const host of hosts) expect(host.stderr()).not.toContain("the host is stuck");

      const reasons = [...new Set(failed.map((entry) => entry.text.slice(0, 50)))];
      process.stdout.write(
        `\nsentinel failover: new primary reported ${Math.round(failoverMs)} ms after the SIGKILL; ${IN_FLIGHT} in flight + ${ARRIVING} arriving: ${settled.size - failed.length} results, ${failed.length} failed [${reasons.join(" | ")}], 0 run twice; all settled ${Math.round(lastMs)} ms after the kill (slowest call ${Math.round(Math.max(...[...settled.values()].map((entry) => entry.ms)))} ms)\n`,
      );
    }, 60_000);
  },
);
