// toolgate/mastra end to end: a Mastra Agent's own loop (generate and stream) over toolgate
// tools, with a scripted AI SDK language model (specification v2, which @mastra/core 1.x
// accepts) of ours playing the model and recording every request.
// docs/adapters.md — Use it with Mastra.
//
// Mastra 1.x declares node >= 22.13: the suite runs under Node 22 and 24 (the CI legs that run
// vitest there) and is reported as skipped, with that reason in its title, under Node 20.
import {
  ContractErrorCode,
  defineTool,
  describeTools,
  imageContent,
  NonRecoverableToolError,
  type ToolProgress,
  ToolRegistry,
  withAttachments,
} from "toolgate";
import { toMastraTools } from "toolgate/mastra";
import { WorkerToolExecutor } from "toolgate/worker";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { MASTRA_UNAVAILABLE, mastraAgent, scriptedModel } from "../support/adapter-contract/mastra.js";

const MASTRA_RUNS_HERE = MASTRA_UNAVAILABLE === undefined;

function catchError(run: () => void): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

const add = defineTool({
  name: "add",
  description: "Adds two numbers.",
  parameters: z.object({ left: z.number(), right: z.number() }),
  execute: ({ left, right }) => left + right,
});

describe.skipIf(!MASTRA_RUNS_HERE)(
  `docs/adapters.md — Use it with Mastra: toMastraTools with a Mastra Agent (runs on Node >= 22.13, which @mastra/core 1.71 requires; this is Node ${process.versions.node})`,
  () => {
    it("a wrong call, then a corrected call, then an answer; the model reads toolgate's error and the result", async () => {
      const scripted = scriptedModel([
        { calls: [{ name: "add", args: { left: "two", right: 3 }, id: "call-1" }] },
        { calls: [{ name: "add", args: { left: 2, right: 3 }, id: "call-2" }] },
        { text: "2 + 3 = 5" },
      ]);
      const registry = new ToolRegistry([add]);
      const agent = await mastraAgent(scripted.model, registry);
      const output = await agent.generate("What is 2 + 3?", { maxSteps: 5 });
      expect(output.text).toBe("2 + 3 = 5");
      expect(scripted.prompts).toHaveLength(3);
      // The model was shown describeTools' JSON Schema, which Mastra labels draft-07.
      const { $schema: _label, ...parameters } = (describeTools(registry)[0] as { parameters: Record<string, unknown> }).parameters;
      expect(scripted.tools[0]).toEqual([
        expect.objectContaining({
          type: "function",
          name: "add",
          description: "Adds two numbers.",
          inputSchema: { $schema: "http://json-schema.org/draft-07/schema#", ...parameters },
        }),
      ]);
      expect(scripted.toolResultsSeen(1)).toEqual([
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
      expect(scripted.toolResultsSeen(2).at(-1)).toEqual(["call-2", { type: "text", value: "5" }]);
    });

    it("stream: progress reaches the tool's writer (tool-output chunks) and onProgress; images reach the model as media parts", async () => {
      const count = defineTool({
        name: "count",
        description: "Counts to three, reporting progress.",
        parameters: z.object({}),
        execute: async (_args, { reportProgress }) => {
          reportProgress({ progress: 1, total: 3, message: "one" });
          await new Promise((resolve) => setTimeout(resolve, 80));
          return 3;
        },
      });
      const chart = defineTool({
        name: "chart",
        description: "Draws a chart.",
        parameters: z.object({}),
        execute: () => withAttachments("a chart", [imageContent(new Uint8Array([137, 80, 78, 71]), "image/png")]),
      });
      const scripted = scriptedModel([
        {
          calls: [
            { name: "count", args: {}, id: "call-c" },
            { name: "chart", args: {}, id: "call-i" },
          ],
        },
        { text: "done" },
      ]);
      const reports: ToolProgress[] = [];
      const agent = await mastraAgent(scripted.model, new ToolRegistry([count, chart]), {
        onProgress: (progress) => reports.push(progress),
      });
      const stream = await agent.stream("go", { maxSteps: 3 });
      const outputs: unknown[] = [];
      for await (const chunk of stream.fullStream) {
        if (chunk.type === "tool-output") outputs.push((chunk.payload as { output?: unknown }).output);
      }
      const report = { toolCallId: "call-c", toolName: "count", progress: 1, total: 3, message: "one" };
      expect(outputs).toEqual([{ type: "toolgate_progress", progress: report }]);
      expect(reports).toEqual([report]);
      expect(scripted.toolResultsSeen(1)).toEqual([
        ["call-c", { type: "text", value: "3" }],
        [
          "call-i",
          {
            type: "content",
            value: [
              { type: "text", text: "a chart" },
              { type: "media", data: Buffer.from([137, 80, 78, 71]).toString("base64"), mediaType: "image/png" },
            ],
          },
        ],
      ]);
    });

    it("a NonRecoverableToolError ends the run when onNonRecoverableError aborts it; the signal gives the app the genuine error", async () => {
      const fatal = defineTool({
        name: "fatal",
        description: "Fails for good.",
        parameters: z.object({}),
        execute: () => {
          throw new NonRecoverableToolError("the disk is gone");
        },
      });
      const scripted = scriptedModel([{ calls: [{ name: "fatal", args: {}, id: "call-f" }] }, { text: "never" }]);
      const controller = new AbortController();
      const seen: [unknown, string][] = [];
      const agent = await mastraAgent(scripted.model, new ToolRegistry([fatal]), {
        onNonRecoverableError: (error, toolCallId) => {
          seen.push([error, toolCallId]);
          controller.abort(error);
        },
      });
      // Mastra ends an aborted run quietly (generate resolves, its onAbort fires); the signal
      // holds the genuine error, which the documented check after the run rethrows.
      await agent.generate("go", { maxSteps: 3, abortSignal: controller.signal });
      const error = catchError(() => controller.signal.throwIfAborted());
      expect(error).toBeInstanceOf(NonRecoverableToolError);
      expect((error as Error).message).toBe("the disk is gone");
      expect(seen).toEqual([[error, "call-f"]]);
      expect(scripted.prompts).toHaveLength(1);
    });

    it("without onNonRecoverableError, Mastra shows the model the fatal error and goes on", async () => {
      const fatal = defineTool({
        name: "fatal",
        description: "Fails for good.",
        parameters: z.object({}),
        execute: () => {
          throw new NonRecoverableToolError("the disk is gone");
        },
      });
      const scripted = scriptedModel([{ calls: [{ name: "fatal", args: {}, id: "call-f" }] }, { text: "went on" }]);
      const output = await (await mastraAgent(scripted.model, new ToolRegistry([fatal]))).generate("go", { maxSteps: 3 });
      expect(output.text).toBe("went on");
      expect(scripted.toolResultsSeen(1)).toEqual([["call-f", { type: "error-text", value: "the disk is gone" }]]);
    });

    describe("a spinning tool in a WorkerToolExecutor, aborted", () => {
      let executor: WorkerToolExecutor;
      beforeAll(async () => {
        executor = await WorkerToolExecutor.create({
          modules: [new URL("../fixtures/framework-e2e-tools.mjs", import.meta.url).href],
          minThreads: 1,
          maxThreads: 1,
          abortGraceMs: 100,
        });
      });
      afterAll(() => executor?.close());

      it("generate ends at once (Mastra resolves an aborted run); the model is not called again; the pool runs the next call", async () => {
        const scripted = scriptedModel([{ calls: [{ name: "spin", args: {}, id: "call-s" }] }, { text: "never" }]);
        const controller = new AbortController();
        const reason = new Error("the user left");
        const agent = await mastraAgent(scripted.model, executor, { onProgress: () => controller.abort(reason) });
        const started = Date.now();
        const output = await agent.generate("spin", { maxSteps: 3, abortSignal: controller.signal });
        // The run stopped at the aborted call: no result of it, no further request.
        expect(output.toolResults).toEqual([]);
        expect(catchError(() => controller.signal.throwIfAborted())).toBe(reason);
        expect(Date.now() - started).toBeLessThan(10_000);
        expect(scripted.prompts).toHaveLength(1);
        const next = await executor.executeToolCall(
          { type: "toolCall", id: "after", name: "add", arguments: { left: 1, right: 2 } },
          new AbortController().signal,
        );
        expect(next.content).toBe("3");
      });
    });

    it("options: refuses what it cannot use", () => {
      const registry = new ToolRegistry([add]);
      expect(() => toMastraTools({} as Parameters<typeof toMastraTools>[0])).toThrow(
        expect.objectContaining({ code: ContractErrorCode.INVALID_ARGUMENT }),
      );
      expect(() => toMastraTools(registry, { onNonRecoverableError: "no" as unknown as () => void })).toThrow(
        expect.objectContaining({ code: ContractErrorCode.INVALID_ARGUMENT }),
      );
      expect(() => toMastraTools(registry, { onProgress: 1 as unknown as () => void })).toThrow(
        expect.objectContaining({ code: ContractErrorCode.INVALID_ARGUMENT }),
      );
    });
  },
);
