// The demo's tool module: realistic tools, two of them hostile. The main thread imports it
// for names, descriptions and validators; the worker pool imports the compiled copy
// (dist/demo/tools.js) by URL and runs `execute` there.
import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { ToolDefinition, ValidationDecision } from "toolgate";

type Args = Record<string, unknown>;

const object = (args: unknown): args is Args => typeof args === "object" && args !== null && !Array.isArray(args);
const integerIn = (value: unknown, min: number, max: number): value is number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= min && value <= max;
const reject = (error: string): ValidationDecision<never> => ({ ok: false, error });

/** Hashes a generated buffer of `bytes` bytes: CPU and memory, no I/O. */
const sha256: ToolDefinition<{ bytes: number; seed: number }, object> = {
  name: "sha256",
  description: "SHA-256 of a deterministic pseudo-random buffer of `bytes` bytes (at most 64 MiB) seeded by `seed`.",
  validate: (args) => {
    if (!object(args)) return reject("arguments must be an object");
    const { bytes, seed = 1 } = args;
    if (!integerIn(bytes, 1, 64 * 2 ** 20)) return reject("bytes must be an integer from 1 to 67108864");
    if (!integerIn(seed, 0, 2 ** 31)) return reject("seed must be a non-negative integer");
    return { ok: true, value: { bytes, seed } };
  },
  execute: ({ bytes, seed }) => {
    const words = new Uint32Array(Math.ceil(bytes / 4));
    let x = seed | 0 || 1;
    for (let index = 0; index < words.length; index += 1) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      words[index] = x;
    }
    const buffer = Buffer.from(words.buffer, 0, bytes);
    return { algorithm: "sha256", bytes, digest: createHash("sha256").update(buffer).digest("hex") };
  },
};

/** Counts primes below `below` by trial division: a CPU-bound tool. */
const countPrimes: ToolDefinition<{ below: number }, object> = {
  name: "countPrimes",
  description: "Counts the primes below `below` (at most 10,000,000).",
  validate: (args) =>
    object(args) && integerIn(args.below, 2, 10_000_000)
      ? { ok: true, value: { below: args.below } }
      : reject("below must be an integer from 2 to 10000000"),
  execute: ({ below }) => {
    let count = 0;
    for (let candidate = 2; candidate < below; candidate += 1) {
      let prime = true;
      for (let divisor = 2; divisor * divisor <= candidate; divisor += 1) {
        if (candidate % divisor === 0) {
          prime = false;
          break;
        }
      }
      if (prime) count += 1;
    }
    return { below, primes: count };
  },
};

/** Parses JSON text and describes it; malformed text throws (a recoverable execution error). */
const parseJson: ToolDefinition<{ text: string }, object> = {
  name: "parseJson",
  description: "Parses `text` as JSON and returns the value with a short description.",
  validate: (args) =>
    object(args) && typeof args.text === "string" ? { ok: true, value: { text: args.text } } : reject("text must be a string"),
  execute: ({ text }) => {
    const value: unknown = JSON.parse(text);
    const type = Array.isArray(value) ? "array" : value === null ? "null" : typeof value;
    return { type, keys: type === "object" ? Object.keys(value as object).length : undefined, value };
  },
};

/** A slow, I/O-like tool (a report query): waits `ms`, and stops at once when its signal aborts. */
const fetchReport: ToolDefinition<{ report: string; ms: number }, object> = {
  name: "fetchReport",
  description: "Fetches the named report; takes `ms` milliseconds. Honours cancellation.",
  validate: (args) => {
    if (!object(args) || typeof args.report !== "string" || args.report.length === 0) return reject("report must be a non-empty string");
    if (!integerIn(args.ms, 0, 60_000)) return reject("ms must be an integer from 0 to 60000");
    return { ok: true, value: { report: args.report, ms: args.ms } };
  },
  execute: async ({ report, ms }, { signal }) => {
    await sleep(ms, undefined, { signal }); // rejects with the abort reason: the tool stops its own work
    return { report, rows: 1 + ((report.length * 37) % 500), generatedInMs: ms };
  },
};

/** Hostile output: a throwing getter with a toJSON trap, a Proxy, or a huge string. */
const hostileOutput: ToolDefinition<{ kind: string }, unknown> = {
  name: "hostileOutput",
  description: 'Returns hostile output of the given kind: "getter", "proxy" or "huge".',
  validate: (args) =>
    object(args) && (args.kind === "getter" || args.kind === "proxy" || args.kind === "huge")
      ? { ok: true, value: { kind: args.kind } }
      : reject('kind must be "getter", "proxy" or "huge"'),
  execute: ({ kind }) => {
    if (kind === "getter") {
      return {
        status: "ok",
        get secret(): string {
          throw new Error("a getter was called");
        },
        toJSON(): never {
          throw new Error("toJSON was called");
        },
      };
    }
    if (kind === "proxy") return { rows: new Proxy([], { get: () => "trap" }) };
    return "log line ⚠️ with emoji 😀\n".repeat(1000);
  },
};

/** Ignores its signal and spins: only terminating its thread stops it. */
const stubbornLoop: ToolDefinition<{ ms: number }, string> = {
  name: "stubbornLoop",
  description: "Busy-waits `ms` milliseconds and ignores cancellation.",
  validate: (args) =>
    object(args) && integerIn(args.ms, 0, 600_000) ? { ok: true, value: { ms: args.ms } } : reject("ms must be an integer"),
  execute: ({ ms }) => {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      // spinning, deaf to the signal
    }
    return "finished spinning";
  },
};

export default [sha256, countPrimes, parseJson, fetchReport, hostileOutput, stubbornLoop];
