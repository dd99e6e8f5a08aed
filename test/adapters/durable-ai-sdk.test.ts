// toAiSdkTools' `durable` option (docs/durable.md — Durable calls with your framework): the
// same call re-issued by two generateText runs under one run id runs once; both runs read
// the one outcome.
import { generateText, isStepCount } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { type CallEndEvent, ContractErrorCode, defineTool, InProcessToolExecutor, ToolRegistry } from "toolgate";
import { type AiSdkDurableContext, type ToAiSdkToolsOptions, toAiSdkTools } from "toolgate/ai-sdk";
import { memoryDurableStore } from "toolgate/durable";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type AiSdkCallOptions, answer, toolCall, toolResultsSeen } from "../support/adapter-contract/ai-sdk.js";

function setup(withStore = true) {
  const executions = { count: 0 };
  const events: CallEndEvent[] = [];
  const charge = defineTool({
    name: "charge",
    description: "Charges the card.",
    parameters: z.object({ cents: z.number() }),
    execute: ({ cents }) => {
      executions.count += 1;
      return `charged ${cents} (#${executions.count})`;
    },
  });
  const executor = new InProcessToolExecutor(new ToolRegistry([charge]), {
    ...(withStore ? { durable: { store: memoryDurableStore() } } : {}),
    hooks: { onCallEnd: (event) => void events.push(event) },
  });
  return { executor, executions, events };
}

/** One generateText run whose model asks for charge (call id "call-1") once, then answers. */
async function runOnce(tools: ReturnType<typeof toAiSdkTools>) {
  const model = new MockLanguageModelV4({ doGenerate: [toolCall("call-1", "charge", { cents: 500 }), answer("done")] });
  await generateText({ model, tools, prompt: "charge", stopWhen: isStepCount(3) });
  return toolResultsSeen(model.doGenerateCalls[1] as AiSdkCallOptions);
}

describe("docs/durable.md — Durable calls with your framework: the AI SDK", () => {
  it("the same call re-issued by two generateText runs with the same runId runs once; both read its outcome", async () => {
    const { executor, executions, events } = setup();
    const seen: AiSdkDurableContext[] = [];
    const runId = "order-7"; // the app's own run identity: the SDK names no run
    const tools = toAiSdkTools(executor, {
      durable: (context) => {
        seen.push(context);
        return { runId };
      },
    });
    const first = await runOnce(tools);
    const second = await runOnce(tools);
    expect(executions.count).toBe(1);
    expect(first).toEqual([["call-1", { type: "text", value: "charged 500 (#1)" }]]);
    expect(second).toEqual(first);
    expect(events.map(({ durable }) => durable)).toEqual(["executed", "replayed"]);
    expect(seen.every((context) => Object.isFrozen(context))).toBe(true);
    expect(seen.map(({ toolCallId, toolName }) => [toolCallId, toolName])).toEqual([
      ["call-1", "charge"],
      ["call-1", "charge"],
    ]);
    // Another run id is another key: the call runs again.
    await runOnce(toAiSdkTools(executor, { durable: () => ({ runId: "order-8" }) }));
    expect(executions.count).toBe(2);
  });

  it("the run id can come from the tool context generateText passes (toolsContext), as it is", async () => {
    const { executor, executions } = setup();
    const seen: unknown[] = [];
    const tools = toAiSdkTools(executor, {
      durable: ({ context }) => {
        seen.push(context);
        return { runId: (context as { chatId: string }).chatId };
      },
    });
    for (const chatId of ["chat-1", "chat-1", "chat-2"]) {
      const model = new MockLanguageModelV4({ doGenerate: [toolCall("call-1", "charge", { cents: 500 }), answer("done")] });
      // toolsContext is typed from tools with a context schema; toolgate's tools declare none.
      const options = { model, tools, prompt: "charge", stopWhen: isStepCount(3), toolsContext: { charge: { chatId } } };
      await generateText(options as unknown as Parameters<typeof generateText>[0]);
    }
    expect(seen).toEqual([{ chatId: "chat-1" }, { chatId: "chat-1" }, { chatId: "chat-2" }]);
    expect(executions.count).toBe(2);
  });

  it("the premise: without durable the re-issued call runs twice", async () => {
    const { executor, executions } = setup();
    await runOnce(toAiSdkTools(executor));
    await runOnce(toAiSdkTools(executor));
    expect(executions.count).toBe(2);
  });

  it("a throw fails the call closed (INVALID_ARGUMENT, the tool does not run); a registry source or a non-function is refused when the tools are made", async () => {
    const { executor, executions } = setup();
    const thrown = new Error("no run");
    const tools = toAiSdkTools(executor, {
      durable: () => {
        throw thrown;
      },
    });
    const model = new MockLanguageModelV4({ doGenerate: [toolCall("call-1", "charge", { cents: 1 }), answer("done")] });
    const result = await generateText({ model, tools, prompt: "charge", stopWhen: isStepCount(3) });
    const errors = result.steps[0]?.content.filter((part) => part.type === "tool-error") ?? [];
    expect(errors).toHaveLength(1);
    expect((errors[0] as { error: unknown }).error).toMatchObject({
      code: ContractErrorCode.INVALID_ARGUMENT,
      message: "toAiSdkTools: options.durable threw; the call did not run",
      cause: thrown,
    });
    expect(executions.count).toBe(0);
    expect(() => toAiSdkTools(executor.registry, { durable: () => ({ runId: "r" }) })).toThrow(/not a ToolRegistry/);
    expect(() => toAiSdkTools(executor, { durable: "r" as unknown as NonNullable<ToAiSdkToolsOptions["durable"]> })).toThrow(
      /toAiSdkTools: options\.durable must be a function/,
    );
  });
});
