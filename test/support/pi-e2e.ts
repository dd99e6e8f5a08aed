// The Pi agent-loop end-to-end suite, run against both supported Pi majors (0.85 and 1.x)
// and parameterised by executor: Pi's real `agentLoop` driven by pi-ai's faux provider
// (scripted assistant messages, no network), with the tools of test/fixtures/pi-e2e-tools.mjs
// exposed through toPiAgentTools. Pi 1.x is installed under npm aliases (pi-agent-core-1,
// pi-ai-1), so both majors load side by side in one process.
//
// Run it for an executor with:
//   describePiAgentLoopSuite("in-process registry", () => ({ executor: new ToolRegistry(tools) }));
// The executor must have exactly the tools of PI_E2E_TOOLS_MODULE registered.
import * as agent0 from "@earendil-works/pi-agent-core";
import * as ai0 from "@earendil-works/pi-ai";
import * as agent1 from "pi-agent-core-1";
import * as ai1 from "pi-ai-1";
import type { ToolRegistry } from "toolgate";
import {
  type ToolCallExecutor,
  type ToolgatePiAgentTool,
  type ToolgatePiDetails,
  type ToPiAgentToolOptions,
  toPiAgentTools,
} from "toolgate/pi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** The tool module the suite expects the executor to have loaded. */
export const PI_E2E_TOOLS_MODULE = new URL("../fixtures/pi-e2e-tools.mjs", import.meta.url);

// The two majors' messages and events agree on everything the suites read, so 0.85's types
// serve as the shared vocabulary; 1.x values are cast to them where they cross over.
export type PiMessage = agent0.AgentMessage;
export type PiEvent = agent0.AgentEvent;
export type PiAssistantMessage = ai0.AssistantMessage;
export type PiToolResultMessage = ai0.ToolResultMessage<ToolgatePiDetails | Record<string, never>>;
type PiToolCall = ai0.ToolCall;

/** What a scripted model step sees: the transcript, and the tools the model was shown. */
export interface PiModelView {
  readonly messages: readonly ai0.Message[];
  readonly tools: readonly { readonly name: string; readonly description: string; readonly parameters: unknown }[];
}
export type PiStep = PiAssistantMessage | ((view: PiModelView) => PiAssistantMessage);

/** One supported Pi major, its modules behind a common face. */
export interface PiMajor {
  /** "Pi 0.85.0", "Pi 1.6.0". */
  readonly name: string;
  readonly toolCall: (name: string, args: Record<string, unknown>, id: string) => PiToolCall;
  readonly assistant: (content: string | PiToolCall[], stopReason?: "toolUse") => PiAssistantMessage;
  /** pi-ai's own argument check, as the agent loop runs it before `execute` (returns the checked arguments, or throws). */
  readonly validateToolArguments: (tool: ToolgatePiAgentTool, args: unknown) => unknown;
  readonly agentLoop: (
    tools: readonly ToolgatePiAgentTool[],
    steps: readonly PiStep[],
    signal: AbortSignal | undefined,
  ) => { events: AsyncIterable<PiEvent>; result: () => Promise<PiMessage[]> };
}

const prompt = (): { role: "user"; content: string; timestamp: number } => ({ role: "user", content: "go", timestamp: Date.now() });

const pi085: PiMajor = {
  name: "Pi 0.85.0",
  toolCall: (name, args, id) => ai0.fauxToolCall(name, args, { id }),
  assistant: (content, stopReason) => ai0.fauxAssistantMessage(content, stopReason === undefined ? {} : { stopReason }),
  validateToolArguments: (tool, args) =>
    ai0.validateToolArguments(tool as unknown as ai0.Tool, { type: "toolCall", id: "check", name: tool.name, arguments: args as never }),
  agentLoop(tools, steps, signal) {
    const faux = ai0.fauxProvider();
    faux.setResponses(
      steps.map((step) =>
        typeof step === "function"
          ? (context: ai0.Context) => step({ messages: context.messages, tools: declared(context.tools ?? []) })
          : step,
      ),
    );
    const stream = agent0.agentLoop(
      [prompt()],
      { systemPrompt: "You are a test.", messages: [], tools: [...tools] },
      { model: faux.getModel(), convertToLlm: (messages) => messages as ai0.Message[] },
      signal,
      faux.provider.streamSimple,
    );
    return { events: stream, result: () => stream.result() };
  },
};

/** A tool as the model is shown it. */
function declared(tools: readonly ai0.Tool[] | readonly ai1.Tool[]): PiModelView["tools"] {
  return tools.map(({ name, description, parameters }) => ({ name, description, parameters }));
}

/** The tools a Pi 1.x model is shown: declared by the transcript's system messages. */
function declaredTools(messages: readonly ai1.Message[]): PiModelView["tools"] {
  return declared(messages.flatMap((message) => (message.role === "system" ? (message.toolsAdded ?? []) : [])));
}

const pi1: PiMajor = {
  name: `Pi ${ai1.PI_AI_VERSION}`,
  toolCall: (name, args, id) => ai1.fauxToolCall(name, args as never, { id }) as PiToolCall,
  assistant: (content, stopReason) =>
    ai1.fauxAssistantMessage(
      content as string | ai1.ToolCall[],
      stopReason === undefined ? {} : { stopReason },
    ) as unknown as PiAssistantMessage,
  validateToolArguments: (tool, args) =>
    ai1.validateToolArguments(tool, { type: "toolCall", id: "check", name: tool.name, arguments: args as never }),
  agentLoop(tools, steps, signal) {
    const faux = ai1.fauxProvider();
    faux.setResponses(
      steps.map((step) =>
        typeof step === "function"
          ? (context: ai1.TranscriptContext) =>
              step({
                messages: context.messages as unknown as ai0.Message[],
                tools: declaredTools(context.messages),
              }) as unknown as ai1.AssistantMessage
          : (step as unknown as ai1.AssistantMessage),
      ),
    );
    const stream = agent1.agentLoop(
      [prompt()],
      { messages: [], tools: [...tools] },
      { model: faux.getModel(), convertToLlm: (messages) => messages },
      signal,
      faux.provider.streamSimple,
    );
    return {
      events: stream as unknown as AsyncIterable<PiEvent>,
      result: async () => (await stream.result()) as unknown as PiMessage[],
    };
  },
};

/** Every supported Pi major; each suite runs once per entry. */
export const PI_MAJORS: readonly PiMajor[] = [pi085, pi1];

/** What a suite run needs: the executor under test, and how to release it afterwards. */
export interface PiE2EHarness {
  readonly executor: ToolRegistry | ToolCallExecutor;
  close?(): Promise<void> | void;
}

/** One agent run's transcript and events. */
export interface PiRun {
  readonly messages: PiMessage[];
  readonly events: PiEvent[];
  readonly elapsedMs: number;
}

/** Runs Pi's real agent loop (of `major`) over `executor`'s tools with scripted model responses. */
export async function runPiAgentLoop(
  major: PiMajor,
  executor: ToolRegistry | ToolCallExecutor,
  steps: readonly PiStep[],
  options: { signal?: AbortSignal; onEvent?: (event: PiEvent) => void; toolOptions?: ToPiAgentToolOptions } = {},
): Promise<PiRun> {
  const started = performance.now();
  const stream = major.agentLoop(toPiAgentTools(executor, options.toolOptions), steps, options.signal);
  const events: PiEvent[] = [];
  for await (const event of stream.events) {
    events.push(event);
    options.onEvent?.(event);
  }
  const messages = await stream.result();
  return { messages, events, elapsedMs: performance.now() - started };
}

export function toolResults(messages: readonly PiMessage[]): PiToolResultMessage[] {
  return messages.filter((message): message is PiToolResultMessage => "role" in message && message.role === "toolResult");
}

export function assistantMessages(messages: readonly PiMessage[]): PiAssistantMessage[] {
  return messages.filter((message): message is PiAssistantMessage => "role" in message && message.role === "assistant");
}

/** The text of a Pi tool result (all text blocks). */
export function resultText(result: { readonly content: readonly { readonly type: string; readonly text?: string }[] }): string {
  return result.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("");
}

/** The last tool result in what the model is shown. */
export function lastToolResult(view: PiModelView): ai0.ToolResultMessage {
  const found = view.messages.findLast((message): message is ai0.ToolResultMessage => message.role === "toolResult");
  if (found === undefined) throw new Error("the model was shown no tool result");
  return found;
}

function registryOf(executor: ToolRegistry | ToolCallExecutor): ToolRegistry {
  return "registry" in executor ? executor.registry : executor;
}

/** Declares the suite for one executor, once per Pi major. */
export function describePiAgentLoopSuite(label: string, setup: () => PiE2EHarness | Promise<PiE2EHarness>): void {
  describe.each(PI_MAJORS)(`docs/adapters.md — Use it with Pi: Pi agentLoop end to end (${label}, $name)`, (major) => {
    let harness: PiE2EHarness;
    beforeAll(async () => {
      harness = await setup();
    });
    afterAll(async () => {
      await harness?.close?.();
    });
    const toolUse = (...calls: PiToolCall[]): PiAssistantMessage => major.assistant(calls, "toolUse");

    it("a valid call: the tool's content reaches the model as a linked text result", async () => {
      const run = await runPiAgentLoop(major, harness.executor, [
        toolUse(major.toolCall("add", { left: 2, right: 3 }, "call-add")),
        (view) => major.assistant(`The sum is ${resultText(lastToolResult(view))}.`),
      ]);
      const [result] = toolResults(run.messages);
      expect(result).toMatchObject({ toolCallId: "call-add", toolName: "add", isError: false, content: [{ type: "text", text: "5" }] });
      expect(result?.details).toEqual({ toolCallId: "call-add", toolName: "add", resultId: "tool-result-call-add" });
      const final = assistantMessages(run.messages).at(-1);
      expect(final?.stopReason).toBe("stop");
      expect(final?.content).toEqual([{ type: "text", text: "The sum is 5." }]);
    });

    it("the model is shown each tool's JSON Schema (from describeTools)", async () => {
      const shown: PiModelView["tools"][] = [];
      await runPiAgentLoop(major, harness.executor, [
        (view) => {
          shown.push(view.tools);
          return major.assistant("nothing to do");
        },
      ]);
      expect(shown[0]?.map((tool) => tool.name)).toEqual(registryOf(harness.executor).names());
      expect(shown[0]?.find((tool) => tool.name === "add")).toEqual({
        name: "add",
        description: "Adds two numbers and returns their sum.",
        parameters: {
          type: "object",
          properties: { left: { type: "number" }, right: { type: "number" } },
          required: ["left", "right"],
          additionalProperties: false,
        },
      });
    });

    it("invalid arguments: the next model step reads TOOL_ARGUMENTS_INVALID and corrects itself", async () => {
      const seen: unknown[] = [];
      const run = await runPiAgentLoop(major, harness.executor, [
        // "two" is not a number; our (non-coercing) validator refuses it before Pi's own check.
        toolUse(major.toolCall("add", { left: "two", right: 3 }, "call-bad")),
        (view) => {
          const error = JSON.parse(resultText(lastToolResult(view))) as { error: { code: string; message: string } };
          seen.push(error);
          if (error.error.code !== "TOOL_ARGUMENTS_INVALID" || !error.error.message.includes("$.left")) {
            return major.assistant("I cannot tell what went wrong.");
          }
          return toolUse(major.toolCall("add", { left: 2, right: 3 }, "call-fixed"));
        },
        (view) => major.assistant(`Fixed: ${resultText(lastToolResult(view))}`),
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
      const run = await runPiAgentLoop(major, harness.executor, [
        toolUse(major.toolCall("add", { left: "2", right: 3 }, "call-string")),
        major.assistant("done"),
      ]);
      const [result] = toolResults(run.messages);
      expect(result?.isError).toBe(true);
      expect(JSON.parse(resultText(result as PiToolResultMessage))).toMatchObject({ error: { code: "TOOL_ARGUMENTS_INVALID" } });
    });

    it("an unknown tool: an error result the model can read, and the run goes on", async () => {
      const namesBefore = registryOf(harness.executor).names();
      const run = await runPiAgentLoop(major, harness.executor, [
        toolUse(major.toolCall("no_such_tool", { x: 1 }, "call-unknown")),
        (view) => major.assistant(`saw: ${resultText(lastToolResult(view))}`),
      ]);
      const [result] = toolResults(run.messages);
      // Pi looks the name up in its own tool list (built from our registry) and answers itself.
      expect(result).toMatchObject({ toolCallId: "call-unknown", toolName: "no_such_tool", isError: true });
      expect(resultText(result as PiToolResultMessage)).toBe("Tool no_such_tool not found");
      expect(assistantMessages(run.messages).at(-1)?.content).toEqual([{ type: "text", text: "saw: Tool no_such_tool not found" }]);
      expect(registryOf(harness.executor).names()).toEqual(namesBefore);
    });

    it("a CPU-heavy tool runs and its structured output is serialized", async () => {
      const run = await runPiAgentLoop(major, harness.executor, [
        toolUse(major.toolCall("count_primes", { limit: 100_000 }, "call-primes")),
        major.assistant("done"),
      ]);
      const [result] = toolResults(run.messages);
      expect(result?.isError).toBe(false);
      expect(resultText(result as PiToolResultMessage)).toBe('{"limit":100000,"primes":9592}');
    });

    it("parallel calls: results come back in source order, each linked to its own call", async () => {
      const batch = (): PiStep[] => [
        toolUse(
          major.toolCall("echo_after", { ms: 400, tag: "slow" }, "p1"),
          major.toolCall("echo_after", { ms: 1, tag: "fast" }, "p2"),
          major.toolCall("add", { left: 40, right: 2 }, "p3"),
          major.toolCall("add", { left: "x", right: 2 }, "p4"),
        ),
        major.assistant("done"),
      ];
      // Twice: the first batch also warms up whatever the executor starts lazily (a worker
      // thread importing the tool module), so the second shows the calls' own timing.
      for (const round of [1, 2]) {
        const ends: string[] = [];
        const run = await runPiAgentLoop(major, harness.executor, batch(), {
          onEvent: (event) => event.type === "tool_execution_end" && ends.push(event.toolCallId),
        });
        const results = toolResults(run.messages);
        expect(results.map((result) => [result.toolCallId, result.toolName, result.isError])).toEqual([
          ["p1", "echo_after", false],
          ["p2", "echo_after", false],
          ["p3", "add", false],
          ["p4", "add", true],
        ]);
        expect(resultText(results[0] as PiToolResultMessage)).toBe("slow (from p1)");
        expect(resultText(results[1] as PiToolResultMessage)).toBe("fast (from p2)");
        expect(resultText(results[2] as PiToolResultMessage)).toBe("42");
        expect(JSON.parse(resultText(results[3] as PiToolResultMessage))).toMatchObject({ error: { code: "TOOL_ARGUMENTS_INVALID" } });
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
        major,
        harness.executor,
        [
          // `stall` ignores its signal: left to itself it would report success after 3 s.
          toolUse(major.toolCall("stall", { ms: 3000 }, "call-stall")),
          major.assistant("carrying on as if nothing happened"),
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
      expect(resultText(results[0] as PiToolResultMessage)).toBe("user pressed stop");
      expect(JSON.stringify(run.messages)).not.toContain("finished anyway");
      const final = assistantMessages(run.messages).at(-1);
      expect(final?.stopReason).toBe("aborted");
      // Faux consumes its next step before it notices the abort; its text must not get through.
      expect(JSON.stringify(run.messages)).not.toContain("carrying on");
    });
  });
}
