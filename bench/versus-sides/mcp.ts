// The MCP side of the versus rows (bench/cases/versus.ts, bench/instructions/rows.ts): a client
// over the SDK's in-memory transport, the user's own server, and one tool call.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { pingArguments, versusPing } from "../versus-tools.js";

/** A client connected to `server` over the SDK's in-memory transport pair. */
export async function mcpClient(server: Server | McpServer): Promise<Client> {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: "bench-client", version: "1.0.0" });
  await client.connect(clientTransport);
  return client;
}

/** The user's own MCP server: `registerTool` with the zod shape, the output as JSON text. */
export function mcpOwnServer(execute: (input: { n: number }) => unknown): McpServer {
  const server = new McpServer({ name: "bench-peer", version: "1.0.0" });
  server.registerTool("ping", { description: versusPing.description, inputSchema: pingArguments.shape }, async (input) => ({
    content: [{ type: "text", text: JSON.stringify(await execute(input)) }],
  }));
  return server;
}

export async function mcpCall(client: Client): Promise<unknown> {
  const result = await client.callTool({ name: "ping", arguments: { n: 1 } });
  const content = result.content as { type: string; text?: string }[] | undefined;
  return result.isError === true ? result : content?.[0]?.text;
}
