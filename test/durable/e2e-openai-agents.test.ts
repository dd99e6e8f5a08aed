// Issue 42's test 15 in real processes: an OpenAI Agents run stops at a pending approval and
// its RunState is serialized (state.toString()) by one process; two more processes each
// deserialize it (RunState.fromString), approve and resume at the same time. The tool holds
// on a Redis gate that the test opens only once both processes' claims have reached Redis
// (their store connections' last command, seen in CLIENT LIST), so the two resumes really
// overlap: one runs the tool, the other attaches, and both runs read the one output. A later
// resume is replayed. Without durable, the two resumes charge twice (the premise). Executions
// are counted with an INCR outside the record. docs/durable.md — Durable calls with your framework.
import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { scratchDir } from "../support/helpers.js";
import { killAll, startFixture, whileUp } from "./e2e-processes.js";
import { count, redisUrl, started, testRedis, unique } from "./kit.js";

const RUN = new URL("./fixtures/openai-agents-run.mjs", import.meta.url);

interface Resumed {
  readonly finalOutput: string;
  readonly outputs: readonly [string, unknown][];
  readonly ends: readonly (string | null)[];
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

/** A run paused at its approval, serialized by a process of its own. */
async function pausedRun(durable: boolean) {
  const config = {
    durable,
    runId: unique("order"),
    stateFile: `${scratchDir()}/run-state.json`,
    store: { prefix: unique("durable"), leaseMs: 1000 },
    counter: unique("count"),
    started: unique("started"),
    gate: unique("gate"),
  };
  await startFixture(RUN, { ...config, phase: "pause" }).line("paused");
  const resume = (name: string) =>
    startFixture(RUN, { ...config, phase: "resume", store: { ...config.store, connectionName: unique(`resume-${name}`) } });
  return { config, resume };
}

/** Resolves once every named client's last command was an EVAL (a durable store's script: its claim has run). */
async function claimed(names: readonly string[], ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const clients = ((await redis.client("LIST")) as string).split("\n");
    const evaluated = names.filter((name) => clients.some((line) => line.includes(` name=${name} `) && /\bcmd=eval(sha)?\b/.test(line)));
    if (evaluated.length === names.length) return;
    if (Date.now() > deadline) throw new Error(`only ${evaluated.length} of ${names.length} claims reached Redis after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe.runIf(redisUrl !== undefined)("issue 42, test 15: one serialized RunState approved and resumed in two processes at once", () => {
  test("durable runId from the run context: 1 execution, the other resume attaches, both runs read the same output; a later resume replays", async () => {
    const { config, resume } = await pausedRun(true);
    expect(await count(redis, config.counter)).toBe(0);
    const one = resume("one");
    const two = resume("two");
    const names = [one, two].map((each) => each.child.spawnargs.at(-1) as string).map((arg) => JSON.parse(arg).store.connectionName);
    await whileUp(started(redis, config.started), one, two); // one of them runs the tool, held on the gate
    await whileUp(claimed(names), one, two); // and the other's claim has found it running
    await redis.lpush(config.gate, "go");
    const reports = await Promise.all([one.report<Resumed>(), two.report<Resumed>()]);
    expect(await count(redis, config.counter)).toBe(1);
    expect(await redis.llen(config.started)).toBe(1);
    for (const report of reports) {
      expect(report.finalOutput).toBe("finished");
      expect(report.outputs).toEqual([["call-c", "charged 500 (#1)"]]);
    }
    expect(reports.map((report) => report.ends[0]).sort()).toEqual(["attached", "executed"]);
    const later = await resume("later").report<Resumed>();
    expect(later).toEqual({ finalOutput: "finished", outputs: [["call-c", "charged 500 (#1)"]], ends: ["replayed"] });
    expect(await count(redis, config.counter)).toBe(1);
  }, 60_000);

  test("the premise: without durable, the two overlapping resumes charge twice", async () => {
    const { config, resume } = await pausedRun(false);
    const runs = [resume("one"), resume("two")];
    await whileUp(started(redis, config.started, 2), ...runs); // both run the tool at once
    await redis.lpush(config.gate, "go", "go");
    const reports = await Promise.all(runs.map((run) => run.report<Resumed>()));
    expect(await count(redis, config.counter)).toBe(2);
    expect(reports.map((report) => report.outputs[0]?.[1]).sort()).toEqual(["charged 500 (#1)", "charged 500 (#2)"]);
  }, 60_000);
});
