// toolgate/mcp end to end: the MCP SDK's own Client talks to createMcpServer over the SDK's
// InMemoryTransport pair; every JSON-RPC message crossing it is recorded, so the tests check
// the wire as well as what the client API returns.
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import {
  type CallOptions,
  defineTool,
  describeTools,
  imageContent,
  isToolContractError,
  NonRecoverableToolError,
  type ToolExecutor,
  ToolRegistry,
  withAttachments,
} from "toolgate";
import { createMcpServer } from "toolgate/mcp";
import { WorkerToolExecutor } from "toolgate/worker";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { fixture, settle } from "../support/helpers.js";

interface Connection {
  readonly client: Client;
  /** JSON-RPC messages the client sent, in order. */
  readonly sent: JSONRPCMessage[];
  /** JSON-RPC messages the server sent, in order. */
  readonly received: JSONRPCMessage[];
}

const open: Client[] = [];
afterEach(async () => {
  for (const client of open.splice(0)) await client.close();
});

/** A server for `source`, connected to a fresh client; both directions recorded. */
async function connect(source: Parameters<typeof createMcpServer>[0], options: Partial<Parameters<typeof createMcpServer>[1]> = {}) {
  const server = createMcpServer(source, { name: "toolgate-test", version: "0.0.1", ...options });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const sent: JSONRPCMessage[] = [];
  const received: JSONRPCMessage[] = [];
  const send = clientTransport.send.bind(clientTransport);
  clientTransport.send = (message, sendOptions) => {
    sent.push(message);
    return send(message, sendOptions);
  };
  const serverSend = serverTransport.send.bind(serverTransport);
  serverTransport.send = (message, sendOptions) => {
    received.push(message);
    return serverSend(message, sendOptions);
  };
  await server.connect(serverTransport);
  const client = new Client({ name: "test-client", version: "1.0.0" });
  await client.connect(clientTransport);
  open.push(client);
  return { client, sent, received } satisfies Connection;
}

const progressNotifications = (messages: readonly JSONRPCMessage[]) =>
  messages.filter((message) => "method" in message && message.method === "notifications/progress") as unknown as {
    params: { progressToken: unknown };
  }[];
const toolCallRequests = (messages: readonly JSONRPCMessage[]) =>
  messages.filter((message) => "method" in message && message.method === "tools/call") as { id: number; params: { _meta?: object } }[];

const add = defineTool({
  name: "add",
  description: "Adds two numbers.",
  parameters: z.object({ left: z.number(), right: z.number() }),
  execute: ({ left, right }) => left + right,
});
const whoami = defineTool({
  name: "whoami",
  description: "Returns its call id.",
  parameters: z.object({}),
  execute: (_args, { toolCallId }) => toolCallId,
});
const tagged = defineTool({
  name: "tagged",
  description: "Echoes a tag.",
  validate: (args) => ({ ok: true, value: args }),
  jsonSchema: { type: "object", properties: { tag: { type: "string" } }, required: ["tag"] },
  execute: (args) => args,
});

describe("docs/adapters.md — MCP: tools/list", () => {
  it("shows every tool with its description and the JSON Schema describeTools gives", async () => {
    const registry = new ToolRegistry([add, tagged]);
    const { client } = await connect(registry);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => [tool.name, tool.description])).toEqual([
      ["add", "Adds two numbers."],
      ["tagged", "Echoes a tag."],
    ]);
    const [addSchema, taggedSchema] = describeTools(registry).map((tool) => tool.parameters);
    expect(tools[0]?.inputSchema).toEqual(addSchema);
    expect(tools[0]?.inputSchema).toMatchObject({
      type: "object",
      properties: { left: { type: "number" }, right: { type: "number" } },
      required: ["left", "right"],
    });
    expect(tools[1]?.inputSchema).toEqual(taggedSchema);
    expect(tools[1]?.inputSchema).toEqual({ type: "object", properties: { tag: { type: "string" } }, required: ["tag"] });
  });

  it("a tool named __proto__ is listed and called like any other (issue 28, defect 8: no name-keyed object here)", async () => {
    const proto = defineTool({ name: "__proto__", description: "Answers.", parameters: z.object({}), execute: () => "from __proto__" });
    const { client } = await connect(new ToolRegistry([proto, add]));
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["__proto__", "add"]);
    expect(await client.callTool({ name: "__proto__", arguments: {} })).toEqual({
      content: [{ type: "text", text: "from __proto__" }],
      isError: false,
    });
    const unknown = await client.callTool({ name: "toString", arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(JSON.stringify(unknown.content)).toContain("TOOL_NOT_FOUND");
  });

  it("a tool without a JSON Schema is refused at creation, or listed as any object with withoutSchema: any-object", async () => {
    const plain = defineTool({
      name: "plain",
      description: "No schema.",
      validate: (args) => ({ ok: true, value: args }),
      execute: () => 1,
    });
    const registry = new ToolRegistry([plain]);
    const refusal = await settle(Promise.resolve().then(() => createMcpServer(registry, { name: "s", version: "1" })));
    expect(refusal.ok).toBe(false);
    expect((refusal as { reason: { code?: unknown; message?: unknown } }).reason).toMatchObject({
      code: "INVALID_TOOL_DEFINITION",
      message: expect.stringContaining('tool "plain" has no JSON Schema'),
    });
    const { client } = await connect(registry, { withoutSchema: "any-object" });
    const { tools } = await client.listTools();
    expect(tools).toEqual([{ name: "plain", description: "No schema.", inputSchema: { type: "object", additionalProperties: true } }]);
  });

  it("a JSON Schema that is not type object is refused at creation (MCP requires one)", () => {
    const scalar = defineTool({
      name: "scalar",
      description: "Takes a string.",
      validate: (args) => ({ ok: true, value: args }),
      jsonSchema: { type: "string" },
      execute: () => 1,
    });
    expect(() => createMcpServer(new ToolRegistry([scalar]), { name: "s", version: "1" })).toThrow(
      expect.objectContaining({ code: "INVALID_TOOL_DEFINITION", message: expect.stringContaining('tool "scalar"') }),
    );
  });
});

describe("docs/adapters.md — MCP: tools/call", () => {
  it("a successful call is one text content with the result's content, isError false", async () => {
    const { client } = await connect(new ToolRegistry([add]));
    expect(await client.callTool({ name: "add", arguments: { left: 2, right: 3 } })).toEqual({
      content: [{ type: "text", text: "5" }],
      isError: false,
    });
  });

  it("attachments follow the text as MCP image blocks: base64 of the very bytes, on the wire too", async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 250, 251, 252, 253, 254, 255]);
    const jpeg = new Uint8Array(3000).map((_, index) => (index * 7) % 256);
    const snapshot = defineTool({
      name: "snapshot",
      description: "Returns two images.",
      parameters: z.object({}),
      execute: () => withAttachments({ frames: 2 }, [imageContent(png, "image/png"), imageContent(jpeg, "image/jpeg")]),
    });
    const { client, received } = await connect(new ToolRegistry([snapshot]));
    const reply = (await client.callTool({ name: "snapshot", arguments: {} })) as {
      content: { type: string; text?: string; data?: string; mimeType?: string }[];
      isError: boolean;
    };
    expect(reply.isError).toBe(false);
    expect(reply.content.map((block) => [block.type, block.mimeType])).toEqual([
      ["text", undefined],
      ["image", "image/png"],
      ["image", "image/jpeg"],
    ]);
    expect(reply.content[0]).toEqual({ type: "text", text: '{"frames":2}' });
    expect(new Uint8Array(Buffer.from(reply.content[1]?.data ?? "", "base64"))).toEqual(png);
    expect(new Uint8Array(Buffer.from(reply.content[2]?.data ?? "", "base64"))).toEqual(jpeg);
    const wire = received.find((message) => "result" in message && "content" in (message.result as object)) as unknown as {
      result: { content: { data?: string }[] };
    };
    expect(wire.result.content[1]?.data).toBe(Buffer.from(png).toString("base64"));
  });

  it("a patched Buffer.prototype (base64Slice, toString) does not change the image's encoding", async () => {
    const bytes = new Uint8Array([1, 2, 3, 4, 5]);
    const picture = defineTool({
      name: "picture",
      description: "Returns an image alone.",
      parameters: z.object({}),
      execute: () => imageContent(bytes, "image/webp"),
    });
    const { client } = await connect(new ToolRegistry([picture]));
    const proto = Buffer.prototype as unknown as { base64Slice: unknown; toString: unknown };
    const { base64Slice, toString: bufferToString } = proto;
    proto.base64Slice = () => "PATCHED";
    proto.toString = () => "PATCHED";
    let reply: unknown;
    try {
      reply = await client.callTool({ name: "picture", arguments: {} });
    } finally {
      proto.base64Slice = base64Slice;
      proto.toString = bufferToString;
    }
    expect(reply).toEqual({
      content: [
        { type: "text", text: "" },
        { type: "image", data: "AQIDBAU=", mimeType: "image/webp" },
      ],
      isError: false,
    });
  });

  it("a text-only result has no image block; an executor handing back malformed attachments is a JSON-RPC InternalError", async () => {
    const registry = new ToolRegistry([add]);
    const forged: Pick<ToolExecutor, "registry" | "executeToolCall"> = {
      registry,
      executeToolCall: async (call) => ({
        role: "toolResult",
        id: `tool-result-${(call as { id: string }).id}`,
        toolCallId: (call as { id: string }).id,
        toolName: "add",
        content: "5",
        isError: false,
        attachments: [{ type: "image", mimeType: "image/svg+xml", data: new Uint8Array([1]) }] as never,
      }),
    };
    const { client } = await connect(forged);
    const outcome = await settle(client.callTool({ name: "add", arguments: { left: 2, right: 3 } }, undefined, { timeout: 5_000 }));
    expect(outcome.ok).toBe(false);
    const error = (outcome as { reason: unknown }).reason as McpError;
    expect(error.code).toBe(ErrorCode.InternalError);
    expect(error.message).toContain("malformed attachments");
    const plain = await connect(registry);
    expect((await plain.client.callTool({ name: "add", arguments: { left: 1, right: 1 } })).content).toEqual([{ type: "text", text: "2" }]);
  });

  it("invalid arguments: isError true, the model-readable message with the $-path; execute never ran", async () => {
    let ran = 0;
    const counted = defineTool({
      name: "counted",
      description: "Counts its runs.",
      parameters: z.object({ left: z.number() }),
      execute: () => ++ran,
    });
    const { client } = await connect(new ToolRegistry([counted]));
    const result = await client.callTool({ name: "counted", arguments: { left: "two" } });
    expect(result).toEqual({
      content: [
        {
          type: "text",
          text: JSON.stringify({
            error: {
              code: "TOOL_ARGUMENTS_INVALID",
              message: "Invalid arguments (1 issue):\n  - $.left: Invalid input: expected number, received string",
            },
          }),
        },
      ],
      isError: true,
    });
    expect(ran).toBe(0);
  });

  it("missing arguments are an empty object, which the validator judges", async () => {
    const { client } = await connect(new ToolRegistry([add, whoami]));
    expect((await client.callTool({ name: "whoami" })).isError).toBe(false);
    const refused = await client.callTool({ name: "add" });
    expect(refused.isError).toBe(true);
    expect(JSON.parse((refused.content as { text: string }[])[0]?.text ?? "")).toMatchObject({
      error: { code: "TOOL_ARGUMENTS_INVALID", message: expect.stringContaining("$.left") },
    });
  });

  it("an unknown tool: isError true with TOOL_NOT_FOUND naming the available tools", async () => {
    const { client } = await connect(new ToolRegistry([add]));
    const result = await client.callTool({ name: "getWeather", arguments: {} });
    expect(result.isError).toBe(true);
    const [content] = result.content as { type: string; text: string }[];
    expect(content?.type).toBe("text");
    expect(JSON.parse(content?.text ?? "")).toEqual({
      error: { code: "TOOL_NOT_FOUND", message: expect.stringMatching(/^Tool "getWeather" is not registered\. Available tools: add/) },
    });
  });

  it("each request gets its own toolCallId, from the JSON-RPC id and a process-wide count: unique across servers", async () => {
    const registry = new ToolRegistry([whoami]);
    const first = await connect(registry);
    const second = await connect(registry);
    const text = async (client: Client) =>
      ((await client.callTool({ name: "whoami", arguments: {} })).content as { text: string }[])[0]?.text;
    const ids = [await text(first.client), await text(first.client), await text(second.client)];
    const requestIds = [...toolCallRequests(first.sent), ...toolCallRequests(second.sent)].map((request) => request.id);
    expect(requestIds[0]).toBe(requestIds[2]); // both clients count JSON-RPC ids the same way
    expect(new Set(ids).size).toBe(3);
    for (const [index, id] of ids.entries()) expect(id).toMatch(new RegExp(`^mcp-\\d+-${requestIds[index]}$`));
  });

  it("arguments over the argument budgets (nested too deep) are a TOOL_ARGUMENTS_INVALID result the model reads (SEP-1303), not a JSON-RPC error", async () => {
    const { client } = await connect(new ToolRegistry([tagged]));
    let deep: Record<string, unknown> = {};
    for (let level = 0; level < 80; level += 1) deep = { deeper: deep };
    const result = await client.callTool({ name: "tagged", arguments: deep });
    expect(result.isError).toBe(true);
    const [block] = result.content as { type: string; text: string }[];
    expect(JSON.parse(block?.text as string)).toEqual({
      error: { code: "TOOL_ARGUMENTS_INVALID", message: expect.stringContaining("nests deeper than 64 levels (argument budget maxDepth)") },
    });
  });

  it("a malformed call that is not the model's arguments (an empty tool name) is still a JSON-RPC InvalidParams error", async () => {
    const { client } = await connect(new ToolRegistry([tagged]));
    const outcome = await settle(client.callTool({ name: "", arguments: {} }));
    expect(outcome.ok).toBe(false);
    const error = (outcome as { reason: unknown }).reason;
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((error as McpError).message).toMatch(/call.name must be a non-empty string/);
  });

  it("a NonRecoverableToolError is a JSON-RPC InternalError; none of its getters runs", async () => {
    let reads = 0;
    class Hostile extends NonRecoverableToolError {
      override get message(): string {
        reads += 1;
        throw new Error("trap");
      }
      get code(): number {
        reads += 1;
        throw new Error("trap");
      }
    }
    const fatal = defineTool({
      name: "fatal",
      description: "Stops the run.",
      parameters: z.object({}),
      execute: () => {
        throw new Hostile();
      },
    });
    const { client } = await connect(new ToolRegistry([fatal]));
    const outcome = await settle(client.callTool({ name: "fatal", arguments: {} }, undefined, { timeout: 5_000 }));
    expect(outcome.ok).toBe(false);
    const error = (outcome as { reason: unknown }).reason as McpError;
    expect(error).toBeInstanceOf(McpError);
    expect(error.code).toBe(ErrorCode.InternalError);
    expect(error.message).toContain("NonRecoverableToolError");
    expect(reads).toBe(0);
  });
});

describe("docs/adapters.md — MCP: cancellation", () => {
  it("notifications/cancelled aborts a spinning tool in a WorkerToolExecutor: the call rejects, the thread is killed, the next call works", async () => {
    const executor = await WorkerToolExecutor.create({
      modules: [fixture("worker-tools")],
      minThreads: 1,
      maxThreads: 1,
      abortGraceMs: 100,
    });
    try {
      const outcomes: unknown[] = [];
      // Any ToolExecutor is a source: this one records how each call ended on the server side.
      const recording: Pick<ToolExecutor, "registry" | "executeToolCall"> = {
        registry: executor.registry,
        executeToolCall: (call: unknown, signal: AbortSignal, options?: CallOptions) =>
          executor.executeToolCall(call, signal, options).then(
            (result) => {
              outcomes.push({ result });
              return result;
            },
            (reason: unknown) => {
              outcomes.push({ reason });
              throw reason;
            },
          ),
      };
      const { client, sent, received } = await connect(recording, { withoutSchema: "any-object" });
      const threadId = async () =>
        Number(((await client.callTool({ name: "threadId", arguments: {} })).content as { text: string }[])[0]?.text);
      const before = await threadId();

      const controller = new AbortController();
      const spinning = settle(client.callTool({ name: "spin", arguments: { ms: 60_000 } }, undefined, { signal: controller.signal }));
      await sleep(100); // the tool is spinning in its thread
      controller.abort("user cancelled");
      expect((await spinning).ok).toBe(false);
      await expect.poll(() => outcomes.length, { timeout: 5_000 }).toBe(2);
      expect(outcomes[1]).toEqual({ reason: "user cancelled" }); // the cancellation's reason, as toolgate rejects with it

      const after = await threadId(); // served by a fresh thread once the spinning one was terminated
      expect(after).not.toBe(before);
      // The server never answered the cancelled request.
      const spinRequest = toolCallRequests(sent).find((request) => (request.params as { name?: unknown }).name === "spin");
      expect(spinRequest).toBeDefined();
      expect(received.some((message) => "id" in message && message.id === spinRequest?.id && !("method" in message))).toBe(false);
    } finally {
      await executor.close();
    }
  });

  it("closing the connection aborts the calls still running", async () => {
    let sawAbort: (reason: unknown) => void = () => {};
    const aborted = new Promise<unknown>((resolve) => (sawAbort = resolve));
    const hang = defineTool({
      name: "hang",
      description: "Waits for its signal.",
      parameters: z.object({}),
      execute: (_args, { signal }) =>
        new Promise<never>(() => signal.addEventListener("abort", () => sawAbort(signal.reason), { once: true })),
    });
    const { client } = await connect(new ToolRegistry([hang]));
    const pending = settle(client.callTool({ name: "hang", arguments: {} }));
    await sleep(20);
    await client.close();
    expect((await pending).ok).toBe(false);
    expect(await aborted).toBeInstanceOf(DOMException);
  });
});

describe("docs/adapters.md — MCP: progress", () => {
  const steps = defineTool({
    name: "steps",
    description: "Reports 1, 0.5 (a step back), 2 and 3 of 3, each past the 50 ms throttle.",
    parameters: z.object({}),
    execute: async (_args, { reportProgress }) => {
      for (const progress of [1, 0.5, 2, 3]) {
        reportProgress({ progress, total: 3, message: `at ${progress}` });
        await sleep(70);
      }
      return "finished";
    },
  });

  it("with a progressToken, reports become notifications/progress carrying it; a report that does not increase is dropped", async () => {
    const { client, sent, received } = await connect(new ToolRegistry([steps]));
    const seen: unknown[] = [];
    const result = await client.callTool({ name: "steps", arguments: {} }, undefined, { onprogress: (progress) => seen.push(progress) });
    expect(result).toEqual({ content: [{ type: "text", text: "finished" }], isError: false });
    const expected = [1, 2, 3].map((progress) => ({ progress, total: 3, message: `at ${progress}` }));
    expect(seen).toEqual(expected);
    const token = (toolCallRequests(sent)[0]?.params._meta as { progressToken?: unknown } | undefined)?.progressToken;
    expect(token).toBeDefined();
    expect(progressNotifications(received)).toEqual(
      expected.map((progress) => ({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, ...progress } })),
    );
  });

  it("a token the client chose is echoed as it is", async () => {
    const { client, received } = await connect(new ToolRegistry([steps]));
    await client.callTool({ name: "steps", arguments: {}, _meta: { progressToken: "my-token" } });
    const tokens = progressNotifications(received).map((message) => message.params.progressToken);
    expect(tokens).toEqual(["my-token", "my-token", "my-token"]);
  });

  it("without a progressToken no notifications/progress is sent", async () => {
    const { client, received } = await connect(new ToolRegistry([steps]));
    expect((await client.callTool({ name: "steps", arguments: {} })).isError).toBe(false);
    expect(progressNotifications(received)).toEqual([]);
  });
});

describe("docs/adapters.md — MCP: createMcpServer's arguments", () => {
  const registry = new ToolRegistry([add]);
  const refusal = (run: () => unknown): { code: unknown; message: string } => {
    try {
      run();
    } catch (error) {
      expect(isToolContractError(error)).toBe(true);
      return error as { code: unknown; message: string };
    }
    throw new Error("expected a ToolContractError");
  };

  it.each([
    ["an empty name", { name: "", version: "1" }, "options.name must be a non-empty string, an own data property (got an empty string)"],
    ["a numeric version", { name: "s", version: 1 }, "options.version must be a non-empty string, an own data property (got the number 1)"],
    ["a missing version", { name: "s" }, "options.version must be a non-empty string, an own data property (got undefined)"],
    ["a null name", { name: null, version: "1" }, "options.name must be a non-empty string, an own data property (got null)"],
  ])("%s is INVALID_ARGUMENT naming the option and the value", (_label, options, message) => {
    expect(refusal(() => createMcpServer(registry, options as never))).toEqual(
      expect.objectContaining({ code: "INVALID_ARGUMENT", message: `createMcpServer: ${message}` }),
    );
  });

  it("options that are not a plain object, or a name behind a getter, are refused without calling anything", () => {
    let reads = 0;
    const getter = {
      get name() {
        reads += 1;
        return "s";
      },
      version: "1",
    };
    expect(refusal(() => createMcpServer(registry, getter)).message).toContain("options.name must be a data property, not an accessor");
    const proxy = new Proxy({ name: "s", version: "1" }, { get: () => (reads += 1) });
    expect(refusal(() => createMcpServer(registry, proxy)).message).toContain("options must be an object");
    expect(refusal(() => createMcpServer(registry, undefined as never)).code).toBe("INVALID_ARGUMENT");
    expect(reads).toBe(0);
  });

  it("a source that is neither a registry nor an executor is INVALID_ARGUMENT", () => {
    const error = refusal(() => createMcpServer({ registry: {} } as never, { name: "s", version: "1" }));
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.message).toContain("createMcpServer: expected a ToolRegistry or an executor");
  });
});

describe("docs/adapters.md — MCP: the entry points", () => {
  it("the root entry never loads the MCP SDK: no module reachable from dist/src/index.js imports it", () => {
    const root = fileURLToPath(new URL("../../dist/src/index.js", import.meta.url));
    const seen = new Set<string>();
    const bare = new Set<string>();
    const visit = (path: string): void => {
      if (seen.has(path)) return;
      seen.add(path);
      for (const match of readFileSync(path, "utf8").matchAll(/^(?:import|export)\s[^;]*?from\s+"([^"]+)"|^import\s+"([^"]+)"/gm)) {
        const specifier = (match[1] ?? match[2]) as string;
        if (specifier.startsWith(".")) visit(fileURLToPath(new URL(specifier, `file://${path}`)));
        else bare.add(specifier);
      }
    };
    visit(root);
    expect(seen.size).toBeGreaterThan(10); // the walk followed the graph
    expect([...bare].filter((specifier) => specifier.includes("modelcontextprotocol"))).toEqual([]);
    // …and the walk would have seen it: the adapter's module does import it.
    const adapter = readFileSync(fileURLToPath(new URL("../../dist/src/adapters/mcp.js", import.meta.url)), "utf8");
    expect(adapter).toContain('from "@modelcontextprotocol/sdk/server/index.js"');
  });
});
