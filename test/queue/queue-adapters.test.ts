// The adapters over the queue executor (docs/adapters.md, docs/queue.md — Attachments, progress
// and thread facts across machines): an MCP client gets a remote tool's images as image blocks
// and its progress as notifications, through a real host and a real Redis.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createMcpServer } from "toolgate/mcp";
import { QueueToolExecutor, runToolWorkerHost } from "toolgate/queue";
import { afterEach, describe, expect, test } from "vitest";
import { fixture } from "../support/helpers.js";
import { findRedis, uniqueQueue } from "../support/redis.js";

const TOOLS = fixture("queue-feature-tools");
const redis = await findRedis();
const url = "url" in redis ? redis.url : "";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

async function mcpOverQueue(): Promise<Client> {
  const queue = uniqueQueue("mcp");
  const host = await runToolWorkerHost({ connection: url, queue, modules: [TOOLS], threads: 1 });
  cleanups.push(() => host.close());
  const executor = await QueueToolExecutor.create({ connection: url, queue, modules: [TOOLS], heartbeatMs: 100 });
  cleanups.push(() => executor.close());
  const server = createMcpServer(executor, { name: "toolgate-test", version: "0.0.1" });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: "test-client", version: "1.0.0" });
  await client.connect(clientTransport);
  cleanups.push(() => client.close());
  return client;
}

describe.skipIf(!("url" in redis))("docs/queue.md — the MCP adapter over the queue executor", () => {
  test("a remote tool's images reach the MCP client as image blocks of the very bytes", async () => {
    const client = await mcpOverQueue();
    const reply = (await client.callTool({ name: "images", arguments: { count: 2, size: 5 } })) as {
      content: { type: string; text?: string; data?: string; mimeType?: string }[];
      isError: boolean;
    };
    expect(reply.isError).toBe(false);
    expect(reply.content.map((block) => [block.type, block.mimeType])).toEqual([
      ["text", undefined],
      ["image", "image/png"],
      ["image", "image/png"],
    ]);
    expect([...Buffer.from(reply.content[2]?.data ?? "", "base64")]).toEqual([1, 2, 3, 4, 5]);
  });

  test("a remote tool's progress reaches the MCP client as progress notifications", async () => {
    const client = await mcpOverQueue();
    const seen: { progress: number; total?: number | undefined }[] = [];
    const reply = await client.callTool({ name: "report", arguments: { steps: 3, gapMs: 100 } }, undefined, {
      onprogress: (progress) => seen.push(progress),
    });
    expect(reply.isError).toBe(false);
    expect(seen.map((progress) => progress.progress)).toEqual([1, 2, 3]);
    expect(seen[0]).toMatchObject({ progress: 1, total: 3, message: "step 1" });
  });
});
