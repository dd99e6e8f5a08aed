// toOpenAiAgentsTools' `durable` option (docs/durable.md — Durable calls with your framework):
// a RunState with a pending approval, serialized, then approved and resumed twice (as two
// processes would, here in one): the approved call runs once, both runs read its output.
import { Agent, Runner, RunState } from "@openai/agents";
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents/testing";
import { type CallEndEvent, ContractErrorCode, defineTool, InProcessToolExecutor, isToolContractError, ToolRegistry } from "toolgate";
import { memoryDurableStore } from "toolgate/durable";
import { type OpenAiAgentsDurableContext, type ToOpenAiAgentsToolsOptions, toOpenAiAgentsTools } from "toolgate/openai-agents";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { toolOutputsSeen } from "../support/adapter-contract/openai-agents.js";

const runner = new Runner({ tracingDisabled: true });

interface OrderContext {
  readonly runId: string;
}

function setup(durable: ToOpenAiAgentsToolsOptions["durable"] | undefined) {
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
    durable: { store: memoryDurableStore() },
    hooks: { onCallEnd: (event) => void events.push(event) },
  });
  const tools = toOpenAiAgentsTools<OrderContext>(executor, { needsApproval: () => true, ...(durable === undefined ? {} : { durable }) });
  /** The agent as each process builds it: the same name and tools, its own model. */
  const agent = (model: ScriptedModel) => new Agent<OrderContext>({ name: "cashier", model, tools });
  return { executor, executions, events, agent };
}

/** Runs until the approval interruption; gives the serialized RunState. */
async function pendingApproval(agent: (model: ScriptedModel) => Agent<OrderContext>): Promise<string> {
  const model = new ScriptedModel([[functionCall("charge", { cents: 500 }, { callId: "call-c" })]]);
  const first = await runner.run(agent(model), "charge", { context: { runId: "order-9" } });
  expect(first.interruptions).toHaveLength(1);
  return first.state.toString();
}

/** One process's resume: deserialize, approve, run to the end. */
async function approveAndResume(agent: (model: ScriptedModel) => Agent<OrderContext>, serialized: string) {
  const model = new ScriptedModel([[assistantMessage("finished")]]);
  const resumed = agent(model);
  const state = await RunState.fromString(resumed, serialized);
  state.approve(state.getInterruptions()[0] as ReturnType<typeof state.getInterruptions>[number]);
  const result = await runner.run(resumed, state);
  expect(result.finalOutput).toBe("finished");
  return toolOutputsSeen(model, 0);
}

describe("docs/durable.md — Durable calls with your framework: OpenAI Agents (issue 42, test 15 in one process)", () => {
  it("a RunState resumed twice at once, runId from the run context: the approved call runs once, both runs read one output", async () => {
    const seen: OpenAiAgentsDurableContext[] = [];
    const { executions, events, agent } = setup((context) => {
      seen.push(context);
      return { runId: (context.context as OrderContext).runId };
    });
    const serialized = await pendingApproval(agent);
    expect(executions.count).toBe(0);
    const [one, two] = await Promise.all([approveAndResume(agent, serialized), approveAndResume(agent, serialized)]);
    expect(executions.count).toBe(1);
    expect(one).toEqual([["call-c", "charged 500 (#1)"]]);
    expect(two).toEqual(one);
    expect(events.map(({ durable }) => durable).sort()).toEqual([expect.stringMatching(/^(attached|replayed)$/), "executed"].sort());
    // The run context survived serialization: each resume's call was keyed by it.
    expect(seen.map(({ toolCallId, toolName, context }) => [toolCallId, toolName, context])).toEqual([
      ["call-c", "charge", { runId: "order-9" }],
      ["call-c", "charge", { runId: "order-9" }],
    ]);
    expect(seen.every((context) => Object.isFrozen(context))).toBe(true);
    // A later resume of the same state replays.
    expect(await approveAndResume(agent, serialized)).toEqual(one);
    expect(executions.count).toBe(1);
    expect(events.at(-1)?.durable).toBe("replayed");
  });

  it("the premise: without durable, the two resumes charge twice", async () => {
    const { executions, agent } = setup(undefined);
    const serialized = await pendingApproval(agent);
    await approveAndResume(agent, serialized);
    await approveAndResume(agent, serialized);
    expect(executions.count).toBe(2);
  });

  it("a bad answer ends the run with INVALID_ARGUMENT (errorFunction: null); the tool does not run", async () => {
    const { executions, agent } = setup(() => ({ runId: "" }));
    const serialized = await pendingApproval(agent);
    const failure = await approveAndResume(agent, serialized).then(
      () => undefined,
      (error: unknown) => error as { error?: unknown },
    );
    const error = failure?.error ?? failure;
    expect(isToolContractError(error)).toBe(true);
    expect(error).toMatchObject({
      code: ContractErrorCode.INVALID_ARGUMENT,
      message: expect.stringMatching(/^toOpenAiAgentsTools: options\.durable must answer \{ runId \}/),
    });
    expect(executions.count).toBe(0);
  });

  it("a registry source is refused when the tools are made", () => {
    const { executor } = setup(undefined);
    expect(() => toOpenAiAgentsTools(executor.registry, { durable: () => ({ runId: "r" }) })).toThrow(
      /toOpenAiAgentsTools: options\.durable needs an executor made with durable: \{ store \}.*not a ToolRegistry/,
    );
  });
});
