// Issue 45 §3: audio and files in each framework's own parts where it has them, and said plainly
// where it has none (docs/adapters.md — What each framework carries). Each adapter is driven
// through its tool's own entry point over one registry; MCP through the SDK's own Client, so the
// blocks are checked as a client parses them (CallToolResultSchema).
import { Buffer } from "node:buffer";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { RunContext } from "@openai/agents";
import { audioContent, defineTool, fileContent, imageContent, resourceLink, ToolRegistry, withAttachments } from "toolgate";
import { toAiSdkTools } from "toolgate/ai-sdk";
import { toLangChainTools } from "toolgate/langchain";
import { toMastraTools } from "toolgate/mastra";
import { createMcpServer } from "toolgate/mcp";
import { toOpenAiAgentsTools } from "toolgate/openai-agents";
import { toPiAgentTool } from "toolgate/pi";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { PDF_TEXT, PNG_BYTES, WAV_BYTES } from "../../dist/test/fixtures/media-tools.js";
import { MASTRA_UNAVAILABLE } from "../support/adapter-contract/mastra.js";

const png = new Uint8Array(PNG_BYTES);
const wav = new Uint8Array(WAV_BYTES);
const pdf = new TextEncoder().encode(PDF_TEXT);
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");
const JSON_TEXT = '{"test":"data","value":123}';

const registry = new ToolRegistry([
  defineTool({
    name: "media",
    description: "Returns an image, a sound, a PDF and a JSON document.",
    parameters: z.object({}),
    execute: () =>
      withAttachments("four parts", [
        imageContent(png, "image/png"),
        audioContent(wav, "audio/wav"),
        fileContent(pdf, { mimeType: "application/pdf", name: "report.pdf", uri: "https://example.com/report.pdf" }),
        fileContent(new TextEncoder().encode(JSON_TEXT), { mimeType: "application/json" }),
      ]),
  }),
]);

const open: Client[] = [];
afterAll(async () => {
  for (const client of open.splice(0)) await client.close();
});

describe("docs/adapters.md — What each framework carries", () => {
  it("MCP: an image block, an audio block, and each file an embedded resource (a PDF as blob, text as text)", async () => {
    const server = createMcpServer(registry, { name: "media", version: "1.0.0" });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await server.connect(serverTransport);
    const client = new Client({ name: "c", version: "1.0.0" });
    await client.connect(clientTransport);
    open.push(client);
    const reply = await client.callTool({ name: "media", arguments: {} });
    expect(reply).toEqual({
      isError: false,
      content: [
        { type: "text", text: "four parts" },
        { type: "image", data: base64(png), mimeType: "image/png" },
        { type: "audio", data: base64(wav), mimeType: "audio/wav" },
        { type: "resource", resource: { uri: "https://example.com/report.pdf", mimeType: "application/pdf", blob: base64(pdf) } },
        { type: "resource", resource: { uri: "toolgate:attachment/4", mimeType: "application/json", text: JSON_TEXT } },
      ],
    });
  });

  it("AI SDK: the output keeps images apart from audio and files; the model sees a file part for each, a file's name as its filename", async () => {
    const tool = toAiSdkTools(registry).media;
    if (tool?.execute === undefined) throw new Error("the AI SDK tool has no execute");
    const outputs: unknown[] = [];
    for await (const output of tool.execute({}, { toolCallId: "ai-1", messages: [] } as never) as AsyncIterable<unknown>)
      outputs.push(output);
    const output = outputs.at(-1);
    expect(output).toEqual({
      type: "content",
      text: "four parts",
      images: [{ type: "image", data: base64(png), mimeType: "image/png" }],
      files: [
        { type: "audio", data: base64(wav), mimeType: "audio/wav" },
        { type: "file", data: base64(pdf), mimeType: "application/pdf", name: "report.pdf", uri: "https://example.com/report.pdf" },
        { type: "file", data: expect.any(String), mimeType: "application/json", text: JSON_TEXT },
      ],
    });
    expect(JSON.parse(JSON.stringify(output))).toEqual(output); // stays JSON, as stored UI messages need
    const seen = await tool?.toModelOutput?.({ toolCallId: "ai-1", input: {}, output: output as never });
    expect(seen).toEqual({
      type: "content",
      value: [
        { type: "text", text: "four parts" },
        { type: "file", mediaType: "image/png", data: { type: "data", data: base64(png) } },
        { type: "file", mediaType: "audio/wav", data: { type: "data", data: base64(wav) } },
        { type: "file", mediaType: "application/pdf", data: { type: "data", data: base64(pdf) }, filename: "report.pdf" },
        { type: "file", mediaType: "application/json", data: { type: "data", data: expect.any(String) } },
      ],
    });
  });

  it("OpenAI Agents: images and files as the SDK's image and file outputs; audio, which it cannot carry, as a text part saying so", async () => {
    const [tool] = toOpenAiAgentsTools(registry);
    const output = await tool?.invoke(new RunContext(), "{}");
    expect(output).toEqual([
      { type: "text", text: "four parts" },
      { type: "image", image: { data: base64(png), mediaType: "image/png" } },
      { type: "text", text: "[audio attachment (audio/wav) not carried: OpenAI Agents tool results cannot hold audio]" },
      { type: "file", file: { data: base64(pdf), mediaType: "application/pdf", filename: "report.pdf" } },
      { type: "file", file: { data: expect.any(String), mediaType: "application/json", filename: "attachment-4" } },
    ]);
  });

  it("LangChain: standard image, audio and file content blocks, a file's name and URI in its metadata", async () => {
    const [tool] = toLangChainTools(registry);
    const message = (await tool?.invoke({ id: "lc-1", name: "media", args: {}, type: "tool_call" })) as { content: unknown };
    expect(message.content).toEqual([
      { type: "text", text: "four parts" },
      { type: "image", data: base64(png), mimeType: "image/png" },
      { type: "audio", data: base64(wav), mimeType: "audio/wav" },
      {
        type: "file",
        data: base64(pdf),
        mimeType: "application/pdf",
        metadata: { name: "report.pdf", uri: "https://example.com/report.pdf" },
      },
      { type: "file", data: expect.any(String), mimeType: "application/json" },
    ]);
  });

  it("Pi: images as image blocks, a text file as its text; audio and a PDF, which Pi's results cannot hold, as text saying so", async () => {
    const result = await toPiAgentTool(registry, "media").execute("pi-1", {});
    expect(result.content).toEqual([
      { type: "text", text: "four parts" },
      { type: "image", data: base64(png), mimeType: "image/png" },
      { type: "text", text: "[audio attachment (audio/wav) not carried: Pi tool results cannot hold audio]" },
      { type: "text", text: '[file attachment "report.pdf" (application/pdf) not carried: Pi tool results cannot hold files]' },
      { type: "text", text: `[file (application/json)]\n${JSON_TEXT}` },
    ]);
  });

  it.skipIf(MASTRA_UNAVAILABLE !== undefined)(
    `Mastra: a media part for each image, audio and file${MASTRA_UNAVAILABLE === undefined ? "" : ` (does not run here: ${MASTRA_UNAVAILABLE})`}`,
    async () => {
      const tool = toMastraTools(registry).media as unknown as {
        toModelOutput: (output: unknown) => unknown;
        execute: (...args: unknown[]) => Promise<unknown>;
      };
      const output = await tool.execute({}, { agent: { toolCallId: "m-1", messages: [], suspend: async () => {} } });
      expect(tool.toModelOutput(output)).toEqual({
        type: "content",
        value: [
          { type: "text", text: "four parts" },
          { type: "media", data: base64(png), mediaType: "image/png" },
          { type: "media", data: base64(wav), mediaType: "audio/wav" },
          { type: "media", data: base64(pdf), mediaType: "application/pdf" },
          { type: "media", data: expect.any(String), mediaType: "application/json" },
        ],
      });
    },
  );
});

const REPORT = { uri: "https://example.com/q3.pdf", name: "q3.pdf", mimeType: "application/pdf", description: "The Q3 report" } as const;
const SOURCE = { uri: "file:///project/src/main.rs", name: "main.rs" } as const;
const REPORT_LINE = '[resource link "q3.pdf" (application/pdf) https://example.com/q3.pdf: The Q3 report]';
const SOURCE_LINE = '[resource link "main.rs" file:///project/src/main.rs]';
const linking = new ToolRegistry([
  defineTool({
    name: "links",
    description: "Returns an image and two resource links.",
    parameters: z.object({}),
    execute: () => withAttachments("two links", [resourceLink(REPORT), imageContent(png, "image/png"), resourceLink(SOURCE)]),
  }),
]);

describe("docs/adapters.md — resource links in each framework", () => {
  it("MCP: each link a resource_link after the attachments, as the SDK's Client parses it", async () => {
    const server = createMcpServer(linking, { name: "links", version: "1.0.0" });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await server.connect(serverTransport);
    const client = new Client({ name: "c", version: "1.0.0" });
    await client.connect(clientTransport);
    open.push(client);
    const reply = await client.callTool({ name: "links", arguments: {} });
    expect(reply).toEqual({
      isError: false,
      content: [
        { type: "text", text: "two links" },
        { type: "image", data: base64(png), mimeType: "image/png" },
        { type: "resource_link", ...REPORT },
        { type: "resource_link", ...SOURCE },
      ],
    });
  });

  it("AI SDK: the output lists the links; the model reads each as a text line", async () => {
    const tool = toAiSdkTools(linking).links;
    if (tool?.execute === undefined) throw new Error("the AI SDK tool has no execute");
    const outputs: unknown[] = [];
    for await (const output of tool.execute({}, { toolCallId: "ai-2", messages: [] } as never) as AsyncIterable<unknown>)
      outputs.push(output);
    const output = outputs.at(-1);
    expect(output).toEqual({
      type: "content",
      text: "two links",
      images: [{ type: "image", data: base64(png), mimeType: "image/png" }],
      links: [
        { type: "resourceLink", ...REPORT },
        { type: "resourceLink", ...SOURCE },
      ],
    });
    const seen = await tool?.toModelOutput?.({ toolCallId: "ai-2", input: {}, output: output as never });
    expect(seen).toEqual({
      type: "content",
      value: [
        { type: "text", text: "two links" },
        { type: "file", mediaType: "image/png", data: { type: "data", data: base64(png) } },
        { type: "text", text: REPORT_LINE },
        { type: "text", text: SOURCE_LINE },
      ],
    });
  });

  it("OpenAI Agents, LangChain and Pi: a text part naming each link, after the attachments", async () => {
    const [agentsTool] = toOpenAiAgentsTools(linking);
    expect(await agentsTool?.invoke(new RunContext(), "{}")).toEqual([
      { type: "text", text: "two links" },
      { type: "image", image: { data: base64(png), mediaType: "image/png" } },
      { type: "text", text: REPORT_LINE },
      { type: "text", text: SOURCE_LINE },
    ]);
    const [langChainTool] = toLangChainTools(linking);
    const message = (await langChainTool?.invoke({ id: "lc-2", name: "links", args: {}, type: "tool_call" })) as { content: unknown };
    expect(message.content).toEqual([
      { type: "text", text: "two links" },
      { type: "image", data: base64(png), mimeType: "image/png" },
      { type: "text", text: REPORT_LINE },
      { type: "text", text: SOURCE_LINE },
    ]);
    const pi = await toPiAgentTool(linking, "links").execute("pi-2", {});
    expect(pi.content).toEqual([
      { type: "text", text: "two links" },
      { type: "image", data: base64(png), mimeType: "image/png" },
      { type: "text", text: REPORT_LINE },
      { type: "text", text: SOURCE_LINE },
    ]);
  });

  it.skipIf(MASTRA_UNAVAILABLE !== undefined)(
    `Mastra: the output lists the links; the model reads each as a text line${MASTRA_UNAVAILABLE === undefined ? "" : ` (does not run here: ${MASTRA_UNAVAILABLE})`}`,
    async () => {
      const tool = toMastraTools(linking).links as unknown as {
        toModelOutput: (output: unknown) => unknown;
        execute: (...args: unknown[]) => Promise<unknown>;
      };
      const output = await tool.execute({}, { agent: { toolCallId: "m-2", messages: [], suspend: async () => {} } });
      expect(output).toMatchObject({
        links: [
          { type: "resourceLink", ...REPORT },
          { type: "resourceLink", ...SOURCE },
        ],
      });
      expect(tool.toModelOutput(output)).toEqual({
        type: "content",
        value: [
          { type: "text", text: "two links" },
          { type: "media", data: base64(png), mediaType: "image/png" },
          { type: "text", text: REPORT_LINE },
          { type: "text", text: SOURCE_LINE },
        ],
      });
    },
  );
});
