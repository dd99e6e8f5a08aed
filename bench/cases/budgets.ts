// Case 9: the worst input each default budget admits, timed side by side with a baseline
// (JSON.stringify of the same value), on both sides of the boundary: the serializer (a
// tool's output) and the call snapshot (a model's arguments). These are the figures
// docs/benchmarks.md ("Budgets: the worst admitted input") gives; docs/guarantees.md links there.
import { serializeToolOutput } from "toolgate";
import { snapshotToolCall } from "../../src/contract/call.js";
import { type CaseOptions, median, microRounds, pairedRatios, round, type TargetCheck } from "../harness.js";

export interface BudgetCaseResult {
  /** Which side: "output" (serializeToolOutput) or "arguments" (the call snapshot). */
  readonly side: "output" | "arguments";
  /** The default budget this input sits at. */
  readonly budget: string;
  /** The input, in words. */
  readonly input: string;
  /** Median µs per operation: toolgate's step, and JSON.stringify of the same value. */
  readonly oursUs: number;
  readonly jsonUs: number;
  /** toolgate's time over JSON.stringify's (median of per-round ratios): > 1 means slower. */
  readonly oursOverJson: number;
}

export interface BudgetsResult {
  readonly rounds: number;
  readonly cases: Record<string, BudgetCaseResult>;
  /** Informational figures: no target. */
  readonly targets: TargetCheck[];
}

interface Input {
  readonly side: "output" | "arguments";
  readonly budget: string;
  readonly input: string;
  readonly value: unknown;
  /** For the arguments side: the value is the call's `arguments`. A refusal is measured as such. */
  readonly refused?: boolean;
}

const MI = 1_048_576;

function nestedArrays(levels: number): unknown {
  let value: unknown[] = [];
  for (let level = 1; level < levels; level += 1) value = [value];
  return value;
}

function nestedObjects(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 1; level < levels; level += 1) value = { a: value };
  return value;
}

const bigInt4096 = (seed: number): bigint => (1n << 4095n) + BigInt(seed);

/** Every default budget's worst admitted input (and the 10^6-element refusal). */
function inputs(): Input[] {
  const functions: Record<string, unknown> = {};
  for (let index = 0; index < 4095; index += 1) functions[`f${index}`] = () => index;
  return [
    { side: "output", budget: "maxDepth 32", input: "32 nested arrays", value: nestedArrays(32) },
    {
      side: "output",
      budget: "maxNodes 2048",
      input: "1023 objects of one string (2047 values)",
      value: Array.from({ length: 1023 }, (_, index) => ({ s: `v${index}` })),
    },
    { side: "output", budget: "maxNodes 2048", input: "2046 numbers (2047 values)", value: Array.from({ length: 2046 }, (_, i) => i) },
    { side: "output", budget: "maxMembers 4096", input: "an object of 4095 omitted function members", value: functions },
    {
      side: "output",
      budget: "maxStringCodePoints 4096",
      input: "2046 strings of 4096 characters that need escaping",
      value: Array.from({ length: 2046 }, () => '"'.repeat(4096)),
    },
    {
      side: "output",
      budget: "maxBigIntBits 4096",
      input: "64 BigInts of 4096 bits",
      value: Array.from({ length: 64 }, (_, index) => bigInt4096(index)),
    },
    { side: "arguments", budget: "maxDepth 64", input: "64 levels of objects", value: nestedObjects(64) },
    {
      side: "arguments",
      budget: "maxNodes 20,000",
      input: "1,999 rows of 5 fields",
      value: { rows: Array.from({ length: 1999 }, (_, id) => ({ id, name: `row ${id}`, score: id / 10, active: true, tag: null })) },
    },
    {
      side: "arguments",
      budget: "maxNodes 20,000",
      input: "one array of 19,998 numbers",
      value: { list: Array.from({ length: 19_998 }, (_, i) => i) },
    },
    { side: "arguments", budget: "maxStringLength 1 Mi", input: "one 1 Mi string", value: { text: "x".repeat(MI) } },
    {
      side: "arguments",
      budget: "maxTotalSize 4 Mi",
      input: "four strings of 1 Mi - 16",
      value: { a: "a".repeat(MI - 16), b: "b".repeat(MI - 16), c: "c".repeat(MI - 16), d: "d".repeat(MI - 16) },
    },
    {
      side: "arguments",
      budget: "maxNodes 20,000 (refused)",
      input: "a 10^6-element array, refused",
      value: { list: new Array(1_000_000).fill(0) },
      refused: true,
    },
  ];
}

/** JSON.stringify of the value (BigInts as their digits: JSON has no BigInt). */
function baseline(value: unknown): string {
  return JSON.stringify(value, (_key, member: unknown) => (typeof member === "bigint" ? member.toString() : member));
}

function snapshotOrRefusal(call: unknown): unknown {
  try {
    return snapshotToolCall(call);
  } catch (error) {
    return error;
  }
}

export async function benchBudgets(options: CaseOptions = {}): Promise<BudgetsResult> {
  const smoke = options.smoke === true;
  const micro = smoke ? { rounds: 1, time: 5, warmupTime: 2, inner: 1 } : { rounds: 5, time: 150, warmupTime: 40, inner: 4 };
  const cases: Record<string, BudgetCaseResult> = {};
  for (const input of inputs()) {
    let ours: () => unknown;
    if (input.side === "output") {
      const checked = serializeToolOutput(input.value);
      // A refusal would be a cheap no-op: the input must be admitted.
      if (!checked.ok) throw new Error(`budgets benchmark: ${input.input} is refused (${checked.message})`);
      ours = () => serializeToolOutput(input.value);
    } else {
      const call = { type: "toolCall", id: "bench", name: "bench", arguments: input.value };
      const taken = snapshotOrRefusal(call);
      if (taken instanceof Error !== (input.refused === true)) {
        throw new Error(`budgets benchmark: ${input.input} is ${taken instanceof Error ? `refused (${taken.message})` : "admitted"}`);
      }
      ours = () => snapshotOrRefusal(call);
    }
    options.log?.(`budgets: ${input.input}`);
    const ns = await microRounds({ ours, json: () => baseline(input.value) }, micro);
    cases[`${input.side}: ${input.input}`] = {
      side: input.side,
      budget: input.budget,
      input: input.input,
      oursUs: round(median(ns.ours) / 1000, 2),
      jsonUs: round(median(ns.json) / 1000, 2),
      oursOverJson: round(median(pairedRatios(ns.ours, ns.json)), 4),
    };
  }
  return { rounds: micro.rounds, cases, targets: [] };
}
