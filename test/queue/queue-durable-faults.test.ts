// Fault tests of issue 42 on the queue, with real processes and real Redis: agent processes
// SIGKILLed between their claim and their job's enqueue (held in beforeExecute), while the job
// waits with no host up, while the tool runs, and after completion with the job itself gone;
// host processes SIGKILLed mid-call (at-most-once: lost; at-least-once: attempt 2); two agent
// processes × 50 concurrent re-issues of one key. Each tool counts its executions with an INCR
// outside the record; every race is held open by a gate (a BLPOP the test pushes to).
import type { ChildProcess } from "node:child_process";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import type { ToolResultMessage } from "toolgate";
import { QueueToolExecutor } from "toolgate/queue";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { durableKeyOf } from "../../dist/src/durable/key.js";
import { type Agent, type AgentReport, killed, startAgent } from "../durable/agent-process.js";
import { call, errorOf, neverAborted, settle } from "../support/helpers.js";
import { findRedis, uniqueQueue } from "../support/redis.js";
import { startHostProcess } from "./host-process.js";
import { monitorOf } from "./monitor.js";

const TOOLS = new URL("../durable/fixtures/durable-tools.mjs", import.meta.url);
const AGENT = new URL("./fixtures/durable-agent.mjs", import.meta.url);
const LOST = "an earlier execution of this call was lost; the tool may have run, and it will not run again under this key";
const found = await findRedis();
const url = "url" in found ? found.url : "";
process.env.DURABLE_TEST_REDIS = url;

let redis: Redis;
const children: ChildProcess[] = [];
const cleanups: (() => Promise<unknown>)[] = [];
beforeAll(() => {
  if (url !== "") redis = new Redis(url);
});
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});
afterAll(() => {
  redis?.disconnect();
});

const unique = (label: string): string => uniqueQueue(label);
const count = async (counter: string): Promise<number> => Number((await redis.get(counter)) ?? 0);
const resultOf = (report: AgentReport, index = 0): ToolResultMessage => (report.outcomes[index] as { result: ToolResultMessage }).result;

async function until(condition: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("the condition never held");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function agent(config: Record<string, unknown>): Agent {
  return startAgent(AGENT, config, url, children);
}

async function hostProcess(queue: string) {
  const host = await startHostProcess(url, queue, [TOOLS], ["--threads", "2", "--lock-duration", "1000"]);
  cleanups.push(() => host.stop("SIGKILL"));
  return host;
}

/** One durable call's setting: its queue, key, counters and gates, and an agent process's config. */
function scenario(tool: string) {
  const [queue, counter, gate, begun, approvals, runId] = ["queue", "count", "gate", "started", "approvals", "run"].map(unique) as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const toolCall = call(tool, { counter, gate, started: begun }, "call-1");
  return {
    queue,
    counter,
    gate,
    begun,
    approvals,
    runId,
    toolCall,
    config: (extra: Record<string, unknown> = {}) => ({ connection: url, queue, runId, approvals, call: toolCall, ...extra }),
    state: () => redis.hget(`toolgate:${queue}:durable:${durableKeyOf(runId, "call-1")}`, "state"),
  };
}

describe.runIf(url !== "")("durable calls on the queue: agent and host processes killed", () => {
  test("1: agent SIGKILLed between its claim and its job's enqueue; restarted and re-issued → 1 execution", async () => {
    const setting = scenario("charge");
    await hostProcess(setting.queue);
    const first = agent(setting.config({ approvalGate: unique("approval") }));
    await until(async () => (await count(setting.approvals)) === 1);
    expect(await setting.state()).toBe("claimed");
    await killed(first.child);
    await redis.rpush(setting.gate, "go");
    const second = await agent(setting.config()).report;
    expect(JSON.parse(resultOf(second).content)).toMatchObject({ attempt: 1 });
    expect(second.ends).toEqual(["executed"]);
    expect(await count(setting.counter)).toBe(1);
    expect(await count(setting.approvals)).toBe(2); // the claim was released (its lease ran out): the re-issue asked again
  });

  test("2: agent SIGKILLed while its job waits with no host up; re-issued, a host started → 1 execution, the re-issuer gets the result", async () => {
    const setting = scenario("charge");
    const first = agent(setting.config());
    await until(async () => (await redis.llen(`bull:${setting.queue}:wait`)) === 1);
    await killed(first.child);
    await redis.rpush(setting.gate, "go");
    const second = agent(setting.config());
    await second.issued;
    await hostProcess(setting.queue);
    const report = await second.report;
    expect(JSON.parse(resultOf(report).content)).toMatchObject({ attempt: 1 });
    expect(report.ends).toEqual(["executed"]);
    expect(await count(setting.counter)).toBe(1);
  });

  test("3: agent SIGKILLed while the tool runs; the re-issue attaches → 1 execution", async () => {
    const setting = scenario("charge");
    await hostProcess(setting.queue);
    const seen = await monitorOf(url, setting.queue, cleanups);
    const first = agent(setting.config());
    await until(async () => (await redis.llen(setting.begun)) === 1);
    await killed(first.child);
    const second = agent(setting.config());
    // The re-issuer's claim found the execution running: it is attached before the tool may finish.
    await until(() => seen.filter((command) => command.args.at(-1) === "claimed").length === 2);
    await redis.rpush(setting.gate, "go");
    const report = await second.report;
    expect(JSON.parse(resultOf(report).content)).toMatchObject({ attempt: 1 });
    expect(report.ends).toEqual(["attached"]);
    expect(await count(setting.counter)).toBe(1);
  });

  test("4: agent SIGKILLed after completion, the job itself removed → replayed, 0 executions, beforeExecute not called", async () => {
    const setting = scenario("charge");
    await hostProcess(setting.queue);
    await redis.rpush(setting.gate, "go");
    const first = await agent(setting.config()).report;
    const connection = new Redis(url, { maxRetriesPerRequest: null });
    const bull = new Queue(setting.queue, { connection });
    await bull.obliterate({ force: true });
    await bull.close();
    connection.disconnect();
    expect(await redis.keys(`bull:${setting.queue}:*`)).toEqual([]);
    const second = await agent(setting.config()).report;
    expect(resultOf(second).content).toBe(resultOf(first).content);
    expect(second.ends).toEqual(["replayed"]);
    expect(await count(setting.counter)).toBe(1);
    expect(await count(setting.approvals)).toBe(1);
  });

  test("5a: host SIGKILLed mid-call, at-most-once → the lost result for the caller and every later caller, ≤ 1 execution", async () => {
    const setting = scenario("charge");
    const victim = await hostProcess(setting.queue);
    const executor = await QueueToolExecutor.create({
      connection: url,
      queue: setting.queue,
      modules: [TOOLS],
      heartbeatMs: 100,
      durable: { leaseMs: 1000 },
    });
    cleanups.push(() => executor.close());
    const pending = executor.executeToolCall(setting.toolCall, neverAborted(), { durable: { runId: setting.runId } });
    await until(async () => (await redis.llen(setting.begun)) === 1);
    await victim.stop("SIGKILL");
    expect(errorOf(await pending)).toEqual({ code: "TOOL_EXECUTION_FAILED", message: LOST });
    await hostProcess(setting.queue);
    const later = await agent(setting.config()).report;
    expect(errorOf(resultOf(later))).toEqual({ code: "TOOL_EXECUTION_FAILED", message: LOST });
    expect(later.ends).toEqual(["lost"]);
    expect(await count(setting.counter)).toBe(1);
    expect(await setting.state()).toBe("lost");
  });

  test("5b: host SIGKILLed mid-call, at-least-once → attempt 2 with the same idempotencyKey; the final outcome replayed", async () => {
    const setting = scenario("retryable");
    const victim = await hostProcess(setting.queue);
    const executor = await QueueToolExecutor.create({
      connection: url,
      queue: setting.queue,
      modules: [TOOLS],
      heartbeatMs: 100,
      durable: { leaseMs: 1000 },
    });
    cleanups.push(() => executor.close());
    const pending = settle(executor.executeToolCall(setting.toolCall, neverAborted(), { durable: { runId: setting.runId } }));
    await until(async () => (await redis.llen(setting.begun)) === 1);
    await victim.stop("SIGKILL");
    await hostProcess(setting.queue);
    const settled = await pending;
    const result = (settled as { value: ToolResultMessage }).value;
    const idempotencyKey = `tg:${durableKeyOf(setting.runId, "call-1")}`;
    expect(JSON.parse(result.content)).toEqual({ attempt: 2, idempotencyKey });
    expect(await redis.lrange(setting.begun, 0, -1)).toEqual(["1", "2"]);
    const later = await agent(setting.config()).report;
    expect(resultOf(later).content).toBe(result.content);
    expect(later.ends).toEqual(["replayed"]);
    expect(await count(setting.counter)).toBe(2);
  });

  test("8: two agent processes × 50 concurrent re-issues of one key → 1 execution, outcomes identical byte for byte", async () => {
    const setting = scenario("charge");
    await hostProcess(setting.queue);
    await redis.rpush(setting.gate, "go");
    const reports = await Promise.all([agent(setting.config({ copies: 50 })).report, agent(setting.config({ copies: 50 })).report]);
    const texts = reports.flatMap((report) => report.outcomes.map((outcome) => JSON.stringify(outcome)));
    expect(texts).toHaveLength(100);
    expect(new Set(texts).size).toBe(1);
    expect(reports.flatMap((report) => report.ends).filter((end) => end === "executed")).toHaveLength(1);
    expect(await count(setting.counter)).toBe(1);
  });
});
