// toolgate/pi: the AgentTool mapping in both directions, without the agent loop
// (test/adapters-pi-e2e.test.ts runs Pi's real loop).
import type { AgentTool, AgentToolResult } from "@earendil-works/pi-agent-core";
import { validateToolArguments } from "@earendil-works/pi-ai";
import { type CourseToolResultMessage, executeToolCall, isToolContractError, NonRecoverableToolError, ToolRegistry } from "toolgate";
import { fromPiAgentTool, type ToolCallExecutor, toPiAgentTool, toPiAgentTools } from "toolgate/pi";
import { validatorFromStandardSchema } from "toolgate/standard-schema";
import { validatorFromTypeBox } from "toolgate/typebox";
import Type from "typebox";
import { describe, expect, it } from "vitest";
import { z } from "zod";

const Add = Type.Object({ left: Type.Number(), right: Type.Number() }, { additionalProperties: false });
const Search = Type.Object({ query: Type.String(), limit: Type.Optional(Type.Union([Type.Integer(), Type.Null()])) });

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
}

function makeRegistry() {
  const contexts: { signal: AbortSignal; toolCallId: string }[] = [];
  const registry = new ToolRegistry([
    {
      name: "add",
      description: "Adds two numbers.",
      validate: validatorFromTypeBox(Add),
      execute: (args: { left: number; right: number }, context) => {
        contexts.push(context);
        return args.left + args.right;
      },
    },
    {
      name: "greet",
      description: "Greets someone.",
      validate: validatorFromStandardSchema(z.object({ name: z.string() })),
      execute: ({ name }: { name: string }) => `hello ${name}`,
    },
    {
      name: "boom",
      description: "Always fails.",
      validate: (args: unknown) => ({ ok: true, value: args }),
      execute: () => {
        throw new Error("kaboom");
      },
    },
    {
      name: "stall",
      description: "Ignores its signal.",
      validate: (args: unknown) => ({ ok: true, value: args }),
      execute: async () => {
        await sleep(2000);
        return "finished anyway";
      },
    },
    {
      name: "fatal",
      description: "Breaks an invariant.",
      validate: (args: unknown) => ({ ok: true, value: args }),
      execute: () => {
        throw new NonRecoverableToolError("invariant broken");
      },
    },
  ]);
  return { registry, contexts };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe("toPiAgentTool", () => {
  it("describes the tool with its TypeBox schema as parameters", () => {
    const { registry } = makeRegistry();
    const tool = toPiAgentTool(registry, "add");
    expect(tool).toMatchObject({ name: "add", label: "add", description: "Adds two numbers." });
    expect(tool.parameters).toBe(Add);
  });

  it("gives a permissive object schema when the validator is not from TypeBox", () => {
    const { registry } = makeRegistry();
    const tool = toPiAgentTool(registry, "greet");
    expect(tool.parameters).toMatchObject({ type: "object", properties: {}, additionalProperties: true });
    // Pi's own check passes any object through to us untouched.
    const args = { name: 5, other: ["x"] };
    expect(validateToolArguments(tool, { type: "toolCall", id: "c", name: "greet", arguments: args })).toEqual(args);
  });

  it("maps a success to a text block with details linking our result", async () => {
    const { registry, contexts } = makeRegistry();
    const result = await toPiAgentTool(registry, "add").execute("call-1", { left: 2, right: 3 }, new AbortController().signal);
    expect(result).toEqual({
      content: [{ type: "text", text: "5" }],
      details: { toolCallId: "call-1", toolName: "add", resultId: "tool-result-call-1" },
    });
    expect(contexts.map((context) => context.toolCallId)).toEqual(["call-1"]);
  });

  it("gives the tool a never-aborting signal when Pi passes none", async () => {
    const { registry, contexts } = makeRegistry();
    await toPiAgentTool(registry, "add").execute("call-2", { left: 1, right: 1 });
    expect(contexts[0]?.signal).toBeInstanceOf(AbortSignal);
    expect(contexts[0]?.signal.aborted).toBe(false);
  });

  it("throws our error content for a recoverable error result (Pi makes it an isError result)", async () => {
    const { registry } = makeRegistry();
    const error = await rejection(toPiAgentTool(registry, "boom").execute("call-3", {}));
    expect(error).toBeInstanceOf(Error);
    expect(JSON.parse((error as Error).message)).toEqual({ error: { code: "TOOL_EXECUTION_FAILED", message: "kaboom" } });
  });

  it("prepareArguments runs our validator first: refused arguments throw our TOOL_ARGUMENTS_INVALID content", () => {
    const { registry } = makeRegistry();
    const tool = toPiAgentTool(registry, "add");
    const raw = { left: "2", right: 3 };
    expect(() => tool.prepareArguments?.(raw)).toThrow(
      JSON.stringify({ error: { code: "TOOL_ARGUMENTS_INVALID", message: "Invalid arguments (1 issue):\n  - $.left: must be number" } }),
    );
    const good = { left: 2, right: 3 };
    expect(tool.prepareArguments?.(good)).toBe(good);
  });

  it("prepareArguments leaves a malformed call to the executor (which reports it with the call id)", () => {
    const { registry } = makeRegistry();
    const tool = toPiAgentTool(registry, "add");
    const weird = { left: Number.NaN };
    expect(tool.prepareArguments?.(weird)).toBe(weird);
  });

  it("whatever our validator accepts as is, Pi's own check (with its coercion) accepts unchanged", () => {
    const registry = new ToolRegistry([
      { name: "search", description: "Searches.", validate: validatorFromTypeBox(Search), execute: () => "ok" },
    ]);
    const tool = toPiAgentTool(registry, "search");
    for (const args of [{ query: "a" }, { query: "a", limit: 3 }, { query: "a", limit: null }, { query: "", extra: { deep: [1, "2"] } }]) {
      expect(tool.prepareArguments?.(args)).toBe(args);
      expect(validateToolArguments(tool, { type: "toolCall", id: "c", name: "search", arguments: args })).toEqual(args);
    }
  });

  it("rethrows the abort reason itself, at once, without waiting for a tool that ignores its signal", async () => {
    const { registry } = makeRegistry();
    const controller = new AbortController();
    const reason = new Error("user pressed stop");
    const started = performance.now();
    setTimeout(() => controller.abort(reason), 20);
    const error = await rejection(toPiAgentTool(registry, "stall").execute("call-4", {}, controller.signal));
    expect(error).toBe(reason);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it("rethrows a NonRecoverableToolError and reports it to onNonRecoverableError", async () => {
    const { registry } = makeRegistry();
    const seen: [unknown, string][] = [];
    const tool = toPiAgentTool(registry, "fatal", {
      onNonRecoverableError: (error, toolCallId) => {
        seen.push([error, toolCallId]);
        throw new Error("a broken hook is ignored");
      },
    });
    const error = await rejection(tool.execute("call-5", {}));
    expect(error).toBeInstanceOf(NonRecoverableToolError);
    expect(seen).toEqual([[error, "call-5"]]);
    // Recoverable errors do not reach the hook.
    await rejection(toPiAgentTool(registry, "boom", { onNonRecoverableError: () => seen.push([null, "boom"]) }).execute("c", {}));
    expect(seen).toHaveLength(1);
  });

  it("runs calls through any ToolCallExecutor (with `this` bound to it)", async () => {
    const { registry } = makeRegistry();
    const calls: unknown[] = [];
    const executor: ToolCallExecutor & { readonly log: unknown[] } = {
      registry,
      log: calls,
      executeToolCall(call: unknown, signal: AbortSignal): Promise<CourseToolResultMessage> {
        this.log.push(call);
        return executeToolCall(this.registry, call, signal);
      },
    };
    const result = await toPiAgentTool(executor, "add").execute("call-6", { left: 20, right: 22 });
    expect(result.content).toEqual([{ type: "text", text: "42" }]);
    expect(calls).toEqual([{ type: "toolCall", id: "call-6", name: "add", arguments: { left: 20, right: 22 } }]);
  });

  it("toPiAgentTools exposes every registered tool in registration order", () => {
    const { registry } = makeRegistry();
    expect(toPiAgentTools(registry).map((tool) => tool.name)).toEqual(["add", "greet", "boom", "stall", "fatal"]);
  });

  it("refuses an unknown name or something that is not an executor", () => {
    const { registry } = makeRegistry();
    for (const make of [
      () => toPiAgentTool(registry, "nope"),
      () => toPiAgentTool({} as never, "add"),
      () => toPiAgentTools({ registry: {}, executeToolCall: () => undefined } as never),
      () => toPiAgentTools({ registry } as never),
    ]) {
      let thrown: unknown;
      try {
        make();
      } catch (error) {
        thrown = error;
      }
      expect(isToolContractError(thrown)).toBe(true);
      expect((thrown as { code: string }).code).toBe("INVALID_ARGUMENT");
    }
  });
});

describe("fromPiAgentTool", () => {
  const received: unknown[][] = [];
  const piAdd: AgentTool<typeof Add, { sum: number }> = {
    name: "pi_add",
    label: "Add",
    description: "Adds two numbers (a Pi tool).",
    parameters: Add,
    async execute(toolCallId, params, signal) {
      received.push([toolCallId, params, signal instanceof AbortSignal]);
      return { content: [{ type: "text", text: `sum=${params.left + params.right}` }], details: { sum: params.left + params.right } };
    },
  };

  function piTool(execute: () => Promise<AgentToolResult<unknown>>, extra: Partial<AgentTool> = {}): AgentTool {
    return { name: "pi_tool", label: "T", description: "A Pi tool.", parameters: Type.Object({}), execute, ...extra };
  }

  async function call(registry: ToolRegistry, name: string, args: Record<string, unknown>, id = "c1") {
    return executeToolCall(registry, { type: "toolCall", id, name, arguments: args as never }, new AbortController().signal);
  }

  it("wraps name, description and schema; execute gets (toolCallId, args, signal); text comes back", async () => {
    received.length = 0;
    const tool = fromPiAgentTool(piAdd);
    expect(Object.isFrozen(tool)).toBe(true);
    expect(tool.name).toBe("pi_add");
    expect(tool.description).toBe("Adds two numbers (a Pi tool).");
    const result = await call(new ToolRegistry([tool]), "pi_add", { left: 2, right: 3 }, "call-7");
    expect(result).toMatchObject({ toolCallId: "call-7", isError: false, content: "sum=5" });
    expect(received).toEqual([["call-7", { left: 2, right: 3 }, true]]);
  });

  it("coerces like Pi by default, and not with coerce: false", async () => {
    const coercing = new ToolRegistry([fromPiAgentTool(piAdd)]);
    expect((await call(coercing, "pi_add", { left: "2", right: 3 })).content).toBe("sum=5");
    const strict = new ToolRegistry([fromPiAgentTool(piAdd, { coerce: false })]);
    const refused = await call(strict, "pi_add", { left: "2", right: 3 });
    expect(refused.isError).toBe(true);
    expect(JSON.parse(refused.content).error.code).toBe("TOOL_ARGUMENTS_INVALID");
  });

  it("applies the Pi tool's prepareArguments shim (on a private copy) before validating", async () => {
    const seen: unknown[] = [];
    const shimmed: AgentTool<typeof Add> = {
      ...piAdd,
      name: "shimmed",
      prepareArguments: (raw) => {
        const args = raw as { a?: number; b?: number; left?: number; right?: number };
        seen.push(Object.isFrozen(raw));
        return { left: args.left ?? args.a ?? 0, right: args.right ?? args.b ?? 0 };
      },
    };
    const registry = new ToolRegistry([fromPiAgentTool(shimmed)]);
    expect((await call(registry, "shimmed", { a: 4, b: 5 })).content).toBe("sum=9");
    expect(seen).toEqual([false]);
  });

  it("joins text blocks with newlines and shows images as placeholders", async () => {
    const tool = fromPiAgentTool(
      piTool(async () => ({
        content: [
          { type: "text", text: "first" },
          { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
          { type: "text", text: "last" },
        ],
        details: {},
      })),
    );
    expect((await call(new ToolRegistry([tool]), "pi_tool", {})).content).toBe("first\n[image: image/png]\nlast");
  });

  it("a throwing Pi tool gives TOOL_EXECUTION_FAILED with its message", async () => {
    const tool = fromPiAgentTool(
      piTool(async () => {
        throw new Error("disk full");
      }),
    );
    const result = await call(new ToolRegistry([tool]), "pi_tool", {});
    expect(JSON.parse(result.content)).toEqual({ error: { code: "TOOL_EXECUTION_FAILED", message: "disk full" } });
  });

  it("gains the content budget: a huge Pi result is cut to 4096 code points with the marker", async () => {
    const tool = fromPiAgentTool(piTool(async () => ({ content: [{ type: "text", text: "y".repeat(100_000) }], details: {} })));
    const { content } = await call(new ToolRegistry([tool]), "pi_tool", {});
    expect([...content]).toHaveLength(4096);
    expect(content.endsWith("\n[Tool output truncated]")).toBe(true);
  });

  it("a result without content is empty; a malformed one is an execution failure", async () => {
    const empty = fromPiAgentTool(piTool(async () => ({ details: {} }) as unknown as AgentToolResult<unknown>));
    expect((await call(new ToolRegistry([empty]), "pi_tool", {})).content).toBe("");
    const malformed = fromPiAgentTool(piTool(async () => ({ content: "text", details: {} }) as unknown as AgentToolResult<unknown>));
    expect(JSON.parse((await call(new ToolRegistry([malformed]), "pi_tool", {})).content).error.code).toBe("TOOL_EXECUTION_FAILED");
  });

  it("refuses a Pi tool toolgate cannot define (empty description)", () => {
    expect(() => fromPiAgentTool(piTool(async () => ({ content: [], details: {} }), { description: "" }))).toThrow(/description/);
  });
});

describe("round trips", () => {
  it("Pi → toolgate → Pi keeps the schema and the result text", async () => {
    const piEcho: AgentTool<typeof Search> = {
      name: "search",
      label: "Search",
      description: "Searches.",
      parameters: Search,
      async execute(_id, params) {
        return { content: [{ type: "text", text: `results for ${params.query}` }], details: null };
      },
    };
    const back = toPiAgentTool(new ToolRegistry([fromPiAgentTool(piEcho)]), "search");
    expect(back.parameters).toBe(Search);
    expect(back.description).toBe("Searches.");
    expect((await back.execute("c1", { query: "pi" })).content).toEqual([{ type: "text", text: "results for pi" }]);
  });

  it("Pi → toolgate → Pi keeps the schema when the tool has a prepareArguments shim", () => {
    const shimmed: AgentTool<typeof Search> = {
      name: "search",
      label: "Search",
      description: "Searches.",
      parameters: Search,
      prepareArguments: (raw) => raw as { query: string },
      execute: async () => ({ content: [], details: null }),
    };
    expect(toPiAgentTool(new ToolRegistry([fromPiAgentTool(shimmed)]), "search").parameters).toBe(Search);
  });

  it("toolgate → Pi → toolgate gives the same results as the original tool", async () => {
    const { registry } = makeRegistry();
    const again = new ToolRegistry(
      toPiAgentTools(registry)
        .filter((tool) => tool.name === "add" || tool.name === "boom")
        .map((tool) => fromPiAgentTool(tool)),
    );
    const run = (target: ToolRegistry, name: string, args: Record<string, unknown>) =>
      executeToolCall(target, { type: "toolCall", id: "rt", name, arguments: args as never }, new AbortController().signal);
    expect(await run(again, "add", { left: 1, right: 2 })).toEqual(await run(registry, "add", { left: 1, right: 2 }));
    // The wrapped tool re-wraps our error content as a thrown message: the code stays visible.
    const failed = await run(again, "boom", {});
    expect(failed.isError).toBe(true);
    expect(JSON.parse(failed.content).error.code).toBe("TOOL_EXECUTION_FAILED");
    expect(JSON.parse(failed.content).error.message).toContain("kaboom");
  });
});
