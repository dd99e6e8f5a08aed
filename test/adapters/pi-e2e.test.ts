// Pi's real agent loop over toolgate tools, in-process, for each supported Pi major. The
// shared suite lives in test/support/pi-e2e.ts so the same scenarios run against the worker
// executor too; here also what only the in-process executor does (progress) and what needs
// tools of its own (schema libraries, NonRecoverableToolError).
import { num, obj } from "pi-schema-1";
import { defineTool, InProcessToolExecutor, imageContent, NonRecoverableToolError, ToolRegistry, withAttachments } from "toolgate";
import { fromPiAgentTool, toPiAgentTools } from "toolgate/pi";
import Type from "typebox";
import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import tools from "../fixtures/pi-e2e-tools.mjs";
import {
  assistantMessages,
  describePiAgentLoopSuite,
  lastToolResult,
  PI_MAJORS,
  type PiModelView,
  resultText,
  runPiAgentLoop,
  toolResults,
} from "../support/pi-e2e.js";

describePiAgentLoopSuite("in-process ToolRegistry", () => ({ executor: new ToolRegistry(tools) }));

describe.each(PI_MAJORS)("docs/adapters.md — Use it with Pi: Pi agentLoop with schema-first tools ($name)", (major) => {
  const registry = new ToolRegistry([
    defineTool({
      name: "greet",
      description: "Greets someone.",
      parameters: z.object({ name: z.string().min(1), times: z.number().int().positive().optional() }),
      execute: ({ name, times }) => `hello ${name}`.repeat(times ?? 1),
    }),
    defineTool({
      name: "tag",
      description: "Tags an item.",
      parameters: v.object({ item: v.string(), tags: v.array(v.picklist(["red", "blue"])) }),
      // valibot makes no JSON Schema itself: the definition gives the one the model sees.
      jsonSchema: {
        type: "object",
        properties: { item: { type: "string" }, tags: { type: "array", items: { enum: ["red", "blue"] } } },
        required: ["item", "tags"],
      },
      execute: ({ item, tags }) => `${item}: ${tags.join(",")}`,
    }),
  ]);

  it("zod and valibot tools reach Pi with their real JSON Schema, and Pi's check lets valid calls through", async () => {
    const shown: PiModelView["tools"][] = [];
    const run = await runPiAgentLoop(major, registry, [
      (view) => {
        shown.push(view.tools);
        return major.assistant(
          [major.toolCall("greet", { name: "Ada", times: 2 }, "g1"), major.toolCall("tag", { item: "box", tags: ["red"] }, "t1")],
          "toolUse",
        );
      },
      major.assistant("done"),
    ]);
    expect(shown[0]).toEqual([
      {
        name: "greet",
        description: "Greets someone.",
        parameters: {
          $schema: "https://json-schema.org/draft/2020-12/schema",
          type: "object",
          properties: {
            name: { type: "string", minLength: 1 },
            times: { type: "integer", exclusiveMinimum: 0, maximum: 9007199254740991 },
          },
          required: ["name"],
        },
      },
      {
        name: "tag",
        description: "Tags an item.",
        parameters: {
          type: "object",
          properties: { item: { type: "string" }, tags: { type: "array", items: { enum: ["red", "blue"] } } },
          required: ["item", "tags"],
        },
      },
    ]);
    expect(toolResults(run.messages).map((result) => [result.toolCallId, result.isError, resultText(result)])).toEqual([
      ["g1", false, "hello Adahello Ada"],
      ["t1", false, "box: red"],
    ]);
  });

  it("a zod refusal reaches the model as toolgate's TOOL_ARGUMENTS_INVALID, not Pi's own message", async () => {
    const run = await runPiAgentLoop(major, registry, [
      major.assistant(
        [major.toolCall("greet", { name: "" }, "g2"), major.toolCall("tag", { item: "box", tags: ["green"] }, "t2")],
        "toolUse",
      ),
      (view) => major.assistant(resultText(lastToolResult(view))),
    ]);
    const results = toolResults(run.messages);
    expect(results.map((result) => result.isError)).toEqual([true, true]);
    for (const result of results) {
      expect(JSON.parse(resultText(result))).toMatchObject({ error: { code: "TOOL_ARGUMENTS_INVALID" } });
    }
    expect(resultText(results[0] as never)).toContain("$.name");
    expect(resultText(results[1] as never)).toContain("$.tags[0]");
  });
});

describe.each(PI_MAJORS)("docs/adapters.md — Use it with Pi: an existing Pi tool through toolgate, back in Pi's loop ($name)", (major) => {
  // The schema each major's own tools use: TypeBox for 0.85, pi-schema's plain JSON Schema for 1.x.
  const parameters = major.name.startsWith("Pi 0.") ? Type.Object({ divisor: Type.Number() }) : obj({ divisor: num() });
  const divide = fromPiAgentTool({
    name: "divide",
    description: "Divides 12 by divisor.",
    parameters,
    async execute(_id: string, { divisor }: { divisor: number }) {
      // A Pi 1.x tool may report failure by returning isError; toolgate reads it the same under either major.
      if (divisor === 0) return { content: [{ type: "text", text: "cannot divide by zero" }], details: {}, isError: true };
      return { content: [{ type: "text", text: String(12 / divisor) }], details: {} };
    },
  });

  it("its schema is shown, its results and failures come back as toolgate results", async () => {
    const shown: PiModelView["tools"][] = [];
    const run = await runPiAgentLoop(major, new ToolRegistry([divide]), [
      (view) => {
        shown.push(view.tools);
        return major.assistant(
          [
            major.toolCall("divide", { divisor: 4 }, "d1"),
            major.toolCall("divide", { divisor: 0 }, "d2"),
            major.toolCall("divide", { divisor: "x" }, "d3"),
          ],
          "toolUse",
        );
      },
      major.assistant("done"),
    ]);
    expect(shown[0]?.[0]?.parameters).toEqual({
      type: "object",
      properties: { divisor: { type: "number" } },
      required: ["divisor"],
      ...(major.name.startsWith("Pi 0.") ? {} : { additionalProperties: false }),
    });
    const results = toolResults(run.messages).map((result) => [result.toolCallId, result.isError, resultText(result)]);
    expect(results.slice(0, 2)).toEqual([
      ["d1", false, "3"],
      ["d2", true, JSON.stringify({ error: { code: "TOOL_EXECUTION_FAILED", message: "cannot divide by zero" } })],
    ]);
    expect(results[2]?.[1]).toBe(true);
    expect(JSON.parse(String(results[2]?.[2]))).toMatchObject({ error: { code: "TOOL_ARGUMENTS_INVALID" } });
  });
});

describe.each(PI_MAJORS)("docs/adapters.md — Use it with Pi: Pi agentLoop and attachments ($name)", (major) => {
  it("the model is shown the tool's image as an image block of the tool result, after its text", async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 13, 10, 26, 10, 0, 255]);
    const registry = new ToolRegistry([
      defineTool({
        name: "screenshot",
        description: "Takes a screenshot.",
        parameters: z.object({}),
        execute: () => withAttachments({ width: 1 }, [imageContent(png, "image/png")]),
      }),
    ]);
    const seen: ReturnType<typeof lastToolResult>[] = [];
    await runPiAgentLoop(major, registry, [
      major.assistant([major.toolCall("screenshot", {}, "s1")], "toolUse"),
      (view) => {
        seen.push(lastToolResult(view));
        return major.assistant("a black pixel");
      },
    ]);
    expect(seen[0]?.isError).toBe(false);
    expect(seen[0]?.content).toEqual([
      { type: "text", text: '{"width":1}' },
      { type: "image", data: Buffer.from(png).toString("base64"), mimeType: "image/png" },
    ]);
  });
});

describe.each(PI_MAJORS)("docs/adapters.md — Use it with Pi: Pi agentLoop and progress ($name)", (major) => {
  const registry = new ToolRegistry([
    defineTool({
      name: "crunch",
      description: "Crunches numbers, reporting how far it got.",
      parameters: z.object({ steps: z.number().int().min(1).max(10) }),
      async execute({ steps }, { reportProgress }) {
        for (let step = 1; step <= steps; step += 1) {
          reportProgress(step === steps ? { progress: step, total: steps, message: "last step" } : { progress: step, total: steps });
          // Past the 50 ms throttle, so each report is delivered on its own.
          await new Promise((resolve) => setTimeout(resolve, 70));
        }
        return `crunched ${steps}`;
      },
    }),
  ]);

  it("reportProgress reaches Pi's onUpdate: tool_execution_update events carry the reports, then the result", async () => {
    const run = await runPiAgentLoop(major, registry, [
      major.assistant([major.toolCall("crunch", { steps: 3 }, "c1")], "toolUse"),
      major.assistant("done"),
    ]);
    const sequence = run.events.flatMap((event) => {
      if (event.type === "tool_execution_update") return [["update", event.toolCallId, event.partialResult]];
      if (event.type === "tool_execution_end") return [["end", event.toolCallId, resultText(event.result)]];
      return [];
    });
    const progress = (value: number, message: string | undefined) => ({
      toolCallId: "c1",
      toolName: "crunch",
      progress: value,
      total: 3,
      message,
    });
    expect(sequence).toEqual([
      ["update", "c1", { content: [{ type: "text", text: "1/3" }], details: progress(1, undefined) }],
      ["update", "c1", { content: [{ type: "text", text: "2/3" }], details: progress(2, undefined) }],
      ["update", "c1", { content: [{ type: "text", text: "last step" }], details: progress(3, "last step") }],
      ["end", "c1", "crunched 3"],
    ]);
    // Partial results are for the UI: the transcript holds only the final result.
    expect(toolResults(run.messages).map((result) => resultText(result))).toEqual(["crunched 3"]);
  });
});

describe.each(PI_MAJORS)("docs/adapters.md — Use it with Pi: Pi agentLoop and NonRecoverableToolError ($name)", (major) => {
  const fatal = defineTool({
    name: "fatal",
    description: "Finds a broken invariant.",
    validate: (args: unknown) => ({ ok: true, value: args }),
    jsonSchema: { type: "object" },
    execute: () => {
      throw new NonRecoverableToolError("ledger is corrupt");
    },
  });

  async function run(withHook: boolean) {
    const controller = new AbortController();
    const hookCalls: [string, string][] = [];
    const { messages } = await runPiAgentLoop(
      major,
      new ToolRegistry([fatal]),
      [major.assistant([major.toolCall("fatal", {}, "call-fatal")], "toolUse"), major.assistant("I will just keep going")],
      {
        signal: controller.signal,
        toolOptions: withHook
          ? {
              onNonRecoverableError: (error, toolCallId) => {
                hookCalls.push([error.message, toolCallId]);
                controller.abort(error);
              },
            }
          : {},
      },
    );
    return { messages, hookCalls };
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

describe.each(PI_MAJORS)("docs/adapters.md — Use it with Pi: prepareArguments keeps the operator's argument budgets ($name)", (major) => {
  /** A tool whose validator records every value it is given (the slow regex of issue 28, defect 7, stands behind it). */
  function echoTool(argumentBudgets?: { maxStringLength: number }) {
    const validated: unknown[] = [];
    const executed: unknown[] = [];
    const tool = defineTool({
      name: "echo",
      description: "Echoes a short text.",
      validate: (args: unknown) => {
        validated.push(args);
        return { ok: true as const, value: args as { text: string } };
      },
      jsonSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      ...(argumentBudgets === undefined ? {} : { argumentBudgets }),
      execute: (args: { text: string }) => {
        executed.push(args);
        return args.text;
      },
    });
    return { tool, validated, executed };
  }

  async function callWith(source: ToolRegistry | InProcessToolExecutor, text: string) {
    const run = await runPiAgentLoop(major, source, [
      major.assistant([major.toolCall("echo", { text }, "e1")], "toolUse"),
      major.assistant("done"),
    ]);
    return toolResults(run.messages).map((result) => [result.isError, resultText(result)]);
  }

  const long = "a".repeat(27);
  const refused = [
    true,
    JSON.stringify({
      error: {
        code: "TOOL_ARGUMENTS_INVALID",
        message:
          "arguments.text exceeds the argument budget: has a string of 27 code units (more than 16) (argument budget maxStringLength)",
      },
    }),
  ];

  it("the tool's own argumentBudgets: an over-long string never reaches a validator; the model reads the budget", async () => {
    const { tool, validated, executed } = echoTool({ maxStringLength: 16 });
    expect(await callWith(new ToolRegistry([tool]), long)).toEqual([refused]);
    expect(validated).toEqual([]);
    expect(executed).toEqual([]);
    // Within the budget the call runs as before.
    expect(await callWith(new ToolRegistry([tool]), "short")).toEqual([[false, "short"]]);
  });

  it("the executor's argumentBudgets: the same refusal, for a tool without budgets of its own", async () => {
    const { tool, validated, executed } = echoTool();
    const executor = new InProcessToolExecutor(new ToolRegistry([tool]), { argumentBudgets: { maxStringLength: 16 } });
    try {
      expect(await callWith(executor, long)).toEqual([refused]);
      expect(validated).toEqual([]);
      expect(executed).toEqual([]);
    } finally {
      await executor.close();
    }
  });

  it("arguments that are not an object are refused the same way, before any validator", async () => {
    const { tool, validated } = echoTool();
    const [agentTool] = toPiAgentTools(new ToolRegistry([tool]));
    for (const args of [null, [2, 3], 5, "2+3"]) {
      expect(() => agentTool?.prepareArguments(args)).toThrow(
        /^\{"error":\{"code":"TOOL_ARGUMENTS_INVALID","message":"call\.arguments must be/,
      );
    }
    expect(validated).toEqual([]);
  });
});

describe.each(PI_MAJORS)("docs/adapters.md — Use it with Pi: a tool named __proto__ ($name)", (major) => {
  it("is offered and run like any other (issue 28, defect 8: the tools are an array)", async () => {
    const proto = defineTool({ name: "__proto__", description: "Answers.", parameters: z.object({}), execute: () => "from __proto__" });
    const run = await runPiAgentLoop(major, new ToolRegistry([proto]), [
      major.assistant([major.toolCall("__proto__", {}, "p1")], "toolUse"),
      major.assistant("done"),
    ]);
    expect(toolResults(run.messages).map((result) => [result.isError, resultText(result)])).toEqual([[false, "from __proto__"]]);
  });
});
