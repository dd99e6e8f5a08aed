// Fault test 7 of issue 42 on the queue: a host partitioned after its tool finished. The host
// runs as a process in a network namespace of the test's own (test/support/netns.ts), joined to
// a redis-server of the test's own by a veth pair the test takes down and up; the agent runs
// here. The tool finishes while its host is cut off (it waits on a file, not on Redis): the
// agent observes the host's lease run out first (lost), the host's late finish reaches Redis
// after the heal and loses, and the answer never flips.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { QueueToolExecutor } from "toolgate/queue";
import { afterEach, describe, expect, test } from "vitest";
import { durableKeyOf } from "../../dist/src/durable/key.js";
import { call, errorOf, neverAborted, scratchDir } from "../support/helpers.js";
import { makeNamespace, namespaceSupport } from "../support/netns.js";
import { hasRedisServerBinary, startRedisServer, uniqueQueue } from "../support/redis.js";
import { startHostProcess } from "./host-process.js";
import { monitorOf } from "./monitor.js";

const TOOLS = new URL("./fixtures/durable-partition-tools.mjs", import.meta.url);
const LOST = "an earlier execution of this call was lost; the tool may have run, and it will not run again under this key";
const namespaces = namespaceSupport();
if (hasRedisServerBinary() && !namespaces.ok) {
  process.stderr.write(`\n*** queue durable partition test (issue 42: 7) SKIPPED: ${namespaces.reason} ***\n\n`);
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

async function until(check: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(!hasRedisServerBinary() || !namespaces.ok)("issue 42, 7: a durable call's host partitioned after its tool finished", () => {
  test("the stall is observed first (lost), the host's late finish loses, the answer never flips; 1 execution", async () => {
    const ns = makeNamespace();
    cleanups.push(async () => ns.close());
    const server = await startRedisServer(undefined, { bind: [ns.rootAddress] });
    cleanups.push(() => server.kill());
    const innerUrl = `redis://${ns.rootAddress}:${server.port}`;
    const redis = new Redis(server.url);
    cleanups.push(async () => redis.disconnect());
    const queue = uniqueQueue("durable-cut");
    // The host's tool counts on the test's server, which it reaches through the link.
    process.env.DURABLE_TEST_REDIS = innerUrl;
    const host = await startHostProcess(innerUrl, queue, [TOOLS], ["--threads", "1", "--lock-duration", "1000"], ns.spawn);
    cleanups.push(() => host.stop("SIGKILL"));
    const executor = await QueueToolExecutor.create({
      connection: server.url,
      queue,
      modules: [TOOLS],
      heartbeatMs: 100,
      durable: { leaseMs: 1000 },
    });
    cleanups.push(() => executor.close());
    const seen = await monitorOf(server.url, queue, cleanups);
    const [counter, begun, runId] = [uniqueQueue("count"), uniqueQueue("started"), uniqueQueue("run")];
    const file = join(scratchDir(), "finish");
    const toolCall = call("finishOffline", { counter, started: begun, file }, "p1");
    const pending = executor.executeToolCall(toolCall, neverAborted(), { durable: { runId } });
    await until(async () => (await redis.llen(begun)) === 1, 10_000, "the tool started");
    const record = `toolgate:${queue}:durable:${durableKeyOf(runId, "p1")}`;
    expect(await redis.hget(record, "state")).toBe("running");
    ns.cut();
    writeFileSync(file, "now"); // the tool finishes while its host cannot reach Redis
    expect(errorOf(await pending)).toEqual({ code: "TOOL_EXECUTION_FAILED", message: LOST });
    expect(await redis.hget(record, "state")).toBe("lost");
    // An outcome's write names the record and carries the outcome (its JSON, escaped by MONITOR).
    const outcomeWrites = () =>
      seen.filter((command) => command.args.includes(record) && command.args.some((arg) => arg.includes('\\"k\\":'))).length;
    const settlesBefore = outcomeWrites();
    ns.heal();
    // The host's finish reaches Redis after the heal, and loses: the record stays lost.
    await until(() => outcomeWrites() > settlesBefore, 15_000, "the host's late finish");
    expect(await redis.hget(record, "state")).toBe("lost");
    const again = await executor.executeToolCall(toolCall, neverAborted(), { durable: { runId } });
    expect(errorOf(again)).toEqual({ code: "TOOL_EXECUTION_FAILED", message: LOST });
    expect(Number(await redis.get(counter))).toBe(1);
  });
});
