// toolgate/openai-agents, issue 28 defect 3: an async `onProgress` that rejects is ignored, as a
// throw from it is, whatever the source: a registry, each executor, and a foreign ToolExecutor
// that calls the listener itself (the adapter's own guard, not the executor's, covers that one).
// The SDK's Runner loop with its scripted test model drives the calls.
import { Agent, Runner } from "@openai/agents";
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents/testing";
import type { ToolCall, ToolExecutor } from "toolgate";
import { toOpenAiAgentsTools } from "toolgate/openai-agents";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EXECUTORS, inProcessExecutor } from "../support/executors.js";
import { fixture } from "../support/helpers.js";

const PROGRESS_TOOLS = fixture("progress-tools");
const runner = new Runner({ tracingDisabled: true });

let unhandled: unknown[];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
const open: ToolExecutor[] = [];
beforeEach(() => {
  unhandled = [];
  process.on("unhandledRejection", onUnhandled);
});
afterEach(async () => {
  await new Promise((resolve) => setTimeout(resolve, 20)); // an unhandled rejection surfaces within a few turns
  process.off("unhandledRejection", onUnhandled);
  for (const executor of open.splice(0)) await executor.close();
  expect(unhandled).toEqual([]);
});

/** An executor of someone else's: it calls the listener once itself, ignoring what it returns, then runs the call plainly. */
function foreign(inner: ToolExecutor): Pick<ToolExecutor, "registry" | "executeToolCall"> {
  return {
    registry: inner.registry,
    executeToolCall: (toolCall, signal, options) => {
      const { id, name } = toolCall as ToolCall;
      options?.onProgress?.({ toolCallId: id, toolName: name, progress: 0, total: undefined, message: "queued" });
      return inner.executeToolCall(toolCall, signal);
    },
  };
}

type Source = Parameters<typeof toOpenAiAgentsTools>[0];

const SOURCES: ReadonlyArray<readonly [string, () => Promise<Source>]> = [
  ["a ToolRegistry", async () => (await inProcessExecutor([PROGRESS_TOOLS])).registry],
  ...EXECUTORS.map(([label, make]) => [`the ${label} executor`, () => track(make([PROGRESS_TOOLS]))] as const),
  ["a foreign ToolExecutor", async () => foreign(await track(inProcessExecutor([PROGRESS_TOOLS])))],
];

async function track(made: Promise<ToolExecutor>): Promise<ToolExecutor> {
  const executor = await made;
  open.push(executor);
  return executor;
}

describe.each(SOURCES)("toOpenAiAgentsTools: an onProgress whose promise rejects is ignored (%s)", (_label, source) => {
  it("the run ends as scripted, the listener was called, and no rejection is left unhandled", async () => {
    let deliveries = 0;
    const tools = toOpenAiAgentsTools(await source(), {
      onProgress: async () => {
        deliveries += 1;
        throw new Error("the progress bar is down");
      },
    });
    const model = new ScriptedModel([
      [functionCall("count", { to: 3, waitMs: 120 }, { callId: "call-progress" })],
      [assistantMessage("counted")],
    ]);
    const result = await runner.run(new Agent({ name: "a", model, tools }), "count to three");
    expect(result.finalOutput).toBe("counted");
    model.assertComplete();
    expect(deliveries).toBeGreaterThanOrEqual(1);
  });
});
