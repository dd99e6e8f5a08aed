// The third outcome of a call, a rejection, at its edges (docs/contract.md, rule 8 — abort
// wins, rule 9 — failure classification): abort wins the races around the tool settling and
// the result being published; a genuine NonRecoverableToolError thrown by a validator escapes.
import { inspect } from "node:util";
import { defineTool, executeToolCall, NonRecoverableToolError, ToolRegistry, type ToolResultMessage } from "toolgate";
import { describe, expect, test } from "vitest";
import { call, neverAborted, settle } from "../support/helpers.js";

describe("rule 8 — abort wins: the races at the edges", () => {
  const registryOf = (execute: (args: unknown, context: { signal: AbortSignal }) => unknown) =>
    new ToolRegistry([defineTool({ name: "t", description: "d", validate: () => ({ ok: true, value: null }), execute })]);

  test("a tool that aborts the run and then throws a NonRecoverableToolError: abort wins (after-settle check)", async () => {
    const controller = new AbortController();
    const reason = new Error("stopped while the tool was failing");
    const registry = registryOf(() => {
      controller.abort(reason);
      throw new NonRecoverableToolError("would escape if abort were not checked first");
    });
    await expect(executeToolCall(registry, call("t"), controller.signal)).rejects.toBe(reason);
    const rejecting = registryOf(async () => {
      controller.abort(reason);
      throw new NonRecoverableToolError("rejected after the abort");
    });
    await expect(executeToolCall(rejecting, call("t"), controller.signal)).rejects.toBe(reason);
  });

  test("a tool that aborts synchronously and returns a promise that never settles rejects at once", async () => {
    const controller = new AbortController();
    const registry = registryOf(() => {
      controller.abort("aborted inside execute");
      return new Promise(() => {});
    });
    const outcome = await Promise.race([
      settle(executeToolCall(registry, call("t"), controller.signal)),
      new Promise((resolve) => setTimeout(() => resolve("still pending after 1 s"), 1000)),
    ]);
    expect(outcome).toEqual({ ok: false, reason: "aborted inside execute" });
  });

  test("an abort that happens while the call's promise is still pending always wins (final check before publishing)", async () => {
    // util.inspect reads a promise's state synchronously: at the moment of the abort we know
    // whether the result had already been published. If it had not, the call must reject.
    const rounds: { pendingAtAbort: boolean; outcome: string }[] = [];
    for (let delay = 0; delay < 24; delay += 1) {
      const controller = new AbortController();
      let pending: Promise<unknown> | undefined;
      let pendingAtAbort = false;
      let aborted: Promise<void> | undefined;
      const registry = registryOf(() => {
        let chain = Promise.resolve();
        for (let tick = 0; tick < delay; tick += 1) chain = chain.then(() => {});
        aborted = chain.then(() => {
          pendingAtAbort = inspect(pending).includes("<pending>");
          controller.abort("late abort");
        });
        return Promise.resolve("done");
      });
      pending = executeToolCall(registry, call("t"), controller.signal);
      const outcome = await pending.then(
        (result) => ((result as ToolResultMessage).isError ? "error" : "result"),
        (reason: unknown) => (reason === "late abort" ? "aborted" : "other"),
      );
      await aborted;
      rounds.push({ pendingAtAbort, outcome });
    }
    // The sweep covers both sides of the publication point...
    expect(rounds.some((round) => round.pendingAtAbort)).toBe(true);
    expect(rounds.some((round) => !round.pendingAtAbort)).toBe(true);
    // ...and every abort that came before it won.
    for (const round of rounds) expect(round.outcome).toBe(round.pendingAtAbort ? "aborted" : "result");
  });
});

describe("rule 9 — failure classification: a genuine NonRecoverableToolError escapes from the validator too", () => {
  test("validate throwing a NonRecoverableToolError rejects with that error, and execute never runs", async () => {
    const fatal = new NonRecoverableToolError("schema registry corrupted");
    let executed = false;
    const registry = new ToolRegistry([
      defineTool({
        name: "t",
        description: "d",
        validate: () => {
          throw fatal;
        },
        execute: () => {
          executed = true;
          return null;
        },
      }),
    ]);
    await expect(executeToolCall(registry, call("t"), neverAborted())).rejects.toBe(fatal);
    expect(executed).toBe(false);
  });
});
