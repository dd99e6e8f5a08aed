// The README's MCP example, run from the installed tarball by test/package/pack.test.ts: from
// the first import to the "Checks" line this file is the README's code block, verbatim. The
// process must exit by itself once the client closed the connection.
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { defineTool, ToolRegistry } from "toolgate";
import { createMcpServer } from "toolgate/mcp";
import { z } from "zod";

const registry = new ToolRegistry([
  defineTool({
    name: "add",
    description: "Adds two numbers.",
    parameters: z.object({ left: z.number(), right: z.number() }),
    execute: ({ left, right }) => left + right,
  }),
]);
// A ToolRegistry runs calls in-process; pass a WorkerToolExecutor to run them in its pool.
const server = createMcpServer(registry, { name: "calculator", version: "1.0.0" });

// Any MCP transport (StdioServerTransport, StreamableHTTPServerTransport, …); here an in-memory pair.
const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
await server.connect(serverTransport);
const client = new Client({ name: "my-client", version: "1.0.0" });
await client.connect(clientTransport);

const { tools } = await client.listTools(); // tools[0].inputSchema: the JSON Schema of `parameters`
const sum = await client.callTool({ name: "add", arguments: { left: 2, right: 3 } });
// sum: { content: [{ type: "text", text: "5" }], isError: false }
const wrong = await client.callTool({ name: "add", arguments: { left: "two", right: 3 } });
// wrong.isError === true; its text is toolgate's error, which the model reads:
// {"error":{"code":"TOOL_ARGUMENTS_INVALID","message":"Invalid arguments (1 issue):\n  - $.left: Invalid input: expected number, received string"}}
await client.close();

// Checks (not in the README): what the comments above promise.

// The arguments' type is inferred from the zod schema (not `any`). The block above passes its
// definition inline, so the same definition is named here to read `execute`'s parameter.
const add = defineTool({
  name: "add",
  description: "Adds two numbers.",
  parameters: z.object({ left: z.number(), right: z.number() }),
  execute: ({ left, right }) => left + right,
});
type Exactly<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const inferred: Exactly<Parameters<typeof add.execute>[0], { left: number; right: number }> = true;
assert.equal(inferred, true);

assert.equal(tools.length, 1);
assert.equal(tools[0]?.name, "add");
assert.deepEqual(tools[0]?.inputSchema, {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: { left: { type: "number" }, right: { type: "number" } },
  required: ["left", "right"],
});
assert.deepEqual(sum, { content: [{ type: "text", text: "5" }], isError: false });
assert.equal(wrong.isError, true);
assert.deepEqual(wrong.content, [
  {
    type: "text",
    text: JSON.stringify({
      error: {
        code: "TOOL_ARGUMENTS_INVALID",
        message: "Invalid arguments (1 issue):\n  - $.left: Invalid input: expected number, received string",
      },
    }),
  },
]);
