// toolgate/openai-agents end to end: the OpenAI Agents SDK's own Runner loop over toolgate
// tools, with the SDK's scripted test model (@openai/agents/testing) playing the model.
import { Agent, RunContext, Runner, ToolCallError } from "@openai/agents";
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents/testing";
import {
  ContractErrorCode,
  defineTool,
  describeTools,
  InProcessToolExecutor,
  imageContent,
  isToolContractError,
  NonRecoverableToolError,
  type ToolProgress,
  ToolRegistry,
  withAttachments,
} from "toolgate";
import { toOpenAiAgentsTools, toolCallDenied, toolgateToolErrorFormatter } from "toolgate/openai-agents";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { toolOutputsSeen } from "../support/adapter-contract/openai-agents.js";
import { transferTool, twoStepTool } from "../support/adapter-contract/tools.js";

const runner = new Runner({ tracingDisabled: true });

const add = defineTool({
  name: "add",
  description: "Adds two numbers.",
  parameters: z.object({ left: z.number(), right: z.number() }),
  execute: ({ left, right }) => left + right,
});

describe("docs/adapters.md — Use it with the OpenAI Agents SDK: toOpenAiAgentsTools with Runner.run", () => {
  it("a wrong call, then a corrected call, then an answer; the model reads toolgate's error and the result", async () => {
    const model = new ScriptedModel([
      [functionCall("add", { left: "two", right: 3 }, { callId: "call-1" })],
      [functionCall("add", { left: 2, right: 3 }, { callId: "call-2" })],
      [assistantMessage("5")],
    ]);
    const registry = new ToolRegistry([add]);
    const agent = new Agent({ name: "calculator", instructions: "Add.", model, tools: toOpenAiAgentsTools(registry) });
    const result = await runner.run(agent, "What is 2 + 3?");
    expect(result.finalOutput).toBe("5");
    model.assertComplete();
    // The model was shown describeTools' JSON Schema as it is, not strict.
    expect(model.calls[0]?.request.tools).toEqual([
      expect.objectContaining({
        type: "function",
        name: "add",
        description: "Adds two numbers.",
        parameters: describeTools(registry)[0]?.parameters,
        strict: false,
      }),
    ]);
    // Second request: the error content the model reads to correct itself, as the tool's output.
    expect(toolOutputsSeen(model, 1)).toEqual([
      [
        "call-1",
        JSON.stringify({
          error: {
            code: "TOOL_ARGUMENTS_INVALID",
            message: "Invalid arguments (1 issue):\n  - $.left: Invalid input: expected number, received string",
          },
        }),
      ],
    ]);
    // Third request: both outputs, the corrected one last.
    expect(toolOutputsSeen(model, 2).at(-1)).toEqual(["call-2", "5"]);
    // The app sees both as the SDK's ordinary tool output items.
    expect(result.newItems.filter((item) => item.type === "tool_call_output_item").map((item) => item.output)).toEqual([
      expect.stringContaining('"code":"TOOL_ARGUMENTS_INVALID"'),
      "5",
    ]);
  });

  it("through an executor, with the SDK's call id as toolgate's toolCallId", async () => {
    const seenIds: string[] = [];
    const executor = new InProcessToolExecutor(
      new ToolRegistry([
        defineTool({
          name: "whoami",
          description: "Returns its call id.",
          parameters: z.object({}),
          execute: (_args, { toolCallId }) => seenIds.push(toolCallId) && toolCallId,
        }),
      ]),
    );
    const model = new ScriptedModel([[functionCall("whoami", {}, { callId: "sdk-id-9" })], [assistantMessage("done")]]);
    await runner.run(new Agent({ name: "a", model, tools: toOpenAiAgentsTools(executor) }), "who?");
    expect(seenIds).toEqual(["sdk-id-9"]);
    expect(toolOutputsSeen(model, 1)).toEqual([["sdk-id-9", "sdk-id-9"]]);
    await executor.close();
  });

  it("invoked without the SDK's call details, each call gets a fresh id", async () => {
    const seenIds: string[] = [];
    const whoami = defineTool({
      name: "whoami",
      description: "Returns its call id.",
      parameters: z.object({}),
      execute: (_args, { toolCallId }) => seenIds.push(toolCallId) && toolCallId,
    });
    const [tool] = toOpenAiAgentsTools(new ToolRegistry([whoami]));
    const context = new RunContext();
    const outputs = [await tool?.invoke(context, "{}"), await tool?.invoke(context, "{}", {})];
    expect(outputs).toEqual(seenIds);
    expect(new Set(seenIds).size).toBe(2);
    for (const id of seenIds) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("abort: the tool sees the signal and run() rejects with the abort reason; no output reaches the model", async () => {
    const controller = new AbortController();
    const reason = new Error("user stopped");
    let toolSawAbort = false;
    const hang = defineTool({
      name: "hang",
      description: "Waits for its signal.",
      parameters: z.object({}),
      execute: (_args, { signal }) =>
        new Promise<never>(() => {
          signal.addEventListener("abort", () => (toolSawAbort = true));
          setTimeout(() => controller.abort(reason), 5);
        }),
    });
    const model = new ScriptedModel([[functionCall("hang", {}, { callId: "call-h" })], [assistantMessage("never")]]);
    const agent = new Agent({ name: "a", model, tools: toOpenAiAgentsTools(new ToolRegistry([hang])) });
    await expect(runner.run(agent, "hang", { signal: controller.signal })).rejects.toBe(reason);
    expect(toolSawAbort).toBe(true);
    expect(model.calls).toHaveLength(1);
  });

  it("a NonRecoverableToolError fails the run (a ToolCallError carrying it), not a generic message to the model", async () => {
    const fatal = new NonRecoverableToolError("disk on fire");
    const burn = defineTool({
      name: "burn",
      description: "Fails for good.",
      parameters: z.object({}),
      execute: () => {
        throw fatal;
      },
    });
    const model = new ScriptedModel([[functionCall("burn", {}, { callId: "call-b" })], [assistantMessage("never")]]);
    const agent = new Agent({ name: "a", model, tools: toOpenAiAgentsTools(new ToolRegistry([burn])) });
    const error: unknown = await runner.run(agent, "burn").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ToolCallError);
    expect((error as ToolCallError).error).toBe(fatal);
    expect(model.calls).toHaveLength(1);
  });

  it("a tool that throws gives the model toolgate's TOOL_EXECUTION_FAILED, not the SDK's generic text, and the run goes on", async () => {
    const flaky = defineTool({
      name: "flaky",
      description: "Fails once.",
      parameters: z.object({}),
      execute: () => {
        throw new Error("db down");
      },
    });
    const model = new ScriptedModel([[functionCall("flaky", {}, { callId: "call-f" })], [assistantMessage("sorry")]]);
    const result = await runner.run(new Agent({ name: "a", model, tools: toOpenAiAgentsTools(new ToolRegistry([flaky])) }), "go");
    expect(result.finalOutput).toBe("sorry");
    expect(toolOutputsSeen(model, 1)).toEqual([
      ["call-f", JSON.stringify({ error: { code: "TOOL_EXECUTION_FAILED", message: "db down" } })],
    ]);
  });

  it("malformed JSON arguments never reach toolgate: the SDK answers the model itself", async () => {
    let runs = 0;
    const count = defineTool({ name: "count", description: "Counts.", parameters: z.object({}), execute: () => ++runs });
    const model = new ScriptedModel([[functionCall("count", "{not json", { callId: "call-j" })], [assistantMessage("ok")]]);
    await runner.run(new Agent({ name: "a", model, tools: toOpenAiAgentsTools(new ToolRegistry([count])) }), "count");
    expect(runs).toBe(0);
    expect(toolOutputsSeen(model, 1)).toEqual([["call-j", expect.stringContaining("valid JSON")]]);
  });

  it("arguments that are valid JSON but not an object, or over the argument budgets, are errors the model reads; the run goes on (issue 28, defect 6)", async () => {
    const executed: unknown[] = [];
    const echo = defineTool({
      name: "echo",
      description: "Echoes a short text.",
      parameters: z.object({ text: z.string() }),
      argumentBudgets: { maxStringLength: 16 },
      execute: (args) => {
        executed.push(args);
        return args.text;
      },
    });
    const raw = ["null", "[2,3]", "5", '"2+3"', JSON.stringify({ text: "a".repeat(27) })];
    const model = new ScriptedModel([
      raw.map((args, index) => functionCall("echo", args, { callId: `call-${index}` })),
      [functionCall("echo", { text: "short" }, { callId: "call-ok" })],
      [assistantMessage("done")],
    ]);
    const executor = new InProcessToolExecutor(new ToolRegistry([echo]));
    try {
      const result = await runner.run(new Agent({ name: "a", model, tools: toOpenAiAgentsTools(executor) }), "echo");
      expect(result.finalOutput).toBe("done");
      const notAnObject = JSON.stringify({
        error: { code: "TOOL_ARGUMENTS_INVALID", message: "call.arguments must be a plain JSON object" },
      });
      expect(toolOutputsSeen(model, 1)).toEqual([
        ["call-0", notAnObject],
        ["call-1", notAnObject],
        ["call-2", notAnObject],
        ["call-3", notAnObject],
        [
          "call-4",
          JSON.stringify({
            error: {
              code: "TOOL_ARGUMENTS_INVALID",
              message:
                "arguments.text exceeds the argument budget: has a string of 27 code units (more than 16) (argument budget maxStringLength)",
            },
          }),
        ],
      ]);
      expect(toolOutputsSeen(model, 2).at(-1)).toEqual(["call-ok", "short"]);
      expect(executed).toEqual([{ text: "short" }]);
    } finally {
      await executor.close();
    }
  });

  it("a malformed call from the caller's side (a closed executor) still ends the run", async () => {
    const executor = new InProcessToolExecutor(new ToolRegistry([add]));
    const tools = toOpenAiAgentsTools(executor);
    await executor.close();
    const model = new ScriptedModel([[functionCall("add", { left: 1, right: 2 }, { callId: "call-x" })], [assistantMessage("never")]]);
    const error: unknown = await runner.run(new Agent({ name: "a", model, tools }), "add").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ToolCallError);
    expect(isToolContractError((error as ToolCallError).error)).toBe(true);
    expect(model.calls).toHaveLength(1);
  });

  it("an agent with a typed run context takes the tools and runs them with that context", async () => {
    const model = new ScriptedModel([[functionCall("add", { left: 1, right: 1 }, { callId: "call-c" })], [assistantMessage("2")]]);
    const agent = new Agent<{ userId: string }>({ name: "scoped", model, tools: toOpenAiAgentsTools(new ToolRegistry([add])) });
    const result = await runner.run(agent, "1 + 1?", { context: { userId: "u-1" } });
    expect(result.finalOutput).toBe("2");
    expect(toolOutputsSeen(model, 1)).toEqual([["call-c", "2"]]);
  });

  it("a tool named __proto__ is offered and run like any other (issue 28, defect 8: the tools are an array)", async () => {
    const proto = defineTool({ name: "__proto__", description: "Answers.", parameters: z.object({}), execute: () => "from __proto__" });
    const model = new ScriptedModel([[functionCall("__proto__", {}, { callId: "call-p" })], [assistantMessage("ok")]]);
    await runner.run(new Agent({ name: "a", model, tools: toOpenAiAgentsTools(new ToolRegistry([proto, add])) }), "go");
    expect(model.calls[0]?.request.tools.map((tool) => tool.type === "function" && tool.name)).toEqual(["__proto__", "add"]);
    expect(toolOutputsSeen(model, 1)).toEqual([["call-p", "from __proto__"]]);
  });

  it("a tool name the SDK rewrites still runs the toolgate tool of that name", async () => {
    const weather = defineTool({ name: "get-weather", description: "Weather.", parameters: z.object({}), execute: () => "sunny" });
    const model = new ScriptedModel([[functionCall("get_weather", {}, { callId: "call-w" })], [assistantMessage("sunny")]]);
    await runner.run(new Agent({ name: "a", model, tools: toOpenAiAgentsTools(new ToolRegistry([weather])) }), "weather?");
    expect(model.calls[0]?.request.tools.map((tool) => tool.type === "function" && tool.name)).toEqual(["get_weather"]);
    expect(toolOutputsSeen(model, 1)).toEqual([["call-w", "sunny"]]);
  });
});

describe("docs/adapters.md — Use it with the OpenAI Agents SDK: toOpenAiAgentsTools options and progress", () => {
  it("progress reports go to options.onProgress, with the SDK's call id", async () => {
    const reports: ToolProgress[] = [];
    const steps = twoStepTool();
    const model = new ScriptedModel([[functionCall("steps", {}, { callId: "call-s" })], [assistantMessage("ok")]]);
    const tools = toOpenAiAgentsTools(new ToolRegistry([steps]), { onProgress: (progress) => reports.push(progress) });
    await runner.run(new Agent({ name: "a", model, tools }), "go");
    expect(reports).toEqual([
      { toolCallId: "call-s", toolName: "steps", progress: 1, total: 2, message: undefined },
      { toolCallId: "call-s", toolName: "steps", progress: 2, total: 2, message: "done" },
    ]);
    expect(toolOutputsSeen(model, 1)).toEqual([["call-s", "finished"]]);
  });

  it("an onProgress that throws changes nothing the model sees", async () => {
    let calls = 0;
    const steps = defineTool({
      name: "steps",
      description: "Reports once.",
      parameters: z.object({}),
      execute: async (_args, { reportProgress }) => {
        reportProgress({ progress: 1 });
        await new Promise((resolve) => setTimeout(resolve, 70));
        return "finished";
      },
    });
    const tools = toOpenAiAgentsTools(new ToolRegistry([steps]), {
      onProgress: () => {
        calls += 1;
        throw new Error("listener broke");
      },
    });
    const model = new ScriptedModel([[functionCall("steps", {}, { callId: "call-t" })], [assistantMessage("ok")]]);
    const result = await runner.run(new Agent({ name: "a", model, tools }), "go");
    expect(calls).toBe(1);
    expect(result.finalOutput).toBe("ok");
    expect(toolOutputsSeen(model, 1)).toEqual([["call-t", "finished"]]);
  });

  it("refuses a bad source, a bad onProgress and a name clash up front, naming what is wrong", () => {
    const registry = new ToolRegistry([add]);
    const refusal = (run: () => unknown): unknown => {
      try {
        run();
      } catch (error) {
        return isToolContractError(error) ? [error.code, error.message] : error;
      }
      return "no error";
    };
    expect(refusal(() => toOpenAiAgentsTools({ registry: "nope" } as never))).toEqual([
      ContractErrorCode.INVALID_ARGUMENT,
      expect.stringContaining("toOpenAiAgentsTools: expected a ToolRegistry"),
    ]);
    expect(refusal(() => toOpenAiAgentsTools(registry, { onProgress: "log" } as never))).toEqual([
      ContractErrorCode.INVALID_ARGUMENT,
      expect.stringContaining("onProgress must be a function (got a string)"),
    ]);
    const clashing = new ToolRegistry([
      defineTool({ name: "a-b", description: "One.", parameters: z.object({}), execute: () => 1 }),
      defineTool({ name: "a.b", description: "Two.", parameters: z.object({}), execute: () => 2 }),
    ]);
    expect(refusal(() => toOpenAiAgentsTools(clashing))).toEqual([
      ContractErrorCode.DUPLICATE_TOOL_NAME,
      expect.stringContaining('tools "a-b" and "a.b" are both named "a_b"'),
    ]);
  });

  it("refuses an onProgress accessor without calling it (own data properties only)", () => {
    let reads = 0;
    const options = {};
    Object.defineProperty(options, "onProgress", {
      enumerable: true,
      get: () => {
        reads += 1;
        return () => undefined;
      },
    });
    expect(() => toOpenAiAgentsTools(new ToolRegistry([add]), options)).toThrow(
      "options.onProgress must be a data property, not an accessor",
    );
    expect(reads).toBe(0);
  });

  it("the tools are frozen, so nothing swaps their execute after the fact", () => {
    const [tool] = toOpenAiAgentsTools(new ToolRegistry([add]));
    expect(Object.isFrozen(tool)).toBe(true);
  });
});

describe("docs/adapters.md — Use it with the OpenAI Agents SDK: attachments as the SDK's image output", () => {
  it("a result with images reaches the model as input_text then one input_image per attachment", async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 13, 10, 26, 10, 0, 255]);
    const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]);
    const camera = defineTool({
      name: "camera",
      description: "Takes two pictures.",
      parameters: z.object({}),
      execute: () => withAttachments({ shots: 2 }, [imageContent(png, "image/png"), imageContent(jpeg, "image/jpeg")]),
    });
    const model = new ScriptedModel([
      [functionCall("camera", {}, { callId: "cam-1" }), functionCall("add", { left: 1, right: 2 }, { callId: "add-1" })],
      [assistantMessage("two pictures")],
    ]);
    const result = await runner.run(new Agent({ name: "a", model, tools: toOpenAiAgentsTools(new ToolRegistry([camera, add])) }), "look");
    expect(result.finalOutput).toBe("two pictures");
    const input = model.calls[1]?.request.input;
    const outputs = Array.isArray(input)
      ? input.filter((item) => item.type === "function_call_result").map((item) => [item.callId, item.output])
      : [];
    expect(outputs).toEqual([
      [
        "cam-1",
        [
          { type: "input_text", text: '{"shots":2}' },
          { type: "input_image", image: `data:image/png;base64,${Buffer.from(png).toString("base64")}` },
          { type: "input_image", image: `data:image/jpeg;base64,${Buffer.from(jpeg).toString("base64")}` },
        ],
      ],
      // A text-only result stays text.
      ["add-1", { type: "text", text: "3" }],
    ]);
  });
});

describe("docs/adapters.md — Use it with the OpenAI Agents SDK: approval through run interruptions", () => {
  function transferTools() {
    const asked: unknown[] = [];
    const { moved: executed, tool: transfer } = transferTool();
    const tools = toOpenAiAgentsTools(new ToolRegistry([transfer, add]), {
      needsApproval: (request) => {
        asked.push(request);
        return request.toolName === "transfer";
      },
    });
    return { tools, executed, asked };
  }

  async function interrupted(scriptRunner: Runner, steps: ConstructorParameters<typeof ScriptedModel>[0]) {
    const { tools, executed, asked } = transferTools();
    const model = new ScriptedModel(steps);
    const agent = new Agent({ name: "banker", model, tools });
    const first = await scriptRunner.run(agent, "pay");
    return { agent, model, first, executed, asked };
  }

  const script = () => [
    [functionCall("transfer", { to: "alice" }, { callId: "call-t" }), functionCall("add", { left: 1, right: 1 }, { callId: "call-a" })],
    [assistantMessage("finished")],
  ];

  it("a call that needs approval interrupts the run; approved, it runs through toolgate and the run resumes", async () => {
    const { agent, model, first, executed, asked } = await interrupted(runner, script());
    expect(first.interruptions.map((item) => item.type === "tool_approval_item" && item.name)).toEqual(["transfer"]);
    expect(asked).toEqual([
      { toolCallId: "call-t", toolName: "transfer", arguments: { to: "alice" } },
      { toolCallId: "call-a", toolName: "add", arguments: { left: 1, right: 1 } },
    ]);
    expect(executed).toEqual([]);
    first.state.approve(first.interruptions[0] as (typeof first.interruptions)[number]);
    const second = await runner.run(agent, first.state);
    expect(second.finalOutput).toBe("finished");
    expect(executed).toEqual(["alice"]);
    // The call that needed no approval ran in the first turn; the approved one after resuming.
    expect(toolOutputsSeen(model, 1)).toEqual([
      ["call-a", "2"],
      ["call-t", "moved to alice"],
    ]);
  });

  it("rejected, the call never runs; with toolgateToolErrorFormatter the model reads TOOL_CALL_DENIED", async () => {
    const formatting = new Runner({ tracingDisabled: true, toolErrorFormatter: toolgateToolErrorFormatter });
    const { agent, model, first, executed } = await interrupted(formatting, script());
    first.state.reject(first.interruptions[0] as (typeof first.interruptions)[number]);
    const second = await formatting.run(agent, first.state);
    expect(second.finalOutput).toBe("finished");
    expect(executed).toEqual([]);
    expect(toolOutputsSeen(model, 1)).toEqual([
      ["call-a", "2"],
      ["call-t", JSON.stringify({ error: { code: "TOOL_CALL_DENIED", message: "Tool execution was not approved." } })],
    ]);
  });

  it("rejected with a message of the person's own: toolCallDenied(reason) is what the model reads", async () => {
    const { agent, model, first, executed } = await interrupted(runner, script());
    first.state.reject(first.interruptions[0] as (typeof first.interruptions)[number], { message: toolCallDenied("the owner said no") });
    await runner.run(agent, first.state);
    expect(executed).toEqual([]);
    expect(toolOutputsSeen(model, 1).at(-1)).toEqual([
      "call-t",
      JSON.stringify({ error: { code: "TOOL_CALL_DENIED", message: "the owner said no" } }),
    ]);
  });

  it("a predicate that throws asks a person (fails closed); needsApproval must be a function", async () => {
    const echo = defineTool({ name: "echo", description: "Echoes.", parameters: z.object({}), execute: () => "echoed" });
    const tools = toOpenAiAgentsTools(new ToolRegistry([echo]), {
      needsApproval: () => {
        throw new Error("policy store down");
      },
    });
    const model = new ScriptedModel([[functionCall("echo", {}, { callId: "call-e" })], [assistantMessage("never")]]);
    const result = await runner.run(new Agent({ name: "a", model, tools }), "echo");
    expect(result.interruptions).toHaveLength(1);
    expect(() => toOpenAiAgentsTools(new ToolRegistry([echo]), { needsApproval: "yes" as never })).toThrow(
      /options\.needsApproval must be a function/,
    );
  });
});
