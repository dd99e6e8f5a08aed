// toolgate/ai-sdk end to end: the AI SDK's own generateText / streamText loop over
// toolgate tools, with the SDK's mock language model (ai/test) playing the model.
import { generateText, isStepCount, type ModelMessage, streamText } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import { defineTool, InProcessToolExecutor, imageContent, NonRecoverableToolError, ToolRegistry, withAttachments } from "toolgate";
import { hasNonRecoverableToolError, ToolgateToolError, throwIfNonRecoverable, toAiSdkTools, toolCallDenied } from "toolgate/ai-sdk";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type AiSdkCallOptions, answer, toolCall, toolResultsSeen, usage } from "../support/adapter-contract/ai-sdk.js";
import { burnTool, transferTool } from "../support/adapter-contract/tools.js";

type CallOptions = AiSdkCallOptions;

const add = defineTool({
  name: "add",
  description: "Adds two numbers.",
  parameters: z.object({ left: z.number(), right: z.number() }),
  execute: ({ left, right }) => left + right,
});

describe("docs/adapters.md — Use it with the Vercel AI SDK: toAiSdkTools with generateText", () => {
  it("a wrong call, then a corrected call, then an answer; the model reads toolgate's error and the result", async () => {
    const model = new MockLanguageModelV4({
      doGenerate: [toolCall("call-1", "add", { left: "two", right: 3 }), toolCall("call-2", "add", { left: 2, right: 3 }), answer("5")],
    });
    const result = await generateText({
      model,
      tools: toAiSdkTools(new ToolRegistry([add])),
      prompt: "What is 2 + 3?",
      stopWhen: isStepCount(5),
    });
    expect(result.text).toBe("5");
    // The model was shown the JSON Schema from describeTools.
    const [firstRequest, secondRequest, thirdRequest] = model.doGenerateCalls;
    expect(firstRequest?.tools).toEqual([
      expect.objectContaining({
        type: "function",
        name: "add",
        description: "Adds two numbers.",
        inputSchema: expect.objectContaining({ type: "object", required: ["left", "right"] }),
      }),
    ]);
    // Second request: the error content the model reads to correct itself.
    expect(toolResultsSeen(secondRequest as CallOptions)).toEqual([
      [
        "call-1",
        {
          type: "error-text",
          value: JSON.stringify({
            error: {
              code: "TOOL_ARGUMENTS_INVALID",
              message: "Invalid arguments (1 issue):\n  - $.left: Invalid input: expected number, received string",
            },
          }),
        },
      ],
    ]);
    // Third request: both results, the corrected one as text.
    expect(toolResultsSeen(thirdRequest as CallOptions).at(-1)).toEqual(["call-2", { type: "text", value: "5" }]);
    // The app sees the SDK's own conventions: a tool-error carrying toolgate's result, then a tool-result.
    const [step1, step2] = result.steps;
    const error = step1?.content.find((part) => part.type === "tool-error");
    expect(error?.error).toBeInstanceOf(ToolgateToolError);
    expect((error?.error as ToolgateToolError | undefined)?.result).toMatchObject({ toolCallId: "call-1", toolName: "add", isError: true });
    expect(step2?.toolResults.map((part) => [part.toolCallId, part.output])).toEqual([["call-2", "5"]]);
  });

  it("a result with attachments: the output carries base64 images, the model sees text then a file part per image", async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 255, 7]);
    const webp = new Uint8Array(600).map((_, index) => (index * 11) % 256);
    const camera = defineTool({
      name: "camera",
      description: "Takes two pictures.",
      parameters: z.object({}),
      execute: () => withAttachments({ shots: 2 }, [imageContent(png, "image/png"), imageContent(webp, "image/webp")]),
    });
    const model = new MockLanguageModelV4({
      doGenerate: [toolCall("cam-1", "camera", {}), toolCall("add-1", "add", { left: 1, right: 2 }), answer("ok")],
    });
    const result = await generateText({
      model,
      tools: toAiSdkTools(new ToolRegistry([camera, add])),
      prompt: "look",
      stopWhen: isStepCount(5),
    });
    const pngBase64 = Buffer.from(png).toString("base64");
    const webpBase64 = Buffer.from(webp).toString("base64");
    const output = result.steps[0]?.toolResults[0]?.output;
    expect(output).toEqual({
      type: "content",
      text: '{"shots":2}',
      images: [
        { type: "image", data: pngBase64, mimeType: "image/png" },
        { type: "image", data: webpBase64, mimeType: "image/webp" },
      ],
    });
    expect(JSON.parse(JSON.stringify(output))).toEqual(output);
    expect(toolResultsSeen(model.doGenerateCalls[1] as CallOptions)).toEqual([
      [
        "cam-1",
        {
          type: "content",
          value: [
            { type: "text", text: '{"shots":2}' },
            { type: "file", mediaType: "image/png", data: { type: "data", data: pngBase64 } },
            { type: "file", mediaType: "image/webp", data: { type: "data", data: webpBase64 } },
          ],
        },
      ],
    ]);
    expect(new Uint8Array(Buffer.from(webpBase64, "base64"))).toEqual(webp);
    // A text-only result stays a string output, shown as text.
    expect(result.steps[1]?.toolResults[0]?.output).toBe("3");
    expect(toolResultsSeen(model.doGenerateCalls[2] as CallOptions).at(-1)).toEqual(["add-1", { type: "text", value: "3" }]);
  });

  it("through an executor, with the SDK's toolCallId as toolgate's", async () => {
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
    const model = new MockLanguageModelV4({ doGenerate: [toolCall("sdk-id-9", "whoami", {}), answer("done")] });
    await generateText({ model, tools: toAiSdkTools(executor), prompt: "who?", stopWhen: isStepCount(3) });
    expect(seenIds).toEqual(["sdk-id-9"]);
    expect(toolResultsSeen(model.doGenerateCalls[1] as CallOptions)).toEqual([["sdk-id-9", { type: "text", value: "sdk-id-9" }]]);
    await executor.close();
  });

  it("abort: the tool sees the signal and generateText rejects; no result reaches the model", async () => {
    const controller = new AbortController();
    let toolSawAbort = false;
    const hang = defineTool({
      name: "hang",
      description: "Waits for its signal.",
      parameters: z.object({}),
      execute: (_args, { signal }) =>
        new Promise<never>(() => {
          signal.addEventListener("abort", () => (toolSawAbort = true));
          setTimeout(() => controller.abort(new Error("user stopped")), 5);
        }),
    });
    const model = new MockLanguageModelV4({ doGenerate: [toolCall("call-h", "hang", {}), answer("never")] });
    const run = generateText({
      model,
      tools: toAiSdkTools(new ToolRegistry([hang])),
      prompt: "hang",
      abortSignal: controller.signal,
      stopWhen: isStepCount(3),
    });
    await expect(run).rejects.toThrow();
    expect(toolSawAbort).toBe(true);
    expect(model.doGenerateCalls).toHaveLength(1);
  });
});

describe("docs/adapters.md — Use it with the Vercel AI SDK: tool names", () => {
  it("a tool named __proto__ is an own key of the tool set and the model's call runs it (issue 28, defect 8)", async () => {
    const proto = defineTool({ name: "__proto__", description: "Answers.", parameters: z.object({}), execute: () => "from __proto__" });
    const ctor = defineTool({ name: "constructor", description: "Answers.", parameters: z.object({}), execute: () => "from constructor" });
    const tools = toAiSdkTools(new ToolRegistry([proto, ctor, add]));
    expect(Object.keys(tools)).toEqual(["__proto__", "constructor", "add"]);
    expect(Object.getPrototypeOf(tools)).toBe(null);
    const model = new MockLanguageModelV4({
      doGenerate: [toolCall("p-1", "__proto__", {}), toolCall("c-1", "constructor", {}), toolCall("t-1", "toString", {}), answer("done")],
    });
    const result = await generateText({ model, tools, prompt: "go", stopWhen: isStepCount(5) });
    expect(result.text).toBe("done");
    // The model was offered all three tools, and each call ran the toolgate tool of that name.
    expect(model.doGenerateCalls[0]?.tools?.map((tool) => tool.name)).toEqual(["__proto__", "constructor", "add"]);
    expect(toolResultsSeen(model.doGenerateCalls[1] as CallOptions)).toEqual([["p-1", { type: "text", value: "from __proto__" }]]);
    expect(toolResultsSeen(model.doGenerateCalls[2] as CallOptions).at(-1)).toEqual(["c-1", { type: "text", value: "from constructor" }]);
    // A name we do not have finds nothing inherited: the SDK reports it as an unknown tool.
    const unknown = result.steps[2]?.content.find((part) => part.type === "tool-error");
    expect(unknown).toMatchObject({ toolCallId: "t-1", toolName: "toString" });
    expect(String((unknown as { error?: unknown } | undefined)?.error)).toMatch(/toString/);
  });
});

describe("docs/adapters.md — Use it with the Vercel AI SDK: toAiSdkTools with streamText, progress as preliminary results", () => {
  it("the tool's progress reports arrive as preliminary tool results before the final one", async () => {
    const steps = defineTool({
      name: "steps",
      description: "Works in three steps.",
      parameters: z.object({}),
      execute: async (_args, { reportProgress }) => {
        for (let step = 1; step <= 3; step += 1) {
          reportProgress({ progress: step, total: 3 });
          await new Promise((resolve) => setTimeout(resolve, 70));
        }
        return "finished";
      },
    });
    const model = new MockLanguageModelV4({
      doStream: [
        {
          stream: convertArrayToReadableStream([
            { type: "tool-call", toolCallId: "call-s", toolName: "steps", input: "{}" },
            { type: "finish", finishReason: { unified: "tool-calls", raw: undefined }, usage },
          ]),
        },
        {
          stream: convertArrayToReadableStream([
            { type: "text-start", id: "t" },
            { type: "text-delta", id: "t", delta: "ok" },
            { type: "text-end", id: "t" },
            { type: "finish", finishReason: { unified: "stop", raw: undefined }, usage },
          ]),
        },
      ],
    });
    const result = streamText({ model, tools: toAiSdkTools(new ToolRegistry([steps])), prompt: "go", stopWhen: isStepCount(3) });
    const toolResults: [boolean, unknown][] = [];
    for await (const part of result.fullStream) {
      if (part.type === "tool-result") toolResults.push([part.preliminary === true, part.output]);
    }
    expect(toolResults.at(-1)).toEqual([false, "finished"]);
    const preliminary = toolResults.filter(([isPreliminary]) => isPreliminary).map(([, output]) => output);
    expect(preliminary.length).toBeGreaterThanOrEqual(1);
    expect(preliminary[0]).toEqual({
      type: "progress",
      progress: { toolCallId: "call-s", toolName: "steps", progress: 1, total: 3, message: undefined },
    });
    expect(await result.text).toBe("ok");
  });
});

describe("docs/adapters.md — Use it with the Vercel AI SDK: a NonRecoverableToolError ends the run", () => {
  const fatal = new NonRecoverableToolError("ledger is corrupt");
  const burn = burnTool(fatal);

  it("generateText: hasNonRecoverableToolError stops at the fatal call, throwIfNonRecoverable rethrows the genuine error", async () => {
    const model = new MockLanguageModelV4({ doGenerate: [toolCall("call-b", "burn", {}), answer("I will just keep going")] });
    const run = generateText({
      model,
      tools: toAiSdkTools(new ToolRegistry([burn])),
      prompt: "burn",
      stopWhen: [isStepCount(5), hasNonRecoverableToolError],
    });
    const error = await run.then(throwIfNonRecoverable).catch((caught: unknown) => caught);
    expect(error).toBe(fatal);
    // The model was never asked for a next step.
    expect(model.doGenerateCalls).toHaveLength(1);
  });

  it("without the stop condition the SDK shows the model the error and goes on (what the helpers are for)", async () => {
    const model = new MockLanguageModelV4({ doGenerate: [toolCall("call-b", "burn", {}), answer("I will just keep going")] });
    const result = await generateText({ model, tools: toAiSdkTools(new ToolRegistry([burn])), prompt: "burn", stopWhen: isStepCount(5) });
    expect(result.text).toBe("I will just keep going");
    expect(model.doGenerateCalls).toHaveLength(2);
    // The helper still finds the fatal error in the finished run.
    expect(() => throwIfNonRecoverable(result)).toThrow(fatal);
  });

  it("streamText: the stream stops at the fatal call and the app rethrows the genuine error from the steps", async () => {
    const model = new MockLanguageModelV4({
      doStream: [
        {
          stream: convertArrayToReadableStream([
            { type: "tool-call", toolCallId: "call-b", toolName: "burn", input: "{}" },
            { type: "finish", finishReason: { unified: "tool-calls", raw: undefined }, usage },
          ]),
        },
      ],
    });
    const result = streamText({
      model,
      tools: toAiSdkTools(new ToolRegistry([burn])),
      prompt: "burn",
      stopWhen: [isStepCount(5), hasNonRecoverableToolError],
    });
    const errors: unknown[] = [];
    for await (const part of result.fullStream) if (part.type === "tool-error") errors.push(part.error);
    expect(errors).toEqual([fatal]);
    expect(() => throwIfNonRecoverable({ steps: [] })).not.toThrow();
    const steps = await result.steps;
    expect(() => throwIfNonRecoverable({ steps })).toThrow(fatal);
    expect(model.doStreamCalls).toHaveLength(1);
  });

  it("an ordinary error result does not stop the run", async () => {
    const model = new MockLanguageModelV4({ doGenerate: [toolCall("call-1", "add", { left: "x", right: 1 }), answer("sorry")] });
    const result = throwIfNonRecoverable(
      await generateText({
        model,
        tools: toAiSdkTools(new ToolRegistry([add])),
        prompt: "add",
        stopWhen: [isStepCount(5), hasNonRecoverableToolError],
      }),
    );
    expect(result.text).toBe("sorry");
  });
});

describe("docs/adapters.md — Use it with the Vercel AI SDK: approval through the SDK's own flow", () => {
  function transfer() {
    const asked: unknown[] = [];
    const { moved: executed, tool } = transferTool();
    const tools = toAiSdkTools(new ToolRegistry([tool, add]), {
      needsApproval: (request) => {
        asked.push(request);
        return request.toolName === "transfer";
      },
    });
    return { tools, executed, asked };
  }

  /** First turn: the model calls transfer; the SDK stops with an approval request. */
  async function firstTurn(tools: ReturnType<typeof toAiSdkTools>, model: MockLanguageModelV4) {
    const result = await generateText({ model, tools, prompt: "pay", stopWhen: isStepCount(5) });
    const requests = result.content.filter((part) => part.type === "tool-approval-request");
    return { result, requests };
  }

  it("a call that needs approval emits a tool-approval-request; approved, it runs through toolgate", async () => {
    const { tools, executed, asked } = transfer();
    const model = new MockLanguageModelV4({ doGenerate: [toolCall("call-t", "transfer", { to: "alice" }), answer("paid")] });
    const { result, requests } = await firstTurn(tools, model);
    expect(requests).toHaveLength(1);
    expect(requests[0]?.toolCall).toMatchObject({ toolCallId: "call-t", toolName: "transfer", input: { to: "alice" } });
    expect(asked).toEqual([{ toolCallId: "call-t", toolName: "transfer", arguments: { to: "alice" } }]);
    expect(executed).toEqual([]);
    const messages: ModelMessage[] = [
      { role: "user", content: "pay" },
      ...result.response.messages,
      { role: "tool", content: [{ type: "tool-approval-response", approvalId: requests[0]?.approvalId as string, approved: true }] },
    ];
    const second = await generateText({ model, tools, messages, stopWhen: isStepCount(5) });
    expect(second.text).toBe("paid");
    expect(executed).toEqual(["alice"]);
    expect(toolResultsSeen(model.doGenerateCalls[1] as CallOptions)).toEqual([["call-t", { type: "text", value: "moved to alice" }]]);
  });

  it("denied, the call never runs and the model reads TOOL_CALL_DENIED", async () => {
    const { tools, executed } = transfer();
    const model = new MockLanguageModelV4({ doGenerate: [toolCall("call-t", "transfer", { to: "alice" }), answer("not paid")] });
    const { result, requests } = await firstTurn(tools, model);
    const messages: ModelMessage[] = [
      { role: "user", content: "pay" },
      ...result.response.messages,
      {
        role: "tool",
        content: [
          {
            type: "tool-approval-response",
            approvalId: requests[0]?.approvalId as string,
            approved: false,
            reason: toolCallDenied("the account owner said no"),
          },
        ],
      },
    ];
    const second = await generateText({ model, tools, messages, stopWhen: isStepCount(5) });
    expect(second.text).toBe("not paid");
    expect(executed).toEqual([]);
    expect(toolResultsSeen(model.doGenerateCalls[1] as CallOptions)).toEqual([
      [
        "call-t",
        {
          type: "execution-denied",
          reason: JSON.stringify({ error: { code: "TOOL_CALL_DENIED", message: "the account owner said no" } }),
        },
      ],
    ]);
  });

  it("a call the predicate lets through, or a predicate that throws", async () => {
    const executed: string[] = [];
    const echo = defineTool({
      name: "echo",
      description: "Echoes.",
      parameters: z.object({ text: z.string() }),
      execute: ({ text }) => {
        executed.push(text);
        return text;
      },
    });
    const tools = toAiSdkTools(new ToolRegistry([echo]), {
      needsApproval: ({ arguments: args }) => {
        if ((args as { text?: unknown }).text === "boom") throw new Error("policy store down");
        if ((args as { text?: unknown }).text === "maybe") return "no" as never; // not a boolean: asks
        return false;
      },
    });
    const model = new MockLanguageModelV4({
      doGenerate: [
        {
          ...toolCall("e-1", "echo", { text: "hi" }),
          content: [
            { type: "tool-call", toolCallId: "e-1", toolName: "echo", input: JSON.stringify({ text: "hi" }) },
            { type: "tool-call", toolCallId: "e-2", toolName: "echo", input: JSON.stringify({ text: "boom" }) },
            { type: "tool-call", toolCallId: "e-3", toolName: "echo", input: JSON.stringify({ text: "maybe" }) },
          ],
        },
        answer("never"),
      ],
    });
    const result = await generateText({ model, tools, prompt: "echo", stopWhen: isStepCount(5) });
    // "hi" ran without approval; "boom" (a throw) and "maybe" (not a boolean) failed closed: they wait for a person.
    expect(executed).toEqual(["hi"]);
    expect(result.content.filter((part) => part.type === "tool-approval-request").map((part) => part.toolCall.toolCallId)).toEqual([
      "e-2",
      "e-3",
    ]);
  });

  it("toolCallDenied reads as a beforeExecute denial: an empty reason is the generic text, a long one is cut", () => {
    expect(JSON.parse(toolCallDenied(""))).toEqual({ error: { code: "TOOL_CALL_DENIED", message: "the call was denied" } });
    // Cut as the executor cuts a denial's reason: at most 4096 code points of it, then the truncation marker.
    const long = toolCallDenied("n".repeat(10_000));
    expect(long.startsWith('{"error":{"code":"TOOL_CALL_DENIED","message":"nnnn')).toBe(true);
    expect(long.length).toBeLessThan(4096 + 100);
  });

  it("needsApproval must be a function", () => {
    expect(() => toAiSdkTools(new ToolRegistry([add]), { needsApproval: true as never })).toThrow(
      /options\.needsApproval must be a function/,
    );
  });
});
