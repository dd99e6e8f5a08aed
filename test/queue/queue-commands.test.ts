// docs/queue.md — Redis commands per call: the agent's confirmation of its one call in flight
// rides behind the blocking events read, on the same connection, read off Redis's MONITOR
// stream (the order in which the server ran each connection's commands). A forged event
// meeting a ridden read of an unfinished hash is covered in queue-defects.test.ts (5).
import { connect } from "node:net";
import { describe, expect, test } from "vitest";
import { call, fixture, neverAborted } from "../support/helpers.js";
import { queueKit } from "../support/queue-kit.js";
import { findRedis, uniqueQueue } from "../support/redis.js";

const TOOLS = fixture("queue-defect-tools");
const redis = await findRedis();
const url = "url" in redis ? redis.url : "";

const { cleanups, host, agent } = queueKit(url, [TOOLS]);

/** One command as MONITOR reports it: the connection that sent it and its words (a script's own commands left out). */
interface Seen {
  readonly from: string;
  readonly args: readonly string[];
}

/**
 * Every command the server runs from now on that names `queue`, in order, from a MONITOR
 * connection of the test's own (a raw socket: ioredis's monitor mode can lose a line that comes
 * in the same chunk as MONITOR's "OK").
 */
async function monitorOf(queue: string): Promise<Seen[]> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port || 6379), hostname);
  cleanups.push(async () => socket.destroy());
  const seen: Seen[] = [];
  let buffered = "";
  const started = new Promise<void>((resolve) => {
    socket.setEncoding("utf8").on("data", (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split("\r\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) {
        if (line === "+OK") resolve();
        const match = /^\+[\d.]+ \[\d+ ([^\]]+)\] (.*)$/.exec(line);
        if (match === null || match[1] === "lua" || !line.includes(queue)) continue;
        const args = [...(match[2] as string).matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((arg) => arg[1] as string);
        seen.push({ from: match[1] as string, args });
      }
    });
  });
  socket.write("MONITOR\r\n");
  await started;
  return seen;
}

describe.skipIf(!("url" in redis))("docs/queue.md — Redis commands per call", () => {
  test("one call in flight: its confirmation (an HMGET of its hash) rides behind the events read, on the same connection, and its result is the host's", async () => {
    const queue = uniqueQueue("riding");
    await host(queue, { threads: 1 });
    const executor = await agent(queue, { heartbeatMs: 60_000 });
    await executor.executeToolCall(call("echoId", {}, "warm"), neverAborted());
    const seen = await monitorOf(queue);
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
