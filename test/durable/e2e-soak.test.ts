// Issue 42's test 16: a bounded soak. Rounds of agent processes (one or two at once, each an
// in-process or a worker executor with a redisDurableStore) issue durable calls, two copies
// of each, under one run id: each round's new keys and the last round's again. Most agents are
// SIGKILLed at a random point; some tools end their worker thread mid-run, some spin it past
// their time limit (the pool kills the thread). A last agent, never
// killed, re-issues every key. Checked: an at-most-once tool never ran twice for a key (its
// INCR counter, outside the record, is at most 1); no execution came after a key's recorded
// outcome; every surviving agent's calls all settled (none hung); and every copy and every
// re-issue of a key got the one outcome, byte for byte. The randomness is seeded: the seed is
// printed, and DURABLE_SOAK_SEED runs the same choices again.
import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { seededRandom } from "../support/seeded-random.js";
import { killAll, killed, startFixture, whileUp } from "./e2e-processes.js";
import { redisUrl, testRedis, unique } from "./kit.js";

const AGENT = new URL("./fixtures/soak-agent.mjs", import.meta.url);
const ROUNDS = 8;
const NEW_KEYS_PER_ROUND = 16;
const COPIES = 2;
const RETRIED_ATTEMPTS = 3;
/** The time limit of a call whose tool spins its worker thread: past it, the pool kills the thread. */
const SPIN_TIMEOUT_MS = 300;

interface SoakCall {
  readonly type: "toolCall";
  readonly id: string;
  readonly name: "once" | "retried";
  readonly arguments: { readonly counter: string; readonly workMs: number; readonly exitThread: boolean; readonly spinMs: number };
}

interface Report {
  readonly outcomes: readonly { id: string; result?: { content: string; isError: boolean }; rejected?: unknown }[];
  readonly ends: Record<string, number>;
  readonly hung: readonly string[];
  readonly threadsKilled: number;
}

let redis: Redis;
beforeAll(() => {
  redis = testRedis();
});
afterEach(killAll);
afterAll(async () => {
  await killAll();
  await redis.quit();
});

describe.runIf(redisUrl !== undefined)(
  "issue 42, test 16: a soak of durable calls under random agent-process and worker-thread kills",
  () => {
    test("zero double executions of at-most-once tools, zero hung calls, one outcome per key for every copy and re-issue", async () => {
      const seed = Number(process.env.DURABLE_SOAK_SEED ?? Math.floor(Math.random() * 2 ** 32));
      console.log(`durable soak: seed ${seed} (DURABLE_SOAK_SEED=${seed} repeats these choices)`);
      const random = seededRandom(seed);
      const started = Date.now();
      const runId = unique("soak-run");
      const timeouts: Record<string, number> = {};
      const base = {
        store: { connection: redisUrl, prefix: unique("durable"), leaseMs: 1000 },
        runId,
        timeouts,
        copies: COPIES,
        settleWithinMs: 15_000,
      };
      const keys: SoakCall[][] = [];
      /** The one outcome each key settled with, as the first surviving agent read it. */
      const outcomeOf = new Map<string, string>();
      const totals = { agents: 0, killed: 0, calls: 0, settled: 0, threadsKilled: 0, ends: {} as Record<string, number> };
      const THREAD_EXIT = "the worker thread running the tool failed";

      const check = (report: Report, calls: readonly SoakCall[], label: string) => {
        expect(report.hung, `${label}: calls that never settled`).toEqual([]);
        expect(report.outcomes, label).toHaveLength(calls.length * COPIES);
        for (const outcome of report.outcomes) {
          expect(outcome.rejected, `${label}: ${outcome.id}`).toBeUndefined();
          const text = JSON.stringify(outcome.result);
          const known = outcomeOf.get(outcome.id);
          if (known === undefined) outcomeOf.set(outcome.id, text);
          else expect(text, `${label}: ${outcome.id} answered otherwise than before`).toBe(known);
        }
        totals.settled += report.outcomes.length;
        totals.threadsKilled += report.threadsKilled;
        for (const [end, n] of Object.entries(report.ends)) totals.ends[end] = (totals.ends[end] ?? 0) + n;
      };

      for (let round = 0; round < ROUNDS; round += 1) {
        keys.push(
          Array.from({ length: NEW_KEYS_PER_ROUND }, (_, index): SoakCall => {
            const name = random() < 0.75 ? "once" : "retried";
            const fault = random();
            const args = {
              counter: unique(`soak-${round}-${index}`),
              workMs: Math.floor(random() * 150),
              exitThread: fault < 0.12,
              spinMs: fault >= 0.12 && fault < 0.2 ? 5000 : 0,
            };
            const id = `call-${round}-${index}`;
            if (args.spinMs > 0) timeouts[id] = SPIN_TIMEOUT_MS;
            return { type: "toolCall", id, name, arguments: args };
          }),
        );
        const calls = [...(keys[round - 1] ?? []), ...(keys[round] ?? [])];
        const agents = Array.from({ length: random() < 0.35 ? 2 : 1 }, () => ({
          executor: random() < 0.4 ? "worker" : "in-process",
          killAfterMs: random() < 0.7 ? Math.floor(random() * 300) : undefined,
        }));
        const running = agents.map((agent) => ({
          ...agent,
          process: startFixture(AGENT, { ...base, executor: agent.executor, calls }),
        }));
        totals.agents += running.length;
        totals.calls += running.length * calls.length * COPIES;
        await Promise.all(
          running.map(async (agent, index) => {
            const label = `seed ${seed}, round ${round}, agent ${index} (${agent.executor})`;
            await whileUp(agent.process.line("issued"), agent.process);
            if (agent.killAfterMs === undefined) {
              check(await agent.process.report<Report>(), calls, label);
              return;
            }
            // A crash at a random point of the calls: before, in or after their runs.
            await new Promise((resolve) => setTimeout(resolve, agent.killAfterMs));
            const exited = agent.process.child.exitCode !== null;
            await killed(agent.process.child);
            if (exited)
              check(await agent.process.report<Report>(), calls, label); // done before the kill
            else totals.killed += 1;
          }),
        );
      }

      // The last agent, never killed, re-issues every key.
      const all = keys.flat();
      const last = startFixture(AGENT, { ...base, executor: "in-process", calls: all });
      totals.agents += 1;
      totals.calls += all.length * COPIES;
      check(await last.report<Report>(), all, `seed ${seed}, the last agent`);

      const counts = (await redis.mget(...all.map((call) => call.arguments.counter))).map((value) => Number(value ?? 0));
      let executions = 0;
      all.forEach((call, index) => {
        const executed = counts[index] as number;
        executions += executed;
        const label = `seed ${seed}: ${call.id} (${call.name}) ran ${executed} times`;
        expect(executed, label).toBeLessThanOrEqual(call.name === "once" ? 1 : RETRIED_ATTEMPTS);
        const result = JSON.parse(outcomeOf.get(call.id) as string) as { content: string; isError: boolean };
        if (!result.isError) {
          // The recorded run was the key's last: nothing ran after its outcome was kept.
          expect((JSON.parse(result.content) as { execution: number }).execution, label).toBe(executed);
        }
      });
      const threadExits = all.filter((call) => outcomeOf.get(call.id)?.includes(THREAD_EXIT)).length;
      const seconds = (Date.now() - started) / 1000;
      console.log(
        `durable soak: seed ${seed}: ${totals.agents} agents (${totals.killed} SIGKILLed mid-way), ${all.length} keys, ${totals.calls} calls issued, ${totals.settled} settled in surviving agents, ${executions} executions (${threadExits} keys ended their worker thread; the pool killed ${totals.threadsKilled} spinning threads in surviving agents), ends ${JSON.stringify(totals.ends)}, ${seconds.toFixed(1)} s`,
      );
      expect(totals.killed).toBeGreaterThan(0);
      expect(seconds).toBeLessThan(60);
    }, 90_000);
  },
);
