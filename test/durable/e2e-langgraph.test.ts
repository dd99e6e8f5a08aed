// Issue 42's test 14 across a process kill: a LangGraph agent (createReactAgent: its ToolNode
// runs a step's two calls in one task) with a checkpointer in a file; `notify` runs and
// `charge` interrupts for approval; the process is SIGKILLed; a new process resumes the thread
// with the approval. LangGraph runs the whole tool node again: with durable calls keyed by the
// thread (redisDurableStore) notify is replayed, so it ran once in total, and charge runs once;
// without durable, notify runs twice (the premise). Executions are counted with an INCR outside
// the record. docs/durable.md — Durable calls with your framework.

import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { scratchDir } from "../support/helpers.js";
import { killAll, killed, startFixture } from "./e2e-processes.js";
import { count, redisUrl, testRedis, unique } from "./kit.js";

const AGENT = new URL("./fixtures/langgraph-agent.mjs", import.meta.url);
const LOST = "an earlier execution of this call was lost; the tool may have run, and it will not run again under this key";

interface Paused {
  readonly interrupts: number;
  readonly ends: readonly [string, string | null][];
}

interface Resumed {
  readonly ends: readonly [string, string | null][];
  readonly toolMessages: readonly { id: string; status: string; content: string }[];
  readonly final: string;
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

/** Process 1 to the interrupt, SIGKILLed there; process 2 resumes with the approval. */
async function pauseKillResume(durable: boolean, holdNotify = false) {
  const counters = { notify: unique("notify"), charge: unique("charge") };
  const config = {
    durable,
    checkpoints: `${scratchDir()}/checkpoints.json`,
    store: { connection: redisUrl, prefix: unique("durable"), leaseMs: 1000 },
    thread: unique("thread"),
    counters,
    holdNotify,
  };
  const first = startFixture(AGENT, { ...config, phase: "pause" });
  const paused = JSON.parse(await first.line("paused ")) as Paused;
  if (holdNotify) await until(async () => (await count(redis, counters.notify)) === 1); // notify is mid-run
  await killed(first.child);
  const afterKill = { notify: await count(redis, counters.notify), charge: await count(redis, counters.charge) };
  const resumed = await startFixture(AGENT, { ...config, phase: "resume" }).report<Resumed>();
  const total = { notify: await count(redis, counters.notify), charge: await count(redis, counters.charge) };
  return { paused, afterKill, resumed, total };
}

describe.runIf(redisUrl !== undefined)("issue 42, test 14: LangGraph resumed in a new process after a SIGKILL at the interrupt", () => {
  test("durable keyed by thread_id: notify ran once in total (replayed on the re-run), the approved charge once", async () => {
    const { paused, afterKill, resumed, total } = await pauseKillResume(true);
    expect(paused).toEqual({ interrupts: 1, ends: [["notify", "executed"]] });
    expect(afterKill).toEqual({ notify: 1, charge: 0 });
    // In either order: the two calls of the re-run node run side by side.
    expect(sorted(resumed.ends)).toEqual([
      ["charge", "executed"],
      ["notify", "replayed"],
    ]);
    expect(total).toEqual({ notify: 1, charge: 1 });
    // The model reads the first process's notify outcome, and the charge.
    expect(resumed.toolMessages).toEqual([
      { id: "call-n", status: "success", content: "sent hello (#1)" },
      { id: "call-c", status: "success", content: "charged 500 (#1)" },
    ]);
    expect(resumed.final).toBe("done");
  }, 60_000);

  test("SIGKILL while notify still runs (after the interrupt): the re-run finds it lost (its lease lapsed), so notify ran once in total and the model reads the lost result", async () => {
    const { paused, afterKill, resumed, total } = await pauseKillResume(true, true);
    expect(paused).toEqual({ interrupts: 1, ends: [] });
    expect(afterKill).toEqual({ notify: 1, charge: 0 });
    // notify answers once the dead process's lease has lapsed: before or after charge ends.
    expect(sorted(resumed.ends)).toEqual([
      ["charge", "executed"],
      ["notify", "lost"],
    ]);
    expect(total).toEqual({ notify: 1, charge: 1 });
    expect(resumed.toolMessages[0]?.id).toBe("call-n");
    expect(resumed.toolMessages[0]?.content).toContain(LOST);
    expect(resumed.toolMessages[1]).toEqual({ id: "call-c", status: "success", content: "charged 500 (#1)" });
  }, 60_000);

  test("the premise: without durable, the resumed process runs notify again (2 executions), charge once", async () => {
    const { paused, afterKill, resumed, total } = await pauseKillResume(false);
    expect(paused).toEqual({ interrupts: 1, ends: [["notify", null]] });
    expect(afterKill).toEqual({ notify: 1, charge: 0 });
    expect(total).toEqual({ notify: 2, charge: 1 });
    expect(resumed.toolMessages[0]).toEqual({ id: "call-n", status: "success", content: "sent hello (#2)" });
  }, 60_000);
});

async function until(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** onCallEnd's [toolName, durable] pairs by tool name. */
function sorted(ends: readonly [string, string | null][]): [string, string | null][] {
  return [...ends].sort(([a], [b]) => a.localeCompare(b));
}
