// The MCP row of the adapter contract suite. MCP has no agent loop of its own: the MCP SDK's
// Client, over the SDK's InMemoryTransport, is what an agent's loop calls, so a "step" is the
// model's calls sent as tools/call requests side by side, and what the model reads is each
// CallToolResult's text (or the JSON-RPC error the client got). The run goes on when the same
// session still answers afterwards.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { createMcpServer } from "toolgate/mcp";
import {
  type AdapterDriver,
  type ModelCall,
  type ModelRead,
  type ReadPart,
  readOf,
  rejectionOf,
  type Source,
  textParts,
} from "./driver.js";

const IDENTITY = { name: "toolgate-contract", version: "1.0.0" };
/**
 * A request the server never answers (a tool that made its request's signal read as aborted:
 * the SDK then sends nothing) fails after this long instead of the SDK's 60 s.
 */
const REQUEST_TIMEOUT_MS = 5000;

/** A client connected to a server for `source`; closed by `close`. */
async function connect(source: Source): Promise<Client> {
  const server = createMcpServer(source, IDENTITY);
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: "contract-client", version: "1.0.0" });
  await client.connect(clientTransport);
  return client;
}

/** A call's CallToolResult content, part by part: a resource_link with its fields. */
function partsOf(content: readonly { type: string; text?: unknown }[]): ReadPart[] {
  return content.map((block) => (block.type === "resource_link" ? { ...block } : (textParts([block])[0] as ReadPart)));
}

/** A call's CallToolResult text and parts, or the JSON-RPC error the client got for it. */
async function read(client: Client, { id, name, args }: ModelCall, signal?: AbortSignal): Promise<ModelRead & { parts: ReadPart[] }> {
  try {
    const result = await client.callTool({ name, arguments: args as Record<string, unknown> }, undefined, {
      timeout: REQUEST_TIMEOUT_MS,
      ...(signal === undefined ? {} : { signal }),
    });
    const content = result.content as { type: string; text?: string }[];
    const parts = partsOf(content);
    return { ...readOf(id, content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("")), parts };
  } catch (error) {
    if (error instanceof McpError) {
      const text = `JSON-RPC error ${error.code}: ${error.message}`;
      return { ...readOf(id, text), parts: [{ type: "text", text }] };
    }
    throw error;
  }
}

/** The session still answers: what an MCP client's run going on needs. */
async function stillAnswers(client: Client): Promise<boolean> {
  return (await client.listTools()).tools.length > 0;
}

export const mcpDriver: AdapterDriver = {
  name: "MCP Client.callTool",
  progressOption: false,
  linkPart: true,
  answersItself: (args) =>
    typeof args === "object" && args !== null && !Array.isArray(args)
      ? undefined
      : "the MCP SDK's server refuses a tools/call whose arguments are not an object (JSON-RPC InvalidParams) before any handler runs: a malformed request is a protocol error (SEP-1303)",
  overAWire:
    "the client holds what crossed JSON-RPC: a NonRecoverableToolError as an InternalError carrying its message, an abort as the SDK's McpError carrying the reason's",
  make: (source, options) => createMcpServer(source, { ...IDENTITY, ...options }),
  async schemas(source) {
    const client = await connect(source);
    try {
      return (await client.listTools()).tools.map((tool) => tool.inputSchema as Record<string, unknown>);
    } finally {
      await client.close();
    }
  },
  async step(source, calls, options = {}) {
    const client = await connect(source);
    try {
      const reads = await Promise.all(calls.map((call) => read(client, call, options.signal)));
      return {
        read: reads.map(({ id, text, code }) => ({ id, text, code })),
        finished: await stillAnswers(client),
        parts: new Map(reads.map(({ id, parts }) => [id, parts])),
      };
    } finally {
      await client.close();
    }
  },
  async fatal(source, call) {
    const client = await connect(source);
    try {
      const error = await rejectionOf(client.callTool({ name: call.name, arguments: call.args as Record<string, unknown> }));
      return { error, modelRequests: 1 };
    } finally {
      await client.close();
    }
  },
  async aborted(source, call, signal) {
    const client = await connect(source);
    try {
      const error = await rejectionOf(
        client.callTool({ name: call.name, arguments: call.args as Record<string, unknown> }, undefined, { signal }),
      );
      return { error, modelRequests: 1 };
    } finally {
      await client.close();
    }
  },
};
