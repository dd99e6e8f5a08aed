// Pi's real agent loop over toolgate tools, in-process. The shared suite lives in
// test/support/pi-e2e.ts so the same scenarios can run against the worker executor.
import { type AgentMessage, agentLoop } from "@earendil-works/pi-agent-core";
import { fauxAssistantMessage, fauxProvider, fauxToolCall } from "@earendil-works/pi-ai";
import { defineTool, NonRecoverableToolError, ToolRegistry } from "toolgate";
import { toPiAgentTools } from "toolgate/pi";
import { describe, expect, it } from "vitest";
import tools from "../fixtures/pi-e2e-tools.mjs";
import { assistantMessages, describePiAgentLoopSuite, resultText, toolResults } from "../support/pi-e2e.js";

describePiAgentLoopSuite("in-process ToolRegistry", () => ({ executor: new ToolRegistry(tools) }));

describe("Pi agentLoop and NonRecoverableToolError (in-process)", () => {
  const fatal = defineTool({
    name: "fatal",
    description: "Finds a broken invariant.",
    validate: (args: unknown) => ({ ok: true, value: args }),
    execute: () => {
      throw new NonRecoverableToolError("ledger is corrupt");
    },
  });

  async function run(withHook: boolean): Promise<{ messages: AgentMessage[]; hookCalls: [string, string][] }> {
    const registry = new ToolRegistry([fatal]);
    const controller = new AbortController();
    const hookCalls: [string, string][] = [];
    const faux = fauxProvider();
    faux.setResponses([
      fauxAssistantMessage([fauxToolCall("fatal", {}, { id: "call-fatal" })], { stopReason: "toolUse" }),
      fauxAssistantMessage("I will just keep going"),
    ]);
    const piTools = toPiAgentTools(
      registry,
      withHook
        ? {
            onNonRecoverableError: (error, toolCallId) => {
              hookCalls.push([error.message, toolCallId]);
              controller.abort(error);
            },
          }
        : {},
    );
    const stream = agentLoop(
      [{ role: "user", content: "go", timestamp: Date.now() }],
      { systemPrompt: "", messages: [], tools: piTools },
      { model: faux.getModel(), convertToLlm: (messages) => messages as never },
      controller.signal,
      faux.provider.streamSimple,
    );
    for await (const _event of stream) {
      // drain
    }
    return { messages: await stream.result(), hookCalls };
  }

  it("with onNonRecoverableError aborting the run, the run ends as aborted", async () => {
    const { messages, hookCalls } = await run(true);
    expect(hookCalls).toEqual([["ledger is corrupt", "call-fatal"]]);
    expect(toolResults(messages).map((result) => [result.isError, resultText(result)])).toEqual([[true, "ledger is corrupt"]]);
    expect(assistantMessages(messages).at(-1)?.stopReason).toBe("aborted");
    expect(JSON.stringify(messages)).not.toContain("keep going");
  });

  it("without the hook Pi records an error result and goes on (Pi has no fatal-tool channel)", async () => {
    const { messages, hookCalls } = await run(false);
    expect(hookCalls).toEqual([]);
    expect(toolResults(messages).map((result) => [result.isError, resultText(result)])).toEqual([[true, "ledger is corrupt"]]);
    expect(assistantMessages(messages).at(-1)?.stopReason).toBe("stop");
  });
});
