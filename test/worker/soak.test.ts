// The soak test (docs/contract.md, rule W2 — abort relay, rule W3 — timeout and termination,
// rule W5 — faults are results, rule 13 — frozen, linked results): a long run of calls across 2 threads with random aborts, timeouts,
// `process.exit`, spinning and late-throwing tools. Every call settles exactly once with the
// outcome its own tool and signal call for, linked to its own call; no promise hangs and no call takes 10 s; no
// rejection goes unhandled; the heap stays flat; close() drains the calls still in flight.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { ToolResultMessage } from "toolgate";
import { WorkerToolExecutor } from "toolgate/worker";
import { expect, test } from "vitest";
import { call, errorOf, fixture } from "../support/helpers.js";
import { seededRandom } from "../support/seeded-random.js";

// 50,000 calls take about 13 s alone on this 2-core machine, so the run stays under a minute
// while other test files share the cores. With seed 9 they include about 27 exits, 9 spins
// past the timeout, 89 late faults and 1,700 aborts; each exit, spin and late fault costs a
// thread and its replacement.
const CALLS = 50_000;
const LANES = 16;
/** The spinning tools' own limit (a per-call timeoutMs); every other call has the executor's generous one. */
const TIMEOUT_MS = 400;
const SPIN_OPTIONS = { timeoutMs: TIMEOUT_MS } as const;
/** Only a guard against hangs: on a loaded 2-core machine a 2 ms tool can wait far longer than 400 ms for a thread. */
const EXECUTOR_TIMEOUT_MS = 30_000;
/**
 * A generous bound on any one call's time, far below EXECUTOR_TIMEOUT_MS: a pool that stalls
 * (every thread retiring and idle once kept all 16 lanes waiting 25-27 s) fails here by name.
 */
const CALL_BOUND_MS = 10_000;

type Kind = "echo" | "slow" | "exit" | "spin" | "lateThrow";

function pick(next: () => number): Kind {
  const roll = next();
  if (roll < 0.0006) return "exit";
  if (roll < 0.0009) return "spin";
  if (roll < 0.0025) return "lateThrow";
  if (roll < 0.05) return "slow";
  return "echo";
}

test("soak: every call settles once, with its own outcome, under faults; heap flat; close() drains", { timeout: 120_000 }, async () => {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  let unhandled = 0;
  const onUnhandled = (): void => {
    unhandled += 1;
  };
  process.on("unhandledRejection", onUnhandled);
  const executor = await WorkerToolExecutor.create({
    modules: [fixture("worker-soak")],
    minThreads: 2,
    maxThreads: 2,
    timeoutMs: EXECUTOR_TIMEOUT_MS,
    abortGraceMs: 50,
  });
  const next = seededRandom(9);
  const problems: string[] = [];
  const counts: Record<string, number> = {};
  const note = (label: string): void => {
    counts[label] = (counts[label] ?? 0) + 1;
  };
  let issued = 0;
  let settled = 0;
  let heapBefore = 0;

  /** One call: checks what it settled with against what its tool and its signal call for. */
  const one = async (n: number): Promise<void> => {
    const kind = pick(next);
    const id = `soak-${n}`;
    const args = kind === "slow" ? { n, ms: 1 + Math.floor(next() * 4) } : kind === "spin" ? { ms: TIMEOUT_MS * 3 } : { n, ms: 2 };
    const controller = new AbortController();
    const reason = { abortOf: id };
    const abortAfter = kind === "echo" || kind === "slow" ? next() : 1;
    if (abortAfter < 0.02)
      controller.abort(reason); // aborted before it was made: rejects at once
    else if (abortAfter < 0.04) setTimeout(() => controller.abort(reason), Math.floor(next() * 3));
    let outcome: { result?: ToolResultMessage; reason?: unknown };
    let settles = 0;
    const startedAt = performance.now();
    try {
      const options = kind === "spin" ? SPIN_OPTIONS : undefined;
      outcome = { result: await executor.executeToolCall(call(kind, args, id), controller.signal, options) };
    } catch (error) {
      outcome = { reason: error };
    } finally {
      settles += 1;
      settled += 1;
    }
    if (settles !== 1) problems.push(`${id} settled ${settles} times`);
    const tookMs = performance.now() - startedAt;
    if (tookMs > CALL_BOUND_MS) problems.push(`${id} (${kind}) took ${Math.round(tookMs)} ms`);
    if ("reason" in outcome) {
      if (outcome.reason !== reason) problems.push(`${id} (${kind}) rejected with ${String(outcome.reason)}`);
      note(`${kind}: aborted`);
      return;
    }
    const result = outcome.result as ToolResultMessage;
    if (result.toolCallId !== id || result.id !== `tool-result-${id}` || result.toolName !== kind) {
      problems.push(`${id} got the result of ${result.toolCallId}`);
      return;
    }
    if (kind === "exit" || kind === "spin") {
      const expected = kind === "exit" ? "TOOL_EXECUTION_FAILED" : "TOOL_EXECUTION_TIMEOUT";
      if (!result.isError || errorOf(result).code !== expected) problems.push(`${id} (${kind}) resolved with ${result.content}`);
      note(`${kind}: ${expected}`);
      return;
    }
    const content = result.isError ? undefined : (JSON.parse(result.content) as { id: string; n: number });
    if (content?.id !== id || content.n !== n) problems.push(`${id} (${kind}) resolved with ${result.content}`);
    note(`${kind}: own result`);
  };

  const lane = async (): Promise<void> => {
    while (issued < CALLS) {
      const n = issued;
      issued += 1;
      if (n === 2_000) {
        gc();
        heapBefore = process.memoryUsage().heapUsed;
      }
      await one(n);
    }
  };

  try {
    // A watchdog: a hung promise fails the test instead of timing it out silently.
    let watchdog: NodeJS.Timeout | undefined;
    const hung = new Promise<"hung">((resolve) => {
      watchdog = setTimeout(() => resolve("hung"), 100_000);
    });
    const lanes = Promise.all(Array.from({ length: LANES }, lane));
    expect(await Promise.race([lanes, hung])).not.toBe("hung");
    clearTimeout(watchdog);
    gc();
    const heapGrowth = process.memoryUsage().heapUsed - heapBefore;

    // close() while a last wave is in flight: each of those still gets its own outcome.
    const last = Array.from({ length: 40 }, (_, k) => one(CALLS + k));
    const closing = executor.close();
    await Promise.all(last);
    await closing;

    expect(problems.slice(0, 10)).toEqual([]);
    expect(settled).toBe(CALLS + 40);
    expect(unhandled).toBe(0);
    expect(heapGrowth).toBeLessThan(24 * 1024 * 1024);
    expect(executor.threadCount).toBe(0);
    // The run did exercise every fault (the seed is fixed).
    for (const label of [
      "exit: TOOL_EXECUTION_FAILED",
      "spin: TOOL_EXECUTION_TIMEOUT",
      "lateThrow: own result",
      "echo: aborted",
      "slow: aborted",
    ]) {
      expect(counts[label] ?? 0, label).toBeGreaterThan(0);
    }
  } finally {
    process.off("unhandledRejection", onUnhandled);
    await executor.close();
  }
});
