// Adapters where a `durable` option cannot apply (docs/durable.md — Durable calls with your
// framework) refuse it by name, with why, when the tools are made: never "unknown option",
// never silently ignored.
import { ContractErrorCode, defineTool, InProcessToolExecutor, ToolRegistry } from "toolgate";
import { memoryDurableStore } from "toolgate/durable";
import { toMastraTools } from "toolgate/mastra";
import { createMcpServer } from "toolgate/mcp";
import { toPiAgentTool, toPiAgentTools } from "toolgate/pi";
import { describe, expect, it } from "vitest";
import { z } from "zod";

const echo = defineTool({ name: "echo", description: "Echoes.", parameters: z.object({ text: z.string() }), execute: ({ text }) => text });
const executor = new InProcessToolExecutor(new ToolRegistry([echo]), { durable: { store: memoryDurableStore() } });
const durable = () => ({ runId: "r" });

const REFUSALS: [string, () => unknown, RegExp][] = [
  [
    "createMcpServer",
    () => createMcpServer(executor, { name: "s", version: "1.0.0", durable } as never),
    /^createMcpServer: options\.durable is not available here: an MCP tools\/call request names no run/,
  ],
  [
    "toMastraTools",
    () => toMastraTools(executor, { durable } as never),
    /^toMastraTools: options\.durable is not available here: durable calls are not wired to Mastra/,
  ],
  [
    "toPiAgentTools",
    () => toPiAgentTools(executor, { durable } as never),
    /^toPiAgentTools: options\.durable is not available here: Pi's execute/,
  ],
  [
    "toPiAgentTool",
    () => toPiAgentTool(executor, "echo", { durable } as never),
    /^toPiAgentTool: options\.durable is not available here: Pi's execute/,
  ],
];

describe("docs/durable.md — Durable calls with your framework: MCP, Mastra and Pi refuse durable", () => {
  it.each(REFUSALS)("%s refuses options.durable with INVALID_ARGUMENT saying why", (_api, make, message) => {
    let caught: unknown;
    try {
      make();
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ code: ContractErrorCode.INVALID_ARGUMENT, message: expect.stringMatching(message) });
    expect((caught as Error).message).not.toMatch(/unknown option/);
  });

  it("an options Proxy is still refused as before (no trap runs)", () => {
    let traps = 0;
    const count = () => {
      traps += 1;
    };
    const options = new Proxy(
      { durable },
      {
        getOwnPropertyDescriptor: () => {
          count();
          return undefined;
        },
        has: () => {
          count();
          return true;
        },
      },
    );
    expect(() => toMastraTools(executor, options as never)).toThrow(expect.objectContaining({ code: ContractErrorCode.INVALID_ARGUMENT }));
    expect(traps).toBe(0);
  });
});
