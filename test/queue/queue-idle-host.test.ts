// Issue 44, Sentinel: "a host that stops taking jobs while it believes itself connected is
// noticed (its health says so, and the agent's calls fail within their bounds instead of
// waiting forever)". The host's connections go through a TCP proxy in front of a redis-server
// of the test's own; the proxy black-holes the connections open at that moment (no RST, no FIN,
// nothing delivered either way) and forwards new ones, as after a failover behind a partition:
// ioredis still says "ready", BullMQ's fetch is never answered. The agent reaches Redis directly.
// docs/queue.md — Watching a host (the fetch watchdog), Options (startTimeoutMs).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { QueueToolExecutor, runToolWorkerHost, type ToolWorkerHost } from "toolgate/queue";
import { afterEach, describe, expect, type TestContext, test } from "vitest";
import { call, errorOf, fixture, neverAborted, scratchDir } from "../support/helpers.js";
import { type PartitionProxy, startPartitionProxy } from "../support/partition-proxy.js";
import { hasRedisServerBinary, type RedisServer, startRedisServer, uniqueQueue } from "../support/redis.js";

const TOOLS = fixture("operator-tools");
const ownServer = hasRedisServerBinary() || process.env.TOOLGATE_REQUIRE_REDIS === "1";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function readyz(port: number): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}/readyz`);
  return { status: response.status, body: await response.text() };
}

async function metric(port: number, name: string): Promise<number | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split("\n").find((row) => row.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

/** Polls until `check` holds; the time it took, or a failure naming `what`. */
async function until(check: () => Promise<boolean>, ms: number, what: string): Promise<number> {
  const startedAt = performance.now();
  while (!(await check())) {
    if (performance.now() - startedAt > ms) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(20);
  }
  return performance.now() - startedAt;
}

interface Rig {
  readonly server: RedisServer;
  readonly proxy: PartitionProxy;
  readonly host: ToolWorkerHost;
  readonly agent: QueueToolExecutor;
  readonly queue: string;
  readonly errors: unknown[];
  /** A client of the test's own, straight to the server. */
  readonly direct: Redis;
}

/**
 * A redis-server of the test's own, the proxy, a host through it and an agent straight to the
 * server; stopped when the test finishes, by the test's own hook (the black-holed tests run
 * concurrently: the file's afterEach would stop another test's rig).
 */
async function rig(fetchStallMs: number, onTestFinished: TestContext["onTestFinished"]): Promise<Rig> {
  const cleanups: (() => Promise<unknown>)[] = [];
  onTestFinished(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  });
  const server = await startRedisServer();
  cleanups.push(() => server.kill());
  const proxy = await startPartitionProxy(server.port);
  cleanups.push(() => proxy.close());
  const queue = uniqueQueue("idle");
  const errors: unknown[] = [];
  const host = await runToolWorkerHost({
    connection: proxy.url,
    queue,
    modules: [TOOLS],
    threads: 1,
    metricsPort: 0,
    fetchStallMs,
    closeTimeoutMs: 500,
    onError: (error) => errors.push(error),
  });
  cleanups.push(() => host.close());
  const agent = await QueueToolExecutor.create({ connection: server.url, queue, modules: [TOOLS], heartbeatMs: 100 });
  cleanups.push(() => agent.close());
  const direct = new Redis(server.url);
  cleanups.push(async () => direct.disconnect());
  // The path works before anything is cut.
  expect((await agent.executeToolCall(call("wait", { ms: 1 }, "before"), neverAborted())).isError).toBe(false);
  return { server, proxy, host, agent, queue, errors, direct };
}

/** The clients Redis has, by the port they come from: name, and whether subscribed. */
async function clientsByPort(direct: Redis): Promise<Map<number, { name: string; subscribed: boolean; cmd: string }>> {
  const list = (await direct.client("LIST")) as string;
  const clients = new Map<number, { name: string; subscribed: boolean; cmd: string }>();
  for (const line of list.trim().split("\n")) {
    const fields = new Map(line.split(" ").map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]));
    const port = Number((fields.get("addr") ?? "").split(":").pop());
    clients.set(port, { name: fields.get("name") ?? "", subscribed: fields.get("sub") !== "0", cmd: fields.get("cmd") ?? "" });
  }
  return clients;
}

/**
 * Black-holes the host's two fetching connections: its worker client and BullMQ's blocking one
 * (accepted after the control client and the subscriber, runToolWorkerHost's order), checked
 * against Redis's own list: BullMQ's named blocking client is among them, the subscriber is not.
 */
async function blackHoleFetching({ proxy, direct, queue }: Rig): Promise<void> {
  const holed = proxy.blackHoleOpen(2);
  expect(holed).toHaveLength(2);
  const clients = await clientsByPort(direct);
  const blockingName = `bull:${Buffer.from(queue).toString("base64")}`;
  expect(holed.map((port) => clients.get(port)?.name)).toContain(blockingName);
  expect(holed.some((port) => clients.get(port)?.subscribed)).toBe(false);
}

describe.skipIf(!ownServer)("issue 44: a host that takes no jobs while it believes itself connected", () => {
  // The black-holed tests share nothing (each its own server, proxy, host and agent) and run
  // side by side: the first spends its 8 s waiting out a call no host takes.
  test.concurrent("the fetching connections black-holed: without the watchdog the host stays 'ready' and takes nothing (the defect)", async ({
    onTestFinished,
  }) => {
    const r = await rig(600_000, onTestFinished);
    const port = r.host.metricsPort as number;
    await blackHoleFetching(r);
    const pending = r.agent.executeToolCall(call("wait", { ms: 1 }, "never-taken"), neverAborted(), { timeoutMs: 8000 });
    // 8 s: past BullMQ's own reset of its blocking connection (drainDelay 5 s + 1 s).
    const result = await pending;
    expect(errorOf(result).code).toBe("TOOL_EXECUTION_TIMEOUT");
    expect(await readyz(port)).toEqual({ status: 200, body: "ready\n" });
    expect(await r.direct.llen(`bull:${r.queue}:wait`)).toBe(0); // its cancel removed it: it was never taken
    expect(await metric(port, "toolgate_host_fetch_stalls_total")).toBe(0);
  }, 30_000);

  test.concurrent("the fetching connections black-holed: the watchdog notices (/readyz 503 with the reason, counted, told), reconnects, and the call completes", async ({
    onTestFinished,
  }) => {
    const stallMs = 1000;
    const r = await rig(stallMs, onTestFinished);
    const port = r.host.metricsPort as number;
    await blackHoleFetching(r);
    // The connections the recovery makes are held until the test has read /readyz (a gate, not a race).
    r.proxy.holdNew(true);
    const sentAt = performance.now();
    const pending = r.agent.executeToolCall(call("wait", { ms: 1 }, "taken-late"), neverAborted(), { timeoutMs: 30_000 });
    let notReady = { status: 0, body: "" };
    const noticedMs = await until(
      async () => {
        notReady = await readyz(port);
        return notReady.status === 503;
      },
      10_000,
      "/readyz saying the host is stuck",
    );
    expect(notReady.body).toMatch(/^not ready: 1 job\(s\) wait in the queue and this host, with a thread free, took none for \d+ ms\n$/);
    expect(await metric(port, "toolgate_host_fetch_stalls_total")).toBe(1);
    expect(await metric(port, "toolgate_host_ready")).toBe(0);
    expect(r.errors.map(String).some((text) => text.includes("the host is stuck: 1 job(s) wait in the queue"))).toBe(true);
    r.proxy.holdNew(false);
    const result = await pending;
    expect(result.isError).toBe(false);
    expect(result.content).toBe("waited");
    await until(async () => (await readyz(port)).status === 200, 5000, "/readyz ready again");
    expect(await metric(port, "toolgate_host_ready")).toBe(1);

    // Again, ungated: how long the whole of it takes.
    await blackHoleFetching(r);
    const againAt = performance.now();
    const again = await r.agent.executeToolCall(call("wait", { ms: 1 }, "again"), neverAborted(), { timeoutMs: 30_000 });
    const recoveredMs = performance.now() - againAt;
    expect(again.isError).toBe(false);
    expect(await metric(port, "toolgate_host_fetch_stalls_total")).toBe(2);
    // It keeps taking jobs.
    const next = performance.now();
    expect((await r.agent.executeToolCall(call("wait", { ms: 1 }, "after"), neverAborted())).isError).toBe(false);
    const nextMs = performance.now() - next;
    expect(nextMs).toBeLessThan(2000);
    process.stdout.write(
      `[issue 44 idle host] fetching links black-holed, fetchStallMs ${stallMs}: /readyz 503 ${Math.round(noticedMs)} ms after the call was sent; ungated, the call's result ${Math.round(recoveredMs)} ms after it was sent; the next call ${Math.round(nextMs)} ms (sent ${Math.round(againAt - sentAt)} ms into the test)\n`,
    );
  }, 30_000);

  test.concurrent("every link of the host black-holed: its unanswered check is noticed, every connection made again, and the call completes", async ({
    onTestFinished,
  }) => {
    const stallMs = 1000;
    const r = await rig(stallMs, onTestFinished);
    const port = r.host.metricsPort as number;
    expect(r.proxy.blackHoleOpen(0)).toHaveLength(4);
    const cutAt = performance.now();
    const pending = r.agent.executeToolCall(call("wait", { ms: 1 }, "cut-off"), neverAborted(), { timeoutMs: 30_000 });
    let notReady = { status: 0, body: "" };
    const noticedMs = await until(
      async () => {
        notReady = await readyz(port);
        return notReady.status === 503;
      },
      10_000,
      "/readyz saying the host is cut off",
    );
    const result = await pending;
    const recoveredMs = performance.now() - cutAt;
    expect(result.isError).toBe(false);
    await until(async () => (await readyz(port)).status === 200, 5000, "/readyz ready again");
    expect(await metric(port, "toolgate_host_fetch_stalls_total")).toBeGreaterThanOrEqual(1);
    expect(r.errors.map(String).some((text) => text.includes("Redis did not answer the host's check of its queue within 1000 ms"))).toBe(
      true,
    );
    process.stdout.write(
      `[issue 44 idle host] every link black-holed, fetchStallMs ${stallMs}: /readyz 503 ${Math.round(noticedMs)} ms after the cut (${JSON.stringify(notReady.body.trim())}), the call's result ${Math.round(recoveredMs)} ms after\n`,
    );
  }, 30_000);

  test("a busy host is not stuck: every thread running, jobs waiting past fetchStallMs, /readyz stays ready and nothing is counted", async ({
    onTestFinished,
  }) => {
    const stallMs = 1000;
    const r = await rig(stallMs, onTestFinished);
    const port = r.host.metricsPort as number;
    // One thread: the first call holds it 3 × fetchStallMs while the second waits in the queue.
    const running = r.agent.executeToolCall(call("wait", { ms: 3 * stallMs }, "busy"), neverAborted());
    const waiting = r.agent.executeToolCall(call("wait", { ms: 1 }, "behind"), neverAborted());
    await until(async () => (await r.direct.llen(`bull:${r.queue}:wait`)) === 1, 2000, "the second job waiting");
    const statuses = new Set<number>();
    let polls = 0;
    while ((await r.direct.llen(`bull:${r.queue}:wait`)) === 1) {
      statuses.add((await readyz(port)).status);
      polls += 1;
      await sleep(50);
    }
    expect(polls).toBeGreaterThan(10);
    expect(statuses).toEqual(new Set([200]));
    expect((await running).isError).toBe(false);
    expect((await waiting).isError).toBe(false);
    expect(await metric(port, "toolgate_host_fetch_stalls_total")).toBe(0);
    expect(r.errors).toEqual([]);
  }, 30_000);

  test("fetchStallMs is checked like every option", async () => {
    for (const fetchStallMs of [999, 600_001, 1.5, "5000"]) {
      await expect(
        runToolWorkerHost({ connection: "redis://127.0.0.1:1", queue: "q", modules: [TOOLS], fetchStallMs: fetchStallMs as number }),
      ).rejects.toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringContaining("options.fetchStallMs") });
    }
  });
});

describe.skipIf(!ownServer)("issue 44: an agent's call that no host takes ends within startTimeoutMs", () => {
  test("no host: the call (no time limit of its own) ends TOOL_EXECUTION_TIMEOUT after startTimeoutMs, its job removed; a host that comes later never runs it", async () => {
    const server = await startRedisServer();
    cleanups.push(() => server.kill());
    const queue = uniqueQueue("no-host");
    const startTimeoutMs = 1000;
    const heartbeatMs = 100;
    const agent = await QueueToolExecutor.create({ connection: server.url, queue, modules: [TOOLS], heartbeatMs, startTimeoutMs });
    cleanups.push(() => agent.close());
    const direct = new Redis(server.url);
    cleanups.push(async () => direct.disconnect());
    const marker = join(scratchDir(), "touched");
    const sentAt = performance.now();
    const pending = agent.executeToolCall(call("touch", { path: marker }, "untaken"), neverAborted());
    await until(async () => (await direct.keys(`bull:${queue}:tg-*`)).length === 1, 900, "the job's hash in Redis");
    expect(await direct.llen(`bull:${queue}:wait`)).toBe(1);
    const result = await pending;
    const settledMs = performance.now() - sentAt;
    const error = errorOf(result);
    expect(error.code).toBe("TOOL_EXECUTION_TIMEOUT");
    expect(error.message).toContain(
      `no worker host took the call within 1000 ms (startTimeoutMs): is a host running on the queue ${queue}`,
    );
    expect(settledMs).toBeGreaterThanOrEqual(startTimeoutMs);
    expect(settledMs).toBeLessThan(startTimeoutMs + heartbeatMs + 1500);
    // The job is gone: out of the wait list, its hash deleted (the cancel script), so no host can take it.
    await until(async () => (await direct.keys(`bull:${queue}:tg-*`)).length === 0, 2000, "the job's hash removed");
    expect(await direct.llen(`bull:${queue}:wait`)).toBe(0);
    // A host that comes now takes the next call, and never the removed one.
    const host = await runToolWorkerHost({ connection: server.url, queue, modules: [TOOLS], threads: 1 });
    cleanups.push(() => host.close());
    expect((await agent.executeToolCall(call("wait", { ms: 1 }, "taken"), neverAborted())).isError).toBe(false);
    expect(existsSync(marker)).toBe(false);
    process.stdout.write(
      `[issue 44 start timeout] no host, startTimeoutMs ${startTimeoutMs}, heartbeatMs ${heartbeatMs}: settled after ${Math.round(settledMs)} ms\n`,
    );
  }, 30_000);

  test("a job a host took is not cut by startTimeoutMs: a call running longer than it returns its result", async () => {
    const server = await startRedisServer();
    cleanups.push(() => server.kill());
    const queue = uniqueQueue("taken");
    const host = await runToolWorkerHost({ connection: server.url, queue, modules: [TOOLS], threads: 1 });
    cleanups.push(() => host.close());
    const agent = await QueueToolExecutor.create({ connection: server.url, queue, modules: [TOOLS], heartbeatMs: 50, startTimeoutMs: 300 });
    cleanups.push(() => agent.close());
    const result = await agent.executeToolCall(call("wait", { ms: 1200 }, "long"), neverAborted());
    expect(result).toMatchObject({ isError: false, content: "waited" });
  }, 30_000);

  test("startTimeoutMs is checked like every option", async () => {
    for (const startTimeoutMs of [99, 2 ** 31, 1.5, "5000"]) {
      await expect(
        QueueToolExecutor.create({
          connection: "redis://127.0.0.1:1",
          queue: "q",
          modules: [TOOLS],
          startTimeoutMs: startTimeoutMs as number,
        }),
      ).rejects.toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringContaining("options.startTimeoutMs") });
    }
  });
});
