// docs/queue.md — Redis commands per call: the agent's confirmation of its one call in flight
// rides behind the blocking events read, on the same connection, read off Redis's MONITOR
// stream (the order in which the server ran each connection's commands). A forged event
// meeting a ridden read of an unfinished hash is covered in queue-defects.test.ts (5).
import { describe, expect, test } from "vitest";
import { call, fixture, neverAborted } from "../support/helpers.js";
import { queueKit } from "../support/queue-kit.js";
import { findRedis, uniqueQueue } from "../support/redis.js";
import { monitorOf } from "./monitor.js";

const TOOLS = fixture("queue-defect-tools");
const redis = await findRedis();
const url = "url" in redis ? redis.url : "";

const { cleanups, host, agent } = queueKit(url, [TOOLS]);

describe.skipIf(!("url" in redis))("docs/queue.md — Redis commands per call", () => {
  test("one call in flight: its confirmation (an HMGET of its hash) rides behind the events read, on the same connection, and its result is the host's", async () => {
    const queue = uniqueQueue("riding");
    await host(queue, { threads: 1 });
    const executor = await agent(queue, { heartbeatMs: 60_000 });
    await executor.executeToolCall(call("echoId", {}, "warm"), neverAborted());
    const seen = await monitorOf(url, queue, cleanups);
    const calls = 5;
    for (let n = 0; n < calls; n += 1) {
      // 200 ms: the `active` event is read long before the job finishes, however loaded the machine.
      const result = await executor.executeToolCall(call("slow", { ms: 200 }, `ride-${n}`), neverAborted());
      expect(JSON.parse(result.content)).toEqual({ toolCallId: `ride-${n}` });
    }
    await new Promise((resolve) => setTimeout(resolve, 100));

    const events = `bull:${queue}:events`;
    const confirmations = seen.filter((command) => command.args[0]?.toLowerCase() === "hmget");
    const confirmed = new Set(confirmations.map((command) => command.args[1]));
    for (let n = 0; n < calls; n += 1) expect([...confirmed].some((key) => key?.endsWith(`.ride-${n}`))).toBe(true);
    // Each was run right after an XREAD of the queue's events sent by the same connection: it rode behind it.
    for (const confirmation of confirmations) {
      const before = seen.slice(0, seen.indexOf(confirmation)).filter((command) => command.from === confirmation.from);
      const previous = before[before.length - 1];
      expect(previous?.args[0]?.toLowerCase()).toBe("xread");
      expect(previous?.args).toContain(events);
    }
  });
});
