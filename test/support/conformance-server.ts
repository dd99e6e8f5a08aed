// A toolgate MCP server over Streamable HTTP (stateless: a fresh server and transport per
// request, as the SDK's stateless example does) exposing the tools the MCP conformance suite's
// tool scenarios name (test_simple_text, test_image_content, test_audio_content,
// test_embedded_resource, test_multiple_content_types, test_error_handling,
// test_tool_with_progress, json_schema_2020_12_tool), each an ordinary toolgate tool.
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { audioContent, defineTool, fileContent, imageContent, type ToolDefinition, ToolRegistry, withAttachments } from "toolgate";
import { createMcpServer } from "toolgate/mcp";
import { z } from "zod";
import { WAV_BYTES } from "../../dist/test/fixtures/media-tools.js";

/** A 1×1 red PNG. */
const RED_PIXEL = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==", "base64");
const noArgs = z.object({});
const text = (value: string) => new TextEncoder().encode(value);
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The JSON Schema 2020-12 features SEP-1613 says must reach the client as written. */
const SCHEMA_2020_12 = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  $defs: { address: { type: "object", properties: { street: { type: "string" }, city: { type: "string" } } } },
  properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
  additionalProperties: false,
};

const schema2020: ToolDefinition = {
  name: "json_schema_2020_12_tool",
  description: "Tool with JSON Schema 2020-12 features",
  validate: (args) => ({ ok: true, value: args }),
  execute: () => "ok",
  jsonSchema: SCHEMA_2020_12,
};

export const conformanceTools = new ToolRegistry([
  defineTool({
    name: "test_simple_text",
    description: "Returns simple text.",
    parameters: noArgs,
    execute: () => "This is a simple text response for testing.",
  }),
  defineTool({
    name: "test_image_content",
    description: "Returns a 1x1 red PNG.",
    parameters: noArgs,
    execute: () => imageContent(RED_PIXEL, "image/png"),
  }),
  defineTool({
    name: "test_audio_content",
    description: "Returns a short WAV sound.",
    parameters: noArgs,
    execute: () => audioContent(new Uint8Array(WAV_BYTES), "audio/wav"),
  }),
  defineTool({
    name: "test_embedded_resource",
    description: "Returns an embedded text resource.",
    parameters: noArgs,
    execute: () => fileContent(text("This is an embedded resource content."), { mimeType: "text/plain", uri: "test://embedded-resource" }),
  }),
  defineTool({
    name: "test_multiple_content_types",
    description: "Returns text, an image and an embedded resource.",
    parameters: noArgs,
    execute: () =>
      withAttachments("Multiple content types test:", [
        imageContent(RED_PIXEL, "image/png"),
        fileContent(text('{"test":"data","value":123}'), { mimeType: "application/json", uri: "test://mixed-content-resource" }),
      ]),
  }),
  defineTool({
    name: "test_error_handling",
    description: "Always fails.",
    parameters: noArgs,
    execute: () => {
      throw new Error("This tool intentionally returns an error for testing");
    },
  }),
  defineTool({
    name: "test_tool_with_progress",
    description: "Reports 0/100, 50/100 and 100/100.",
    parameters: noArgs,
    execute: async (_args, { reportProgress }) => {
      reportProgress({ progress: 0, total: 100 });
      await wait(50);
      reportProgress({ progress: 50, total: 100 });
      await wait(50);
      reportProgress({ progress: 100, total: 100 });
      return "progress reported";
    },
  }),
  defineTool(schema2020),
]);

/** Serves the tools at `http://127.0.0.1:<port>/mcp`; close() stops it. */
export async function startConformanceServer(): Promise<{ readonly url: string; readonly close: () => Promise<void> }> {
  const http: HttpServer = createServer((request, response) => {
    if (request.url !== "/mcp") {
      response.writeHead(404).end();
      return;
    }
    const server = createMcpServer(conformanceTools, { name: "toolgate-conformance", version: "1.0.0" });
    const transport = new StreamableHTTPServerTransport({}); // no sessionIdGenerator: stateless;
    response.on("close", () => {
      void transport.close();
      void server.close();
    });
    server
      .connect(transport)
      .then(() => transport.handleRequest(request, response))
      .catch(() => {
        if (!response.headersSent) response.writeHead(500).end();
      });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () => new Promise((resolve) => http.close(() => resolve())),
  };
}
