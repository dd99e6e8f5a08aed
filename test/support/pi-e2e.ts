// The Pi agent-loop end-to-end suite, parameterised by executor: Pi's real `agentLoop`
// (pi-agent-core 0.85.0) driven by pi-ai's faux provider (scripted assistant messages, no
// network), with the tools of test/fixtures/pi-e2e-tools.mjs exposed through toPiAgentTools.
//
// Run it for an executor with:
//   describePiAgentLoopSuite("in-process registry", () => ({ executor: new ToolRegistry(tools) }));
// The executor must have exactly the tools of PI_E2E_TOOLS_MODULE registered.
import { type AgentEvent, type AgentMessage, agentLoop } from "@earendil-works/pi-agent-core";
import {
  type AssistantMessage,
  type Context,
  type FauxResponseStep,
  fauxAssistantMessage,
  fauxProvider,
  fauxToolCall,
  type ToolResultMessage,
} from "@earendil-works/pi-ai";
import type { ToolRegistry } from "toolgate";
import { type ToolCallExecutor, type ToolgatePiDetails, toPiAgentTools } from "toolgate/pi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** The tool module the suite expects the executor to have loaded. */
export const PI_E2E_TOOLS_MODULE = new URL("../fixtures/pi-e2e-tools.mjs", import.meta.url);

/** What a suite run needs: the executor under test, and how to release it afterwards. */
export interface PiE2EHarness {
  readonly executor: ToolRegistry | ToolCallExecutor;
  close?(): Promise<void> | void;
}

/** One agent run's transcript and events. */
export interface PiRun {
  readonly messages: AgentMessage[];
  readonly events: AgentEvent[];
  readonly elapsedMs: number;
}

/** Runs Pi's real agent loop over `executor`'s tools with scripted model responses. */
export async function runPiAgentLoop(
  executor: ToolRegistry | ToolCallExecutor,
  responses: FauxResponseStep[],
  options: { signal?: AbortSignal; onEvent?: (event: AgentEvent) => void } = {},
): Promise<PiRun> {
  const faux = fauxProvider();
  faux.setResponses(responses);
  const started = performance.now();
  const stream = agentLoop(
    [{ role: "user", content: "go", timestamp: Date.now() }],
    { systemPrompt: "You are a test.", messages: [], tools: toPiAgentTools(executor) },
    { model: faux.getModel(), convertToLlm: (messages) => messages as never },
    options.signal,
    faux.provider.streamSimple,
  );
  const events: AgentEvent[] = [];
  for await (const event of stream) {
    events.push(event);
    options.onEvent?.(event);
  }
  const messages = await stream.result();
  return { messages, events, elapsedMs: performance.now() - started };
}

export function toolResults(messages: readonly AgentMessage[]): ToolResultMessage<ToolgatePiDetails | Record<string, never>>[] {
  return messages.filter((message): message is ToolResultMessage => "role" in message && message.role === "toolResult");
}

export function assistantMessages(messages: readonly AgentMessage[]): AssistantMessage[] {
  return messages.filter((message): message is AssistantMessage => "role" in message && message.role === "assistant");
}

/** The text of a Pi tool result (all text blocks). */
export function resultText(result: ToolResultMessage): string {
  return result.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("");
}

/** The last tool result in what the model is shown. */
function lastToolResult(context: Context): ToolResultMessage {
  const found = context.messages.findLast((message): message is ToolResultMessage => message.role === "toolResult");
  if (found === undefined) throw new Error("the model was shown no tool result");
  return found;
}

function registryOf(executor: ToolRegistry | ToolCallExecutor): ToolRegistry {
  return "registry" in executor ? executor.registry : executor;
}

const toolUse = (...calls: ReturnType<typeof fauxToolCall>[]): AssistantMessage => fauxAssistantMessage(calls, { stopReason: "toolUse" });

/** Declares the suite for one executor. */
export function describePiAgentLoopSuite(label: string, setup: () => PiE2EHarness | Promise<PiE2EHarness>): void {
  describe(`Pi agentLoop end to end (${label})`, () => {
    let harness: PiE2EHarness;
    beforeAll(async () => {
      harness = await setup();
    });
    afterAll(async () => {
      await harness?.close?.();
    });

    it("a valid call: the tool's content reaches the model as a linked text result", async () => {
      const run = await runPiAgentLoop(harness.executor, [
        toolUse(fauxToolCall("add", { left: 2, right: 3 }, { id: "call-add" })),
        (context) => fauxAssistantMessage(`The sum is ${resultText(lastToolResult(context))}.`),
      ]);
      const [result] = toolResults(run.messages);
      expect(result).toMatchObject({ toolCallId: "call-add", toolName: "add", isError: false, content: [{ type: "text", text: "5" }] });
      expect(result?.details).toEqual({ toolCallId: "call-add", toolName: "add", resultId: "tool-result-call-add" });
      const final = assistantMessages(run.messages).at(-1);
      expect(final?.stopReason).toBe("stop");
      expect(final?.content).toEqual([{ type: "text", text: "The sum is 5." }]);
    });

    it("invalid arguments: the next model step reads TOOL_ARGUMENTS_INVALID and corrects itself", async () => {
      const seen: unknown[] = [];
      const run = await runPiAgentLoop(harness.executor, [
        // "two" is not a number; our (non-coercing) validator refuses it before Pi's own check.
        toolUse(fauxToolCall("add", { left: "two", right: 3 }, { id: "call-bad" })),
        (context) => {
          const error = JSON.parse(resultText(lastToolResult(context))) as { error: { code: string; message: string } };
          seen.push(error);
          if (error.error.code !== "TOOL_ARGUMENTS_INVALID" || !error.error.message.includes("$.left")) {
            return fauxAssistantMessage("I cannot tell what went wrong.");
          }
          return toolUse(fauxToolCall("add", { left: 2, right: 3 }, { id: "call-fixed" }));
        },
        (context) => fauxAssistantMessage(`Fixed: ${resultText(lastToolResult(context))}`),
      ]);
      expect(seen).toEqual([
        { error: { code: "TOOL_ARGUMENTS_INVALID", message: "Invalid arguments (1 issue):\n  - $.left: must be number" } },
      ]);
      const results = toolResults(run.messages);
      expect(results.map((result) => [result.toolCallId, result.isError, resultText(result)])).toEqual([
        ["call-bad", true, JSON.stringify(seen[0])],
        ["call-fixed", false, "5"],
      ]);
      expect(assistantMessages(run.messages).at(-1)?.content).toEqual([{ type: "text", text: "Fixed: 5" }]);
    });

    it("coercible but wrong-typed arguments are refused too: Pi's coercion does not override our validator", async () => {
      const run = await runPiAgentLoop(harness.executor, [
        toolUse(fauxToolCall("add", { left: "2", right: 3 }, { id: "call-string" })),
        fauxAssistantMessage("done"),
      ]);
      const [result] = toolResults(run.messages);
      expect(result?.isError).toBe(true);
      expect(JSON.parse(resultText(result as ToolResultMessage))).toMatchObject({ error: { code: "TOOL_ARGUMENTS_INVALID" } });
    });

    it("an unknown tool: an error result the model can read, and the run goes on", async () => {
      const namesBefore = registryOf(harness.executor).names();
      const run = await runPiAgentLoop(harness.executor, [
        toolUse(fauxToolCall("no_such_tool", { x: 1 }, { id: "call-unknown" })),
        (context) => fauxAssistantMessage(`saw: ${resultText(lastToolResult(context))}`),
      ]);
      const [result] = toolResults(run.messages);
      // Pi looks the name up in its own tool list (built from our registry) and answers itself.
      expect(result).toMatchObject({ toolCallId: "call-unknown", toolName: "no_such_tool", isError: true });
      expect(resultText(result as ToolResultMessage)).toBe("Tool no_such_tool not found");
      expect(assistantMessages(run.messages).at(-1)?.content).toEqual([{ type: "text", text: "saw: Tool no_such_tool not found" }]);
      expect(registryOf(harness.executor).names()).toEqual(namesBefore);
    });

    it("a CPU-heavy tool runs and its structured output is serialized", async () => {
      const run = await runPiAgentLoop(harness.executor, [
        toolUse(fauxToolCall("count_primes", { limit: 100_000 }, { id: "call-primes" })),
        fauxAssistantMessage("done"),
      ]);
      const [result] = toolResults(run.messages);
      expect(result?.isError).toBe(false);
      expect(resultText(result as ToolResultMessage)).toBe('{"limit":100000,"primes":9592}');
    });

    it("parallel calls: results come back in source order, each linked to its own call", async () => {
      const batch = (): FauxResponseStep[] => [
        toolUse(
          fauxToolCall("echo_after", { ms: 400, tag: "slow" }, { id: "p1" }),
          fauxToolCall("echo_after", { ms: 1, tag: "fast" }, { id: "p2" }),
          fauxToolCall("add", { left: 40, right: 2 }, { id: "p3" }),
          fauxToolCall("add", { left: "x", right: 2 }, { id: "p4" }),
        ),
        fauxAssistantMessage("done"),
      ];
      // Twice: the first batch also warms up whatever the executor starts lazily (a worker
      // thread importing the tool module), so the second shows the calls' own timing.
      for (const round of [1, 2]) {
        const ends: string[] = [];
        const run = await runPiAgentLoop(harness.executor, batch(), {
          onEvent: (event) => event.type === "tool_execution_end" && ends.push(event.toolCallId),
        });
        const results = toolResults(run.messages);
        expect(results.map((result) => [result.toolCallId, result.toolName, result.isError])).toEqual([
          ["p1", "echo_after", false],
          ["p2", "echo_after", false],
          ["p3", "add", false],
          ["p4", "add", true],
        ]);
        expect(resultText(results[0] as ToolResultMessage)).toBe("slow (from p1)");
        expect(resultText(results[1] as ToolResultMessage)).toBe("fast (from p2)");
        expect(resultText(results[2] as ToolResultMessage)).toBe("42");
        expect(JSON.parse(resultText(results[3] as ToolResultMessage))).toMatchObject({ error: { code: "TOOL_ARGUMENTS_INVALID" } });
        expect(results.slice(0, 3).map((result) => result.details)).toEqual(
          ["p1", "p2", "p3"].map((id, index) => ({
            toolCallId: id,
            toolName: index < 2 ? "echo_after" : "add",
            resultId: `tool-result-${id}`,
          })),
        );
        // The calls overlapped: the fast one finished first, yet the transcript keeps source order.
        if (round === 2) expect(ends.indexOf("p2")).toBeLessThan(ends.indexOf("p1"));
      }
    });

    it("abort mid-tool: the run ends as aborted at once, without a (misleading) success result", async () => {
      const controller = new AbortController();
      const run = await runPiAgentLoop(
        harness.executor,
        [
          // `stall` ignores its signal: left to itself it would report success after 3 s.
          toolUse(fauxToolCall("stall", { ms: 3000 }, { id: "call-stall" })),
          fauxAssistantMessage("carrying on as if nothing happened"),
        ],
        {
          signal: controller.signal,
          onEvent: (event) => {
            if (event.type === "tool_execution_start") setTimeout(() => controller.abort(new Error("user pressed stop")), 50);
          },
        },
      );
      expect(run.elapsedMs).toBeLessThan(2000);
      const results = toolResults(run.messages);
      expect(results).toHaveLength(1);
      expect(results[0]).toMatchObject({ toolCallId: "call-stall", isError: true });
      expect(resultText(results[0] as ToolResultMessage)).toBe("user pressed stop");
      expect(JSON.stringify(run.messages)).not.toContain("finished anyway");
      const final = assistantMessages(run.messages).at(-1);
      expect(final?.stopReason).toBe("aborted");
      // Faux consumes its next step before it notices the abort; its text must not get through.
      expect(JSON.stringify(run.messages)).not.toContain("carrying on");
    });
  });
}
