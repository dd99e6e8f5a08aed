// Fault tests of issue 42 that apply without the queue, with real processes: an agent process
// SIGKILLed while its tool runs (at-most-once: lost; at-least-once: attempt 2 with the same
// idempotency key) and after completion (replayed, no execution, no approval asked), two agent
// processes re-issuing one key 25 times each, a Redis restarted with appendfsync always, a Redis
// that may evict (refused), and retention expiry (runs again). Each tool counts its executions
// with an INCR outside the record.
import type { ChildProcess } from "node:child_process";
import { Redis } from "ioredis";
import { InProcessToolExecutor, isToolContractError, ToolRegistry, type ToolResultMessage } from "toolgate";
import { redisDurableStore } from "toolgate/durable";
import { WorkerToolExecutor } from "toolgate/worker";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { durableKeyOf } from "../../dist/src/durable/key.js";
import { call, errorOf, neverAborted, scratchDir, settle } from "../support/helpers.js";
import { hasRedisServerBinary, type RedisServer, startRedisServer } from "../support/redis.js";
import { type Agent, killed, startAgent } from "./agent-process.js";
import { count, redisUrl, started, TOOLS, testRedis, unique } from "./kit.js";

const AGENT = new URL("./fixtures/agent.mjs", import.meta.url);
const LOST = "an earlier execution of this call was lost; the tool may have run, and it will not run again under this key";

let redis: Redis;
const children: ChildProcess[] = [];
const servers: RedisServer[] = [];
beforeAll(() => {
  redis = testRedis();
});
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const server of servers.splice(0)) await server.kill();
});
afterAll(async () => {
  await redis.quit();
});

function agent(config: Record<string, unknown>): Agent {
  return startAgent(AGENT, config, redisUrl as string, children);
}

/** One durable call's setting: its store on `connection`, its key, its counters. */
function scenario(tool: string, connection = redisUrl as string) {
  const [counter, gate, begun, approvals, runId] = [unique("count"), unique("gate"), unique("started"), unique("approvals"), unique("run")];
  const prefix = unique("durable");
  return {
    counter,
    gate,
    begun,
    approvals,
    config: (extra: Record<string, unknown> = {}) => ({
      store: { connection, prefix, leaseMs: 1000 },
      runId,
      approvals,
      call: call(tool, { counter, gate, started: begun }, "call-1"),
      ...extra,
    }),
    runId,
  };
}

describe.runIf(redisUrl !== undefined)("agent processes killed and restarted, redisDurableStore", () => {
  test("SIGKILL while an at-most-once tool runs; restarted and re-issued: the lost result, 1 execution", async () => {
    const setting = scenario("charge");
    const config = setting.config();
    const first = agent(config);
    await started(redis, setting.begun);
    await killed(first.child);
    const second = await agent(config).report; // finds the record running; its lease runs out (1 s): lost
    expect(second.outcomes).toHaveLength(1);
    expect(errorOf((second.outcomes[0] as { result: ToolResultMessage }).result)).toEqual({ code: "TOOL_EXECUTION_FAILED", message: LOST });
    expect(second.ends).toEqual(["lost"]);
    expect(await count(redis, setting.counter)).toBe(1);
    expect(await count(redis, setting.approvals)).toBe(1); // the restarted agent was never asked
  });

  test("SIGKILL while an at-least-once tool runs; restarted and re-issued: attempt 2 with the same idempotency key, 2 executions", async () => {
    const setting = scenario("retryable");
    const config = setting.config();
    const first = agent(config);
    await started(redis, setting.begun);
    await killed(first.child);
    const second = await agent(config).report;
    const result = (second.outcomes[0] as { result: ToolResultMessage }).result;
    expect(JSON.parse(result.content)).toEqual({ attempt: 2, idempotencyKey: `tg:${durableKeyOf(setting.runId, "call-1")}` });
    expect(await redis.lrange(setting.begun, 0, -1)).toEqual(["1", "2"]);
    expect(await count(redis, setting.counter)).toBe(2);
  });

  test("SIGKILL while beforeExecute decides (the tool never started); restarted and re-issued: released, runs once", async () => {
    const setting = scenario("charge");
    const approvalGate = unique("approval");
    const first = agent(setting.config({ approvalGate }));
    await vitestUntil(async () => (await count(redis, setting.approvals)) === 1);
    await killed(first.child);
    await redis.lpush(setting.gate, "go");
    const second = await agent(setting.config()).report; // the claim's lease lapses (1 s): released, claimed again
    expect((second.outcomes[0] as { result: ToolResultMessage }).result.isError).toBe(false);
    expect(second.ends).toEqual(["executed"]);
    expect(await count(redis, setting.counter)).toBe(1);
    expect(await count(redis, setting.approvals)).toBe(2);
  });

  test("SIGKILL after completion; restarted and re-issued: replayed, 0 executions, beforeExecute not called", async () => {
    const setting = scenario("charge");
    const config = setting.config();
    await redis.lpush(setting.gate, "go");
    const first = await agent(config).report;
    const second = await agent(config).report;
    expect(second.outcomes).toEqual(first.outcomes);
    expect(first.ends).toEqual(["executed"]);
    expect(second.ends).toEqual(["replayed"]);
    expect(await count(redis, setting.counter)).toBe(1);
    expect(await count(redis, setting.approvals)).toBe(1);
  });

  test("two agent processes × 25 concurrent re-issues of one key: 1 execution, every outcome identical byte for byte", async () => {
    const setting = scenario("charge");
    const config = setting.config({ copies: 25 });
    const agents = [agent(config), agent(config)];
    await Promise.all(agents.map((each) => each.issued));
    await started(redis, setting.begun);
    await redis.lpush(setting.gate, "go");
    const reports = await Promise.all(agents.map((each) => each.report));
    const texts = reports.flatMap((report) => report.outcomes.map((outcome) => JSON.stringify(outcome)));
    expect(texts).toHaveLength(50);
    expect(new Set(texts).size).toBe(1);
    expect(await count(redis, setting.counter)).toBe(1);
    expect(reports.flatMap((report) => report.ends).filter((end) => end === "executed")).toHaveLength(1);
  });
});

describe.runIf(redisUrl !== undefined)("a bounded soak: agents SIGKILLed at random points", () => {
  test("8 rounds: an at-most-once tool never runs twice, and every re-issue settles with one outcome for all its copies", async () => {
    for (let round = 0; round < 8; round += 1) {
      const setting = scenario("charge");
      await redis.lpush(setting.gate, "go", "go", "go"); // the tool does not wait: kills land anywhere in the call
      const config = setting.config({ copies: 3 });
      const first = agent(config);
      await first.issued;
      await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 60)));
      await killed(first.child);
      const before = await count(redis, setting.counter);
      const second = await agent(config).report;
      const after = await count(redis, setting.counter);
      expect(after, `round ${round}`).toBeLessThanOrEqual(1);
      if (before === 1) expect(second.ends.includes("executed"), `round ${round}: ran again`).toBe(false);
      expect(new Set(second.outcomes.map((outcome) => JSON.stringify(outcome))).size, `round ${round}`).toBe(1);
    }
  }, 60_000);
});

describe.runIf(redisUrl !== undefined && hasRedisServerBinary())("a Redis of the test's own", () => {
  test("restarted with appendfsync always after completion: the re-issue is replayed, 1 execution", async () => {
    const dir = scratchDir();
    let server = await startRedisServer(undefined, { appendOnlyDir: dir });
    servers.push(server);
    const setting = scenario("charge", server.url);
    const config = setting.config();
    await redis.lpush(setting.gate, "go");
    const first = await agent(config).report;
    await server.kill();
    servers.splice(servers.indexOf(server), 1);
    server = await startRedisServer(server.port, { appendOnlyDir: dir });
    servers.push(server);
    const second = await agent(config).report;
    expect(second.outcomes).toEqual(first.outcomes);
    expect(second.ends).toEqual(["replayed"]);
    expect(await count(redis, setting.counter)).toBe(1);
  });

  test("maxmemory-policy allkeys-lru: WorkerToolExecutor.create() and the first in-process durable call refuse; assumeNoEviction overrides", async () => {
    const server = await startRedisServer();
    servers.push(server);
    const admin = new Redis(server.url);
    await admin.config("SET", "maxmemory-policy", "allkeys-lru");
    admin.disconnect();
    const store = redisDurableStore({ connection: server.url, prefix: unique("durable") });
    const refused = await settle(WorkerToolExecutor.create({ modules: [TOOLS], maxThreads: 1, durable: { store } }));
    const reason = (refused as { reason: Error }).reason;
    expect(isToolContractError(reason) && reason.code).toBe("INVALID_ARGUMENT");
    expect(reason.message).toContain('maxmemory-policy is "allkeys-lru"');
    const { default: definitions } = (await import(TOOLS.href)) as { default: never[] };
    const inProcess = new InProcessToolExecutor(new ToolRegistry(definitions), { durable: { store } });
    const counter = unique("count");
    const first = await settle(inProcess.executeToolCall(call("charge", { counter }), neverAborted(), { durable: { runId: "r" } }));
    expect((first as { reason: { code: string } }).reason.code).toBe("INVALID_ARGUMENT");
    expect(await count(redis, counter)).toBe(0);
    await store.close();
    const trusting = redisDurableStore({ connection: server.url, prefix: unique("durable"), assumeNoEviction: true });
    const overridden = new InProcessToolExecutor(new ToolRegistry(definitions), { durable: { store: trusting } });
    expect((await overridden.executeToolCall(call("charge", { counter }), neverAborted(), { durable: { runId: "r" } })).isError).toBe(
      false,
    );
    await trusting.close();
  });
});

describe.runIf(redisUrl !== undefined)("retention", () => {
  test("a record past its retention is gone: the re-issue runs again (documented)", async () => {
    const prefix = unique("durable");
    const store = redisDurableStore({ connection: redisUrl as string, prefix });
    const { default: definitions } = (await import(TOOLS.href)) as { default: never[] };
    const executor = new InProcessToolExecutor(new ToolRegistry(definitions), { durable: { store } });
    const counter = unique("count");
    await executor.executeToolCall(call("charge", { counter }, "c1"), neverAborted(), { durable: { runId: "r" } });
    const name = `${prefix}:durable:${durableKeyOf("r", "c1")}`;
    const ttl = await redis.pttl(name);
    expect(ttl).toBeGreaterThan(24 * 3600 * 1000 - 60_000); // the default 24 h, on Redis' clock
    await redis.pexpire(name, 1); // retention elapses
    await new Promise((resolve) => setTimeout(resolve, 20));
    await executor.executeToolCall(call("charge", { counter }, "c1"), neverAborted(), { durable: { runId: "r" } });
    expect(await count(redis, counter)).toBe(2);
    await store.close();
  });
});

async function vitestUntil(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
