// The benchmark's tool module: its default export is the list of tool definitions. The
// main thread imports it for the registry (in-process runs, validation); the worker pool
// imports the compiled copy (dist/bench/tools.js) by URL and runs `execute` there.
import { threadId } from "node:worker_threads";
import type { ToolDefinition, ValidationDecision } from "toolgate";

type Args = Record<string, unknown>;

const acceptObject = (args: unknown): ValidationDecision<Args> =>
  typeof args === "object" && args !== null ? { ok: true, value: args as Args } : { ok: false, error: "arguments must be an object" };

/**
 * The CPU-bound workload: an xorshift32 loop. Deterministic, allocation-free and JIT-stable,
 * so a given `iterations` costs the same on every thread. Calibrated at run time to ~20 ms.
 */
export function burn(iterations: number): number {
  let x = 0x9e3779b9 | 0;
  let sum = 0;
  for (let index = 0; index < iterations; index += 1) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    sum = (sum + (x & 0xffff)) | 0;
  }
  return sum >>> 0;
}

/** The trivial tool of the overhead benchmarks: returns a tiny object. */
export const ping: ToolDefinition<Args, { pong: unknown }> = {
  name: "ping",
  description: "Returns its argument n as { pong: n }.",
  validate: acceptObject,
  execute: (args) => ({ pong: args.n ?? null }),
};

const cpu: ToolDefinition<{ iterations: number }, { checksum: number }> = {
  name: "burn",
  description: "CPU-bound: runs `iterations` rounds of xorshift32 and returns a checksum.",
  validate: (args) => {
    const iterations = (args as Args | null)?.iterations;
    return typeof iterations === "number" && Number.isSafeInteger(iterations) && iterations > 0
      ? { ok: true, value: { iterations } }
      : { ok: false, error: "iterations must be a positive integer" };
  },
  execute: ({ iterations }) => ({ checksum: burn(iterations) }),
};

/** Cooperative: waits for its signal and rejects with the reason (what a well-behaved slow tool does). */
const waitForAbort: ToolDefinition<Args, never> = {
  name: "waitForAbort",
  description: "Waits until its signal aborts, then rejects with the reason.",
  validate: acceptObject,
  execute: (_args, { signal }) =>
    new Promise<never>((_resolve, reject) => {
      if (signal.aborted) reject(signal.reason);
      else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    }),
};

/** Hostile: ignores its signal and busy-waits `ms` milliseconds. */
const spin: ToolDefinition<Args, string> = {
  name: "spin",
  description: "Busy-waits `ms` milliseconds, ignoring its signal.",
  validate: acceptObject,
  execute: (args) => {
    const until = performance.now() + ((args.ms as number | undefined) ?? 30_000);
    while (performance.now() < until) {
      // spinning: only terminating the thread stops this
    }
    return "spun";
  },
};

/** Which thread ran the call (the abort benchmark checks that a spinning thread was replaced). */
const whichThread: ToolDefinition<Args, number> = {
  name: "threadId",
  description: "Returns the id of the thread that ran it.",
  validate: acceptObject,
  execute: () => threadId,
};

export default [ping, cpu, waitForAbort, spin, whichThread];
