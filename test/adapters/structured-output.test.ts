// Structured output in the frameworks that have it (docs/adapters.md — MCP, Use it with the
// Vercel AI SDK): MCP's `outputSchema` in tools/list and `structuredContent` in results, checked
// by the SDK's own Client; the AI SDK's `outputSchema`, and the output object it is checked against.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { defineTool, ToolRegistry } from "toolgate";
import { toAiSdkTools } from "toolgate/ai-sdk";
import { createMcpServer } from "toolgate/mcp";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";

const noArgs = z.object({});
const registry = new ToolRegistry([
  defineTool({
    name: "weather",
    description: "The weather.",
    parameters: noArgs,
    outputSchema: z.object({ celsius: z.number(), sky: z.enum(["clear", "cloudy"]) }),
    execute: () => ({ celsius: 21.5, sky: "clear" as const }),
  }),
  defineTool({ name: "count", description: "A number.", parameters: noArgs, outputSchema: z.number(), execute: () => 3 }),
  defineTool({
    name: "huge",
    description: "An object over the content budget.",
    parameters: noArgs,
    outputSchema: z.object({ text: z.string() }),
    execute: () => ({ text: "x".repeat(5000) }),
  }),
  defineTool({ name: "plain", description: "No output schema.", parameters: noArgs, execute: () => ({ a: 1 }) }),
]);

const open: Client[] = [];
afterAll(async () => {
  for (const client of open.splice(0)) await client.close();
});

async function mcpClient(): Promise<Client> {
  const server = createMcpServer(registry, { name: "structured", version: "1.0.0" });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: "c", version: "1.0.0" });
  await client.connect(clientTransport);
  open.push(client);
  return client;
}

describe("docs/adapters.md — MCP: structured output", () => {
  it("tools/list publishes an object outputSchema; a tool whose output is not an object, or that declares none, has none", async () => {
    const client = await mcpClient();
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(byName.weather?.outputSchema).toMatchObject({
      type: "object",
      properties: { celsius: { type: "number" }, sky: { enum: ["clear", "cloudy"] } },
      required: ["celsius", "sky"],
    });
    expect(byName.count && "outputSchema" in byName.count).toBe(false);
    expect(byName.plain && "outputSchema" in byName.plain).toBe(false);
  });

  it("a result carries structuredContent beside its text, which the SDK's Client checks against the outputSchema", async () => {
    const client = await mcpClient();
    await client.listTools(); // the Client caches the output schemas it then checks results against
    const reply = await client.callTool({ name: "weather", arguments: {} });
    expect(reply).toEqual({
      content: [{ type: "text", text: '{"celsius":21.5,"sky":"clear"}' }],
      structuredContent: { celsius: 21.5, sky: "clear" },
      isError: false,
    });
    const plain = await client.callTool({ name: "plain", arguments: {} });
    expect("structuredContent" in plain).toBe(false);
  });

  it("an output over the content budget cannot be sent whole: a TOOL_OUTPUT_SERIALIZATION_FAILED error result, never a cut object", async () => {
    const client = await mcpClient();
    await client.listTools();
    const reply = (await client.callTool({ name: "huge", arguments: {} })) as { isError: boolean; content: { text: string }[] };
    expect(reply.isError).toBe(true);
    expect(JSON.parse(reply.content[0]?.text ?? "")).toEqual({
      error: {
        code: "TOOL_OUTPUT_SERIALIZATION_FAILED",
        message: "the output is over the content budget, so it cannot be sent whole as structured output",
      },
    });
    expect("structuredContent" in reply).toBe(false);
  });
});

describe("docs/adapters.md — Use it with the Vercel AI SDK: structured output", () => {
  it("a tool with an object outputSchema has the SDK's outputSchema; its output is the object, shown to the model as json", async () => {
    const tools = toAiSdkTools(registry);
    const weather = tools.weather;
    expect((weather?.outputSchema as { jsonSchema?: unknown } | undefined)?.jsonSchema).toMatchObject({
      type: "object",
      required: ["celsius", "sky"],
    });
    expect(tools.count?.outputSchema).toBeUndefined();
    expect(tools.plain?.outputSchema).toBeUndefined();
    if (weather?.execute === undefined) throw new Error("no execute");
    const outputs: unknown[] = [];
    for await (const output of weather.execute({}, { toolCallId: "w-1", messages: [] } as never) as AsyncIterable<unknown>)
      outputs.push(output);
    expect(outputs).toEqual([{ celsius: 21.5, sky: "clear" }]);
    expect(await weather.toModelOutput?.({ toolCallId: "w-1", input: {}, output: outputs[0] as never })).toEqual({
      type: "json",
      value: { celsius: 21.5, sky: "clear" },
    });
  });

  it("an output over the content budget is thrown as an error result (the SDK's tool-error), never a cut object", async () => {
    const huge = toAiSdkTools(registry).huge;
    const execute = huge?.execute;
    if (execute === undefined) throw new Error("no execute");
    const run = async () => {
      for await (const _ of execute({}, { toolCallId: "h-1", messages: [] } as never) as AsyncIterable<unknown>);
    };
    await expect(run()).rejects.toMatchObject({
      name: "ToolgateToolError",
      result: { toolCallId: "h-1", toolName: "huge", isError: true },
    });
  });
});
