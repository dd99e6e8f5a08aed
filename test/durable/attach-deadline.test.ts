// An attached caller's time limit against a record another caller already found lost (docs/
// durable.md — "First terminal write wins"): the holder died, a second caller's read observed
// its lapsed lease and made the record lost, and only then did the attached caller's time
// limit expire (between two of its looks). Its stop finds nothing held; the record's lost
// answer came first, so the attached caller gets it too, not its own timeout. A scripted
// backend puts the steps in exactly that order (no timing): the attached caller's look never
// comes by polling, only by its deadline.
import { type CallEndEvent, InProcessToolExecutor, type ToolDefinition, ToolRegistry } from "toolgate";
import { describe, expect, test } from "vitest";
import type { ClaimOrder, DurableBackend, RawRecord } from "../../dist/src/durable/backend.js";
import { fingerprintOf } from "../../dist/src/durable/key.js";
import { DurableEngine, storeOf } from "../../dist/src/durable/store.js";
import { call, errorOf, neverAborted } from "../support/helpers.js";
import { TOOLS } from "./kit.js";

const LOST = "an earlier execution of this call was lost; the tool may have run, and it will not run again under this key";

/** A record held by a dead holder: running at attempt 1 of `maxAttempts`, then lost once someone else looked. */
function scripted(tool: string, fingerprint: string, maxAttempts: number) {
  const steps: string[] = [];
  let lost = false;
  const record = (): RawRecord => [lost ? "lost" : "running", fingerprint, tool, "1", String(maxAttempts), null];
  const backend: DurableBackend = {
    pollMs: 60_000, // the attached caller looks again only when its deadline passes
    leaseMs: 1000,
    maxAttachmentBytes: 1024,
    claim: async (order: ClaimOrder) => {
      steps.push(`claim ${order.state}`);
      return { claimed: false, record: record() };
    },
    read: async () => {
      steps.push(`read ${lost ? "lost" : "running"}`);
      return record();
    },
    stop: async (_key, attempt, outcome) => {
      steps.push(`stop ${attempt} ${outcome === undefined ? "cancel" : "timeout"}`);
      // Another caller's read made the record lost before this stop arrived: nothing is held, the stop changes nothing.
    },
    renew: async () => "gone",
    start: async () => false,
    finish: async () => false,
    end: async () => {},
    ready: async () => {},
    forget: async () => false,
    close: async () => {},
  };
  return { backend, steps, loseIt: () => (lost = true) };
}

async function attachedUntilLost(tool: string, maxAttempts: number) {
  const args = { counter: "never-incremented" };
  const { backend, steps, loseIt } = scripted(tool, fingerprintOf(tool, args), maxAttempts);
  const { default: definitions } = (await import(TOOLS.href)) as { default: ToolDefinition[] };
  const ends: CallEndEvent[] = [];
  const executor = new InProcessToolExecutor(new ToolRegistry(definitions), {
    durable: { store: storeOf(new DurableEngine(backend)) },
    hooks: { onCallEnd: (event) => void ends.push(event) },
  });
  const pending = executor.executeToolCall(call(tool, args, "c1"), neverAborted(), { durable: { runId: "r" }, timeoutMs: 50 });
  await expect.poll(() => steps).toEqual(["claim running"]); // attached: waiting for its deadline
  loseIt(); // another caller's read observed the lapsed lease
  const result = await pending;
  expect(steps).toEqual(["claim running", "stop 1 timeout", "read lost"]);
  await executor.close();
  return { result, ends: ends.map((event) => event.durable) };
}

describe("an attached caller's time limit after another caller found the execution lost", () => {
  test("at-most-once: the attached caller gets the lost result (the first terminal answer), not its own timeout", async () => {
    const { result, ends } = await attachedUntilLost("charge", 1);
    expect(errorOf(result)).toEqual({ code: "TOOL_EXECUTION_FAILED", message: LOST });
    expect(ends).toEqual(["lost"]);
  });

  test("at-least-once with attempts left: the loss is not final, the caller's time limit is its answer (no new attempt past its deadline)", async () => {
    const { result, ends } = await attachedUntilLost("retryable", 3);
    expect(errorOf(result)).toEqual({ code: "TOOL_EXECUTION_TIMEOUT", message: "the tool did not finish within 50 ms" });
    expect(ends).toEqual(["attached"]);
  });
});
