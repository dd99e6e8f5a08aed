// Type-level tests: toAiSdkTools and toMastraTools key their records by the tools' literal names
// when the tools are typed (defineTool({ name: "add", … }) into new ToolRegistry([...])), so in a
// set spread with the AI SDK's own tool()s, `activeTools` and `toolChoice` check our names as they
// check the SDK's: a misspelt one does not compile (each @ts-expect-error below fails the type
// check if the error it expects is gone). `npm run typecheck` checks this file with TypeScript
// 5.9; typed-tool-names-ts7.test.ts with TypeScript 7; vitest runs the calls once.
import { generateText, isStepCount, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { defineTool, InProcessToolExecutor, ToolRegistry } from "toolgate";
import { type ToolgateAiSdkTool, toAiSdkTools } from "toolgate/ai-sdk";
// Types alone from toolgate/mastra: @mastra/core, which it imports, does not load on Node 20.
import type { ToolgateMastraTool, toMastraTools } from "toolgate/mastra";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { answer, toolCall } from "../support/adapter-contract/ai-sdk.js";

const add = defineTool({
  name: "add",
  description: "Adds two numbers.",
  parameters: z.object({ left: z.number(), right: z.number() }),
  execute: ({ left, right }) => left + right,
});
const echo = defineTool({
  name: "echo",
  description: "Echoes.",
  validate: (args: unknown) => ({ ok: true as const, value: args }),
  jsonSchema: { type: "object" },
  execute: (args) => args,
});
const weather = tool({
  description: "The weather in a city.",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => `sunny in ${city}`,
});

describe("typed tool names: the AI SDK", () => {
  it("the record's keys are our tools' names; beside the SDK's own tools, activeTools and toolChoice take them", async () => {
    const ours = toAiSdkTools(new ToolRegistry([add, echo]));
    expectTypeOf(ours).toEqualTypeOf<Record<"add" | "echo", ToolgateAiSdkTool>>();
    const tools = { ...ours, weather };
    expectTypeOf<keyof typeof tools>().toEqualTypeOf<"add" | "echo" | "weather">();
    // toolChoice requires "add" at every step: one step, the call.
    const model = new MockLanguageModelV4({ doGenerate: [toolCall("call-1", "add", { left: 2, right: 3 })] });
    const result = await generateText({
      model,
      tools,
      activeTools: ["add", "weather"],
      toolChoice: { type: "tool", toolName: "add" },
      prompt: "What is 2 + 3?",
      stopWhen: isStepCount(1),
    });
    expect(result.steps[0]?.toolResults.map((part) => [part.toolName, part.output])).toEqual([["add", "5"]]);
    // Only the active tools were offered to the model.
    expect(model.doGenerateCalls[0]?.tools?.map((offered) => offered.name)).toEqual(["add", "weather"]);
  });

  it("a misspelt name of ours is caught where the SDK's own are (compile time: these calls are never made)", () => {
    const tools = { ...toAiSdkTools(new ToolRegistry([add, echo])), weather };
    const model = new MockLanguageModelV4({ doGenerate: [answer("no")] });
    const misspelt = () => [
      generateText({
        model,
        tools,
        // @ts-expect-error "ad" is not a tool of this set
        activeTools: ["ad"],
        prompt: "",
      }),
      generateText({
        model,
        tools,
        // @ts-expect-error "ech" is not a tool of this set
        toolChoice: { type: "tool", toolName: "ech" },
        prompt: "",
      }),
      generateText({
        model,
        tools,
        // @ts-expect-error the SDK's own are checked the same way
        activeTools: ["wether"],
        prompt: "",
      }),
    ];
    expect(typeof misspelt).toBe("function");
  });

  it("tools defined inline, or as plain definitions, keep their names too", () => {
    const inline = toAiSdkTools(
      new ToolRegistry([
        defineTool({
          name: "sum",
          description: "Sums.",
          parameters: z.object({ values: z.array(z.number()) }),
          execute: (a) => a.values.length,
        }),
        {
          name: "plain",
          description: "A plain definition.",
          validate: (a: unknown) => ({ ok: true as const, value: a }),
          jsonSchema: {},
          execute: (a: unknown) => a,
        },
      ]),
    );
    expectTypeOf(inline).toEqualTypeOf<Record<"sum" | "plain", ToolgateAiSdkTool>>();
    // @ts-expect-error "plan" is not one of them
    const misspelt = () => inline.plan;
    expect([Object.keys(inline), typeof misspelt]).toEqual([["sum", "plain"], "function"]);
  });

  it("untyped: a registry filled later keys by string, as before; an executor's names can be given", () => {
    const later = new ToolRegistry();
    later.register(add);
    expectTypeOf(toAiSdkTools(later)).toEqualTypeOf<Record<string, ToolgateAiSdkTool>>();
    const executor = new InProcessToolExecutor(new ToolRegistry([add, echo]));
    expectTypeOf(toAiSdkTools(executor)).toEqualTypeOf<Record<string, ToolgateAiSdkTool>>();
    const named = toAiSdkTools<"add" | "echo">(executor);
    expectTypeOf(named).toEqualTypeOf<Record<"add" | "echo", ToolgateAiSdkTool>>();
    // Types only: the record holds every registered tool, whatever the type says.
    expect(Object.keys(named)).toEqual(["add", "echo"]);
    // The typed record still fits where a Record<string, …> was expected.
    const loose: Record<string, ToolgateAiSdkTool> = toAiSdkTools(new ToolRegistry([add]));
    expect(Object.keys(loose)).toEqual(["add"]);
  });
});

describe("typed tool names: Mastra", () => {
  it("toMastraTools keys by the same names (compile time)", () => {
    const registry = new ToolRegistry([add, echo]);
    type Keys<T> = T extends (source: typeof registry) => infer R ? keyof R : never;
    expectTypeOf<Keys<typeof toMastraTools<"add" | "echo">>>().toEqualTypeOf<"add" | "echo">();
    expectTypeOf<ReturnType<typeof toMastraTools<"add" | "echo">>>().toEqualTypeOf<Record<"add" | "echo", ToolgateMastraTool>>();
    const make = (convert: typeof toMastraTools) => {
      const typed: Record<"add" | "echo", ToolgateMastraTool> = convert(registry);
      // @ts-expect-error "ad" is not a key of the record
      const misspelt: ToolgateMastraTool = convert(registry).ad;
      return [typed, misspelt];
    };
    expect(typeof make).toBe("function");
  });
});
