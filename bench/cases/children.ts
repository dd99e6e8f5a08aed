// Child processes and the call driver shared by the queue cases (queue.ts, queue-sandbox.ts).
import { type ChildProcess, spawn } from "node:child_process";
import { now } from "../harness.js";

/** Starts a Node child and resolves once it prints `marker` (rejects if it exits first). */
export function startChild(args: readonly string[], marker: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      if (out.includes(marker)) resolve(child);
    });
    child.once("exit", (code) => reject(new Error(`a benchmark child exited before it was ready (code ${code})`)));
  });
}

/** SIGTERM to each child still running; resolves when all have exited. */
export async function stopChildren(children: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGTERM");
        }),
    ),
  );
}

/** `total` calls through `inFlight` sequential loops; µs per call (wall time / total). */
export async function drive(total: number, inFlight: number, one: (n: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const loop = async (): Promise<void> => {
    while (next < total) {
      const n = next;
      next += 1;
      await one(n);
    }
  };
  const start = now();
  await Promise.all(Array.from({ length: inFlight }, loop));
  return ((now() - start) * 1000) / total;
}
