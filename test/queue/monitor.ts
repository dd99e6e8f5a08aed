// The commands a Redis server runs, read off MONITOR on a raw socket of the test's own, for
// tests that assert which connection sent what, in which order (queue-commands.test.ts,
// queue-partitions.test.ts).
import { connect } from "node:net";

/** One command as MONITOR reports it: the connection that sent it and its words (a script's own commands left out). */
export interface Seen {
  readonly from: string;
  readonly args: readonly string[];
}

/**
 * Every command the server runs from now on that names `queue`, in order, from a MONITOR
 * connection of the test's own (a raw socket: ioredis's monitor mode can lose a line that comes
 * in the same chunk as MONITOR's "OK").
 */
export async function monitorOf(url: string, queue: string, cleanups: (() => Promise<unknown>)[]): Promise<Seen[]> {
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
