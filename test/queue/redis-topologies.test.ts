// The Redis topologies the queue's production suites run on (issue 44), proved on real
// servers before any queue code relies on them: a Redis Cluster covers every slot and a
// replica takes a SIGKILLed primary's slots (and its data); Sentinel reports a new primary
// after the old one is SIGKILLed; a TLS server accepts a client trusting its CA and refuses
// one trusting another, and an ACL user is refused the keys and commands its rules forbid;
// a topology that cannot come up is a bounded error, and leaves nothing behind.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { Cluster, Redis, type RedisOptions } from "ioredis";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { settle } from "../support/helpers.js";
import { hasRedisServerBinary } from "../support/redis.js";
import {
  awaitPromotion,
  awaitSentinelFailover,
  CLUSTER_SLOTS,
  clusterSlotMap,
  primaryForKey,
  type RedisCluster,
  type RedisSentinelSet,
  reportedPrimaries,
  startRedisCluster,
  startRedisSentinel,
  startTlsRedis,
  type TlsRedis,
} from "../support/redis-topologies.js";

/** Why these suites cannot run here, or undefined when they can. */
function unavailable(): string | undefined {
  if (!hasRedisServerBinary()) return "no redis-server is on PATH";
  if (spawnSync("openssl", ["version"], { stdio: "ignore" }).status !== 0) return "no openssl is on PATH";
  return undefined;
}
const missing = unavailable();
if (missing !== undefined) {
  if (process.env.TOOLGATE_REQUIRE_REDIS === "1") throw new Error(`TOOLGATE_REQUIRE_REDIS=1: ${missing}`);
  process.stderr.write(`\n*** toolgate Redis topology tests DID NOT RUN: ${missing} ***\n\n`);
}

/** A client that fails fast instead of retrying: what it gets is what the test asserts. */
const oneShot = (options: RedisOptions): Redis => {
  const client = new Redis({ lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 3000, ...options });
  client.on("error", () => {});
  return client;
};

/** A fail-fast client that finds the primary through the set's sentinels. */
const viaSentinels = (set: RedisSentinelSet): Redis =>
  oneShot({ sentinels: [...set.sentinelAddresses], name: set.masterName, sentinelRetryStrategy: () => null });

/** The toolgate-redis-<kind>-* directories in the temporary directory now. */
const topologyDirs = (kind: string): string[] => readdirSync(tmpdir()).filter((name) => name.startsWith(`toolgate-redis-${kind}-`));

describe.skipIf(missing !== undefined)("test/support/redis-topologies.ts — the Redis that production runs, started by a test", () => {
  test("Redis Cluster: 3 primaries without replicas cover every slot, and stop() ends them and removes their directory", async () => {
    const dirsBefore = topologyDirs("cluster");
    const cluster = await startRedisCluster({ replicas: false, withinMs: 20_000 });
    try {
      const map = await clusterSlotMap({ cluster });
      expect(map.reduce((sum, range) => sum + range.to - range.from + 1, 0)).toBe(CLUSTER_SLOTS);
      expect(new Set(map.map((range) => range.primary))).toEqual(new Set(cluster.nodes.map((node) => node.port)));
      expect(map.flatMap((range) => range.replicas)).toEqual([]);
    } finally {
      await cluster.stop();
    }
    for (const node of cluster.nodes) {
      expect(node.running()).toBe(false);
      expect(() => process.kill(node.pid, 0)).toThrow(/ESRCH/);
    }
    expect(topologyDirs("cluster")).toEqual(dirsBefore);
  }, 30_000);

  describe("Redis Cluster: 3 primaries, 3 replicas", () => {
    let cluster: RedisCluster | undefined;
    beforeAll(async () => {
      cluster = await startRedisCluster({ replicas: true, withinMs: 30_000 });
    }, 40_000);
    afterAll(() => cluster?.stop());

    test("every slot is served, by three primaries each with a replica, and a hash-tagged name keeps a queue's keys on one slot", async () => {
      const map = await clusterSlotMap({ cluster: cluster as RedisCluster });
      expect(map.reduce((sum, range) => sum + range.to - range.from + 1, 0)).toBe(CLUSTER_SLOTS);
      expect(new Set(map.map((range) => range.primary)).size).toBe(3);
      for (const range of map) expect(range.replicas).toHaveLength(1);
      const ports = (cluster as RedisCluster).nodes.map((node) => node.port);
      expect(new Set([...map.map((range) => range.primary), ...map.flatMap((range) => range.replicas)])).toEqual(new Set(ports));

      const jobs = await primaryForKey({ cluster: cluster as RedisCluster, key: "bull:{tg:q}:wait" });
      const cancel = await primaryForKey({ cluster: cluster as RedisCluster, key: "toolgate:{tg:q}:cancelled:1" });
      const untagged = await primaryForKey({ cluster: cluster as RedisCluster, key: "toolgate:tg:q:cancelled:1" });
      expect(cancel.slot).toBe(jobs.slot);
      expect(untagged.slot).not.toBe(jobs.slot);
    });

    test("a primary SIGKILLed: its replica is promoted and serves all its slots, with the data written before", async () => {
      const topology = cluster as RedisCluster;
      const key = "{tg:q}:before-the-kill";
      const client = new Cluster([...topology.startupNodes], {
        clusterRetryStrategy: () => null,
        redisOptions: { maxRetriesPerRequest: 0 },
      });
      client.on("error", () => {});
      try {
        await client.set(key, "kept");
        const { slot, primary } = await primaryForKey({ cluster: topology, key });
        // Acknowledged by the replica before the kill, so a promotion cannot have lost it.
        expect(
          await client
            .nodes("master")
            .find((node) => node.options.port === primary.port)
            ?.call("WAIT", "1", "2000"),
        ).toBe(1);
        const before = await clusterSlotMap({ cluster: topology });
        const held = before.filter((range) => range.primary === primary.port);
        const replicaPort = held[0]?.replicas[0];

        await primary.kill();
        const promoted = await awaitPromotion({ cluster: topology, formerPrimary: primary, slot, withinMs: 15_000 });

        expect(primary.running()).toBe(false);
        expect(promoted.primary.port).toBe(replicaPort);
        for (const range of held) {
          expect(promoted.map.find((candidate) => candidate.from === range.from && candidate.to === range.to)?.primary).toBe(replicaPort);
        }
        const reader = oneShot({ host: "127.0.0.1", port: promoted.primary.port });
        try {
          await reader.connect();
          expect(await reader.get(key)).toBe("kept");
          expect(await reader.call("ROLE").then((role) => (role as unknown[])[0])).toBe("master");
        } finally {
          reader.disconnect();
        }
      } finally {
        client.disconnect();
      }
    }, 25_000);
  });

  describe("Sentinel: 1 primary, 1 replica, 3 sentinels", () => {
    let set: RedisSentinelSet | undefined;
    beforeAll(async () => {
      set = await startRedisSentinel({ masterName: `tg-${process.pid}`, downAfterMs: 1000, failoverTimeoutMs: 5000, withinMs: 30_000 });
    }, 40_000);
    afterAll(() => set?.stop());

    test("the primary SIGKILLed: every sentinel reports the replica as the new primary, which has the data and takes writes", async () => {
      const sentinels = set as RedisSentinelSet;
      expect(await reportedPrimaries({ set: sentinels })).toEqual([sentinels.primary.port, sentinels.primary.port, sentinels.primary.port]);
      const writer = viaSentinels(sentinels);
      try {
        await writer.connect();
        await writer.set("before-the-kill", "kept");
        expect(await writer.call("WAIT", "1", "2000")).toBe(1);
      } finally {
        writer.disconnect();
      }

      await sentinels.primary.kill();
      const primary = await awaitSentinelFailover({ set: sentinels, formerPrimary: sentinels.primary, withinMs: 20_000 });

      expect(primary).toBe(sentinels.replica);
      expect(await reportedPrimaries({ set: sentinels })).toEqual([primary.port, primary.port, primary.port]);
      const client = viaSentinels(sentinels);
      try {
        await client.connect();
        expect(await client.config("GET", "port")).toEqual(["port", String(primary.port)]);
        expect(await client.get("before-the-kill")).toBe("kept");
        expect(await client.set("after-the-kill", "taken")).toBe("OK");
      } finally {
        client.disconnect();
      }
    }, 30_000);
  });

  describe("TLS with ACL users", () => {
    const agent = { name: "agent", password: "agent-secret", rules: ["~{tg:q}:*", "+ping", "+get", "+set", "+acl|whoami", "+info"] };
    let server: TlsRedis | undefined;
    beforeAll(async () => {
      server = await startTlsRedis({ users: [agent], defaultUser: "off", withinMs: 20_000 });
    }, 30_000);
    afterAll(() => server?.stop());

    /** Connected, or rejected with the error ioredis emitted (its connect() rejects only with "Connection is closed."). */
    const connectAs = async (options: RedisOptions): Promise<Redis> => {
      const { node } = server as TlsRedis;
      const client = new Redis({
        host: "127.0.0.1",
        port: node.port,
        lazyConnect: true,
        retryStrategy: () => null,
        connectTimeout: 3000,
        ...options,
      });
      const errors: unknown[] = [];
      client.on("error", (error) => errors.push(error));
      try {
        await client.connect();
        return client;
      } catch (error) {
        client.disconnect();
        throw errors[0] ?? error;
      }
    };

    test("a client trusting the server's CA gets in as its ACL user, over rediss:// too; one trusting another CA is refused", async () => {
      const { ca, wrongCa, url } = server as TlsRedis;
      const client = await connectAs({ tls: { ca }, username: agent.name, password: agent.password });
      try {
        expect(await client.call("ACL", "WHOAMI")).toBe("agent");
        expect(await client.ping()).toBe("PONG");
      } finally {
        client.disconnect();
      }
      const byUrl = new Redis(url, {
        tls: { ca },
        username: agent.name,
        password: agent.password,
        lazyConnect: true,
        retryStrategy: () => null,
      });
      byUrl.on("error", () => {});
      try {
        await byUrl.connect();
        expect(await byUrl.set("{tg:q}:over-url", "1")).toBe("OK");
      } finally {
        byUrl.disconnect();
      }

      await expect(connectAs({ tls: { ca: wrongCa }, username: agent.name, password: agent.password })).rejects.toThrow(
        /self[- ]signed certificate|unable to verify/,
      );
    });

    test("the ACL user is refused a key and a command its rules forbid; no password, or a wrong one, is refused", async () => {
      const { ca } = server as TlsRedis;
      const client = await connectAs({ tls: { ca }, username: agent.name, password: agent.password });
      try {
        expect(await client.set("{tg:q}:allowed", "1")).toBe("OK");
        await expect(client.get("{other:q}:job")).rejects.toThrow(/NOPERM.*key/);
        await expect(client.del("{tg:q}:allowed")).rejects.toThrow(/NOPERM.*'del' command/);
      } finally {
        client.disconnect();
      }
      await expect(connectAs({ tls: { ca } })).rejects.toThrow(/NOAUTH/);
      await expect(connectAs({ tls: { ca }, username: agent.name, password: "not-the-password" })).rejects.toThrow(/WRONGPASS/);
    });
  });

  describe("bounds", () => {
    test("a topology that does not come up within its bound is an error naming it, and leaves nothing behind", async () => {
      const dirsBefore = topologyDirs("sentinel");
      const startedAt = performance.now();
      // Sentinels find each other through hello messages sent every 2 s: never within 300 ms.
      const outcome = await settle(startRedisSentinel({ masterName: `tg-bound-${process.pid}`, withinMs: 300 }));
      expect(performance.now() - startedAt).toBeLessThan(5000);
      expect(outcome.ok).toBe(false);
      expect(String((outcome as { reason: unknown }).reason)).toMatch(/a Sentinel set .* did not come up within 0\.3 s: \S/);
      expect(topologyDirs("sentinel")).toEqual(dirsBefore);
    });

    test("a server that exits at start (a rule Redis refuses) is an error naming it, with its log, at once", async () => {
      const startedAt = performance.now();
      const outcome = settle(startTlsRedis({ users: [{ name: "agent", password: "p", rules: ["+no-such-command"] }], withinMs: 20_000 }));
      const { reason } = (await outcome) as { reason: unknown };
      expect(String(reason)).toMatch(/tls \(redis-server, port \d+\) exited: .*no-such-command/);
      expect(performance.now() - startedAt).toBeLessThan(10_000);
    });

    test("an ACL user whose name, password or rule is not one token is refused before anything starts", async () => {
      const dirsBefore = topologyDirs("tls");
      for (const user of [
        { name: "two words", password: "p", rules: [] },
        { name: "agent", password: "p\nuser default on nopass", rules: [] },
        { name: "agent", password: "p", rules: ["+@all ~*"] },
      ]) {
        await expect(startTlsRedis({ users: [user] })).rejects.toThrow(/must be printable ASCII without spaces/);
      }
      expect(topologyDirs("tls")).toEqual(dirsBefore);
    });
  });
});
