// The queue on a Redis Cluster (issue 44) of three primaries, each with a replica, started by
// the test on free ports and ended by pid: a Cluster connection needs a hash-tagged prefix (one
// slot per queue), the contract's core runs on it (calls, a batch, abort, timeout, progress, a
// host SIGKILLed, close()), two queues land on different primaries, and a primary SIGKILLed
// under load with its replica promoted settles every call once, within a bound.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { QueueToolExecutor, runToolWorkerHost, type ToolWorkerHost } from "toolgate/queue";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { contractError } from "../support/assertions.js";
import { call, errorOf, fixture, neverAborted, scratchDir, settle } from "../support/helpers.js";
import { freePort, hasRedisServerBinary } from "../support/redis.js";
import { awaitPromotion, primaryForKey, type RedisCluster, startRedisCluster } from "../support/redis-topologies.js";
import { type HostProcess, startHostProcess } from "./host-process.js";

const TOOLS = fixture("queue-tools");
const FEATURES = fixture("queue-feature-tools");

const missing = hasRedisServerBinary() ? undefined : "no redis-server is on PATH";
if (missing !== undefined) process.stderr.write(`\n*** toolgate queue Cluster tests DID NOT RUN: ${missing} ***\n\n`);

/** Lines of a tool's start log (one per start of a tool). */
const linesOf = (path: string): string[] => (existsSync(path) ? readFileSync(path, "utf8").trim().split("\n") : []);

describe("a Cluster connection's prefix (no server needed)", () => {
  const cluster = { cluster: ["127.0.0.1:1"] };
  test.each([
    [undefined, /options\.prefix must be given, with a hash tag such as "\{tools\}", when options\.connection is a Redis Cluster/],
    ["tools", /options\.prefix must be hash-tagged, such as "\{tools\}", .* \(got "tools", which has no "\{…\}" with text inside\)/],
    ["{}tools", /must be hash-tagged/],
    ["a:{b}", /options\.prefix must be a non-empty string .* which contains ":"/],
  ])("prefix %j is refused before anything connects", async (prefix, message) => {
    const options = { connection: cluster, queue: "q", modules: [TOOLS], ...(prefix === undefined ? {} : { prefix }) };
    expect((await contractError(QueueToolExecutor.create(options))).message).toMatch(message);
    expect((await contractError(runToolWorkerHost(options))).message).toMatch(message);
  });

  test.each([
    [{ cluster: [], username: "u" }, /options\.connection\.cluster must be a non-empty array/],
    [{ cluster: ["127.0.0.1:1"], host: "127.0.0.1" }, /options\.connection\.host cannot be given with options\.connection\.cluster/],
    [{ cluster: ["127.0.0.1:1"], pasword: "p" }, /unknown option "pasword" \(did you mean "password"\?\)/],
    [{ host: "127.0.0.1", keyPrefix: "x:" }, /options\.connection\.keyPrefix is refused: .* give options\.prefix instead/],
    [{ sentinels: [{ host: "127.0.0.1", port: 1 }] }, /options\.connection\.name must name the primary the sentinels monitor/],
    [{ host: "127.0.0.1", failoverDetector: true }, /options\.connection\.failoverDetector is refused/],
    [{ url: "redis://127.0.0.1:1", port: 2 }, /options\.connection\.port cannot be given with options\.connection\.url/],
    [{ url: "http://127.0.0.1:1" }, /options\.connection\.url must be a redis:\/\/ or rediss:\/\/ URL/],
  ])("connection %j is refused before anything connects", async (connection, message) => {
    const error = await contractError(QueueToolExecutor.create({ connection, queue: "q", prefix: "{q}", modules: [TOOLS] } as never));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.message).toMatch(message);
  });
});

describe.skipIf(missing !== undefined)(
  "the queue on a Redis Cluster of 3 primaries with replicas (docs/operations.md — Running Redis for toolgate)",
  () => {
    let cluster: RedisCluster | undefined;
    beforeAll(async () => {
      cluster = await startRedisCluster({ replicas: true, nodeTimeoutMs: 1000, withinMs: 30_000 });
    }, 40_000);
    afterAll(() => cluster?.stop());

    const cleanups: (() => Promise<unknown>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
    });

    const connection = () => ({ cluster: (cluster as RedisCluster).startupNodes.map((node) => ({ ...node })) });
    const host = async (prefix: string, modules = [TOOLS], options = {}): Promise<ToolWorkerHost> => {
      const started = await runToolWorkerHost({
        connection: connection(),
        queue: "q",
        prefix,
        modules,
        threads: 2,
        abortGraceMs: 200,
        ...options,
      });
      cleanups.push(() => started.close());
      return started;
    };
    const agent = async (prefix: string, options = {}, modules = [TOOLS]): Promise<QueueToolExecutor> => {
      const executor = await QueueToolExecutor.create({
        connection: connection(),
        queue: "q",
        prefix,
        modules,
        heartbeatMs: 100,
        ...options,
      });
      cleanups.push(() => executor.close());
      return executor;
    };

    test("the contract's core: a call, a batch, an abort, a timeout, progress, close() with a call in flight", async () => {
      await host("{core}", [FEATURES]);
      const executor = await agent("{core}", { closeTimeoutMs: 300 }, [FEATURES]);
      const result = await executor.executeToolCall(call("nap", { ms: 1 }, "c-1"), neverAborted());
      expect(result).toMatchObject({ toolCallId: "c-1", isError: false });

      const batch = await executor.executeBatch(
        [1, 2, 3, 4].map((n) => call("nap", { ms: n }, `b-${n}`)),
        neverAborted(),
      );
      expect(batch.map((message) => message.isError)).toEqual([false, false, false, false]);

      const controller = new AbortController();
      const aborted = executor.executeToolCall(call("nap", { ms: 10_000 }, "a-1"), controller.signal);
      setTimeout(() => controller.abort(new Error("enough")), 200);
      await expect(aborted).rejects.toThrow("enough");

      const late = await executor.executeToolCall(call("spin", { ms: 5000 }, "t-1"), neverAborted(), { timeoutMs: 300 });
      expect(errorOf(late).code).toBe("TOOL_EXECUTION_TIMEOUT");

      const seen: number[] = [];
      await executor.executeToolCall(call("report", { steps: 3, gapMs: 40 }, "p-1"), neverAborted(), {
        onProgress: (progress) => seen.push(progress.progress as number),
      });
      expect(seen[0]).toBe(1);

      const pending = settle(executor.executeToolCall(call("nap", { ms: 10_000 }, "closing"), neverAborted()));
      await new Promise((resolve) => setTimeout(resolve, 200));
      await executor.close();
      const outcome = await pending;
      expect(outcome.ok && errorOf(outcome.value).code).toBe("TOOL_EXECUTION_FAILED");
    }, 30_000);

    test("a host process (toolgate-worker --cluster) SIGKILLed mid-call: the call fails within the lock bound, never runs twice", async () => {
      const topology = cluster as RedisCluster;
      const log = join(scratchDir(), "starts.log");
      const process: HostProcess = await startHostProcess(
        `redis://127.0.0.1:${topology.startupNodes[0]?.port}`,
        "q",
        [TOOLS],
        ["--cluster", "--prefix", "{crash}", "--lock-duration", "1000", "--threads", "1"],
      );
      cleanups.push(() => process.stop("SIGKILL"));
      const executor = await agent("{crash}");
      const pending = executor.executeToolCall(call("whoAmI", { ms: 10_000, log }, "crash-1"), neverAborted());
      for (let tries = 0; linesOf(log).length === 0 && tries < 100; tries += 1) await new Promise((resolve) => setTimeout(resolve, 50));
      await process.stop("SIGKILL");
      const startedAt = performance.now();
      const result = await pending;
      expect(errorOf(result).message).toContain("stopped renewing its job lock");
      expect(performance.now() - startedAt).toBeLessThan(8000);
      expect(linesOf(log)).toHaveLength(1);
    }, 30_000);

    test("toolgate-worker --cluster with two --redis startup nodes, the last one dead: every node is a seed, not only the last given", async () => {
      const topology = cluster as RedisCluster;
      const dead = await freePort();
      const process: HostProcess = await startHostProcess(
        `redis://127.0.0.1:${topology.startupNodes[1]?.port}`,
        "q",
        [TOOLS],
        ["--redis", `redis://127.0.0.1:${dead}`, "--cluster", "--prefix", "{seeds}", "--threads", "1"],
      );
      cleanups.push(() => process.stop("SIGKILL"));
      const executor = await agent("{seeds}");
      expect((await executor.executeToolCall(call("count", { n: 1 }, "seeds-1"), neverAborted())).isError).toBe(false);
    }, 30_000);

    test("two queues whose hash tags hash to different primaries are served by different primaries", async () => {
      const topology = cluster as RedisCluster;
      const tags: { prefix: string; port: number }[] = [];
      for (let index = 0; tags.length < 2 && index < 100; index += 1) {
        const prefix = `{shard-${index}}`;
        const { primary } = await primaryForKey({ cluster: topology, key: `${prefix}:q:wait` });
        if (tags.every((tag) => tag.port !== primary.port)) tags.push({ prefix, port: primary.port });
      }
      expect(tags).toHaveLength(2);
      for (const { prefix } of tags) {
        await host(prefix);
        const executor = await agent(prefix);
        expect((await executor.executeToolCall(call("count", { n: 1 }, prefix), neverAborted())).isError).toBe(false);
      }
      for (const [index, { prefix, port }] of tags.entries()) {
        const other = tags[1 - index] as { prefix: string; port: number };
        const { Redis } = await import("ioredis");
        const node = new Redis({ host: "127.0.0.1", port, lazyConnect: true, retryStrategy: () => null });
        node.on("error", () => {});
        try {
          await node.connect();
          expect(await node.exists(`${prefix}:q:events`)).toBe(1); // this queue's stream lives on this primary…
          expect(
            await node.call("CLUSTER", "COUNTKEYSINSLOT", String(await node.call("CLUSTER", "KEYSLOT", `${other.prefix}:q:events`))),
          ).toBe(0); // …and not the other's
        } finally {
          node.disconnect();
        }
      }
    }, 30_000);

    // Last: it kills a primary of the file's cluster.
    test("a primary SIGKILLed under load, its replica promoted: every call settles once (a result or a documented error), within a bound", async () => {
      const topology = cluster as RedisCluster;
      const prefix = "{failover}";
      const log = join(scratchDir(), "starts.log");
      await host(prefix, [TOOLS], { threads: 8 });
      await host(prefix, [TOOLS], { threads: 8 });
      const executor = await agent(prefix, { redisLostMs: 10_000 });
      const { slot, primary } = await primaryForKey({ cluster: topology, key: `${prefix}:q:wait` });

      const settled = new Map<string, { ok: boolean; text: string; at: number }>();
      const calls: Promise<void>[] = [];
      const send = (id: string): void => {
        calls.push(
          settle(executor.executeToolCall(call("whoAmI", { ms: 200, log }, id), neverAborted())).then((outcome) => {
            if (settled.has(id)) throw new Error(`${id} settled twice`);
            const text = outcome.ok ? (outcome.value.isError ? errorOf(outcome.value).message : "ok") : String(outcome.reason);
            settled.set(id, { ok: outcome.ok && !outcome.value.isError, text, at: performance.now() });
          }),
        );
      };
      for (let index = 0; index < 30; index += 1) send(`before-${index}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const killedAt = performance.now();
      await primary.kill();
      // More calls keep arriving while the cluster fails over.
      for (let index = 0; index < 30; index += 1) {
        send(`during-${index}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const promoted = await awaitPromotion({ cluster: topology, formerPrimary: primary, slot, withinMs: 15_000 });
      const promotedMs = performance.now() - killedAt;
      await Promise.race([
        Promise.all(calls),
        new Promise((_resolve, reject) =>
          setTimeout(() => reject(new Error(`${calls.length - settled.size} calls still pending`)), 25_000),
        ),
      ]);
      const lastMs = Math.max(...[...settled.values()].map((entry) => entry.at)) - killedAt;
      const failed = [...settled.entries()].filter(([, entry]) => !entry.ok);
      const starts = linesOf(log).map((line) => line.split(" ")[0]);
      expect(settled.size).toBe(60);
      expect(new Set(starts).size).toBe(starts.length); // no call ran twice
      for (const [, entry] of failed)
        expect(entry.text).toMatch(
          /the job is gone from Redis|Redis did not answer|could not be enqueued|stopped renewing its job lock|the host did not start the tool/,
        );
      // After the failover the same executor and hosts serve a call.
      expect((await executor.executeToolCall(call("whoAmI", {}, "after"), neverAborted())).isError).toBe(false);
      process.stdout.write(
        `\ncluster failover: primary ${primary.port} killed, replica ${promoted.primary.port} promoted after ${Math.round(promotedMs)} ms; 60 calls (30 in flight, 30 arriving): ${60 - failed.length} results, ${failed.length} failed [${[...new Set(failed.map(([, entry]) => entry.text.slice(0, 60)))].join(" | ")}], 0 run twice, last settled ${Math.round(lastMs)} ms after the kill\n`,
      );
    }, 60_000);
  },
);
