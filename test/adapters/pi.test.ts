// toolgate/pi: the AgentTool mapping in both directions, without the agent loop
// (test/adapters/pi-e2e.test.ts runs Pi's real loop), for Pi 0.85 and Pi 1.x.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type * as agent0 from "@earendil-works/pi-agent-core";
import type * as agent1 from "pi-agent-core-1";
import { num, obj, opt, str } from "pi-schema-1";
import {
  type CallOptions,
  defineTool,
  describeTools,
  executeToolCall,
  imageContent,
  isToolContractError,
  NonRecoverableToolError,
  type ToolProgress,
  ToolRegistry,
  type ToolResultMessage,
  withAttachments,
} from "toolgate";
import { fromPiAgentTool, type ToolCallExecutor, type ToolgatePiAgentTool, toPiAgentTool, toPiAgentTools } from "toolgate/pi";
import { typeboxParameters, validatorFromTypeBox } from "toolgate/typebox";
import Type from "typebox";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { PI_MAJORS } from "../support/pi-e2e.js";

const Add = Type.Object({ left: Type.Number(), right: Type.Number() }, { additionalProperties: false });
const ADD_JSON = {
  type: "object",
  properties: { left: { type: "number" }, right: { type: "number" } },
  required: ["left", "right"],
  additionalProperties: false,
};
const Search = Type.Object({ query: Type.String(), limit: Type.Optional(Type.Union([Type.Integer(), Type.Null()])) });
const anyArgs = (args: unknown) => ({ ok: true as const, value: args });

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
    { name: "greet", description: "Greets someone.", parameters: z.object({ name: z.string() }), execute: ({ name }) => `hello ${name}` },
    {
      name: "boom",
      description: "Always fails.",
      validate: anyArgs,
      jsonSchema: { type: "object" },
      execute: () => {
        throw new Error("kaboom");
      },
    },
    {
      name: "stall",
      description: "Ignores its signal.",
      validate: anyArgs,
      jsonSchema: { type: "object" },
      execute: async () => {
        await sleep(2000);
        return "finished anyway";
      },
    },
    {
      name: "fatal",
      description: "Breaks an invariant.",
      validate: anyArgs,
      jsonSchema: { type: "object" },
      execute: () => {
        throw new NonRecoverableToolError("invariant broken");
      },
    },
    {
      name: "steps",
      description: "Reports progress.",
      parameters: typeboxParameters(Type.Object({})),
      async execute(_args, { reportProgress }) {
        reportProgress({ progress: 1, total: 2 });
        await sleep(70);
        reportProgress({ progress: 2, total: 2, message: "done soon" });
        await sleep(70);
        return "stepped";
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

function contractError(make: () => unknown): { code: string; message: string } {
  try {
    make();
  } catch (error) {
    if (isToolContractError(error)) return error;
    throw error;
  }
  throw new Error("expected a ToolContractError");
}

describe("docs/adapters.md — Use it with Pi: the Pi majors under test", () => {
  it("are Pi 0.85.0 and Pi 1.6.0 (agent core, pi-ai and 1.x's pi-schema)", () => {
    const version = (path: string) =>
      (JSON.parse(readFileSync(new URL(`../../node_modules/${path}/package.json`, import.meta.url), "utf8")) as { version: string })
        .version;
    expect(["@earendil-works/pi-agent-core", "@earendil-works/pi-ai"].map(version)).toEqual(["0.85.0", "0.85.0"]);
    expect(["pi-agent-core-1", "pi-ai-1", "pi-schema-1"].map(version)).toEqual(["1.6.0", "1.6.0", "1.6.0"]);
    expect(PI_MAJORS.map((major) => major.name)).toEqual(["Pi 0.85.0", "Pi 1.6.0"]);
  });
});

/** The packages (not node: built-ins) a built module and everything it imports (relatively) import. */
function bareImports(entry: string): string[] {
  const found = new Set<string>();
  const seen = new Set<string>();
  const visit = (url: URL): void => {
    if (seen.has(url.href)) return;
    seen.add(url.href);
    for (const match of readFileSync(fileURLToPath(url), "utf8").matchAll(
      /^(?:import|export)\b[^;"]*?\bfrom\s*"([^"]+)"|^import\s*"([^"]+)"/gm,
    )) {
      const specifier = (match[1] ?? match[2]) as string;
      if (specifier.startsWith(".")) visit(new URL(specifier, url));
      else if (!specifier.startsWith("node:")) found.add(specifier);
    }
  };
  visit(new URL(`../../dist/src/${entry}`, import.meta.url));
  return [...found].sort();
}

describe("docs/adapters.md — Use it with Pi: what the entry points load", () => {
  it("toolgate/pi imports no Pi package at run time or in its types (one build for either major); the core loads neither Pi nor TypeBox", () => {
    expect(bareImports("adapters/pi.js")).toEqual(["typebox/compile", "typebox/system"]);
    expect(bareImports("adapters/pi.d.ts").filter((specifier) => specifier.includes("earendil"))).toEqual([]);
    expect(bareImports("index.js").filter((specifier) => specifier.includes("earendil") || specifier.includes("typebox"))).toEqual([]);
  });
});

describe("docs/adapters.md — Use it with Pi: toPiAgentTool", () => {
  it("is a frozen plain object both majors' AgentTool accepts, its parameters a copy of its own of the JSON Schema from describeTools", () => {
    const { registry } = makeRegistry();
    const tool = toPiAgentTool(registry, "add");
    expect(tool).toMatchObject({ name: "add", label: "add", description: "Adds two numbers." });
    expect(tool.parameters).toEqual(ADD_JSON);
    expect(tool.parameters).toEqual(describeTools(registry)[0]?.parameters);
    expect(tool.parameters).not.toBe(describeTools(registry)[0]?.parameters);
    expect(Object.isFrozen(tool)).toBe(true);
    // Pi's to write into if it likes (adapter-contract.test.ts: nothing written there reaches the registry).
    expect(Object.isFrozen(tool.parameters)).toBe(false);
    // TypeBox's `~kind` markers stay behind: Pi 0.85 sees a plain JSON Schema, as Pi 1.x does.
    expect(Reflect.ownKeys(tool.parameters).sort()).toEqual(["additionalProperties", "properties", "required", "type"]);
    expectTypeOf(tool).toExtend<agent0.AgentTool>();
    // What the agent loop's context takes: AgentTool<any>.
    expectTypeOf(tool).toExtend<NonNullable<agent0.AgentContext["tools"]>[number]>();
    expectTypeOf(tool).toExtend<agent1.AgentTool>();
    expectTypeOf(tool).toExtend<NonNullable<agent1.AgentContext["tools"]>[number]>();
  });

  it("a zod tool's parameters are zod's own JSON Schema", () => {
    const { registry } = makeRegistry();
    expect(toPiAgentTool(registry, "greet").parameters).toEqual({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { name: { type: "string" } },
      required: ["name"],
    });
  });

  it("a tool without a JSON Schema is refused naming it, unless withoutSchema is any-object; other tools are not held up", () => {
    const registry = new ToolRegistry([
      { name: "bare", description: "No schema.", validate: anyArgs, execute: () => "ok" },
      { name: "add", description: "Adds.", validate: validatorFromTypeBox(Add), execute: () => 0 },
    ]);
    const refused = contractError(() => toPiAgentTools(registry));
    expect(refused.code).toBe("INVALID_TOOL_DEFINITION");
    expect(refused.message).toMatch(/^tool "bare" has no JSON Schema/);
    expect(contractError(() => toPiAgentTool(registry, "bare")).code).toBe("INVALID_TOOL_DEFINITION");
    expect(toPiAgentTool(registry, "add").parameters).toEqual(ADD_JSON);
    const open = toPiAgentTool(registry, "bare", { withoutSchema: "any-object" });
    expect(open.parameters).toEqual({ type: "object", additionalProperties: true });
    expect(contractError(() => toPiAgentTools(registry, { withoutSchema: "loose" as never })).code).toBe("INVALID_ARGUMENT");
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

  it("maps attachments to Pi image blocks after the text block: base64 of the very bytes, a result both majors take", async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 255, 254, 1]);
    const gif = new Uint8Array(1025).map((_, index) => (index * 13) % 256);
    const registry = new ToolRegistry([
      defineTool({
        name: "render",
        description: "Renders two images.",
        parameters: z.object({}),
        execute: () => withAttachments("two frames", [imageContent(png, "image/png"), imageContent(gif, "image/gif")]),
      }),
    ]);
    const result = await toPiAgentTool(registry, "render").execute("call-img", {});
    expect(result.content.map((block) => block.type)).toEqual(["text", "image", "image"]);
    expect(result.content[0]).toEqual({ type: "text", text: "two frames" });
    expect(result.content[1]).toEqual({ type: "image", data: Buffer.from(png).toString("base64"), mimeType: "image/png" });
    expect(new Uint8Array(Buffer.from((result.content[2] as { data: string }).data, "base64"))).toEqual(gif);
    expect((result.content[2] as { mimeType: string }).mimeType).toBe("image/gif");
    expect(result.content.every((block) => Object.isFrozen(block))).toBe(true);
    expectTypeOf(result).toExtend<agent0.AgentToolResult<unknown>>();
    expectTypeOf(result).toExtend<agent1.AgentToolResult<unknown>>();
    // A text-only result keeps its one block.
    const { registry: plain } = makeRegistry();
    expect((await toPiAgentTool(plain, "add").execute("call-txt", { left: 1, right: 2 })).content).toEqual([{ type: "text", text: "3" }]);
  });

  it("an executor handing back malformed attachments makes execute throw (Pi records an isError result)", async () => {
    const { registry } = makeRegistry();
    const forged: ToolCallExecutor = {
      registry,
      executeToolCall: async () => ({
        role: "toolResult",
        id: "tool-result-call-bad",
        toolCallId: "call-bad",
        toolName: "add",
        content: "3",
        isError: false,
        attachments: [{ type: "image", mimeType: "image/png", data: "not bytes" }] as never,
      }),
    };
    const error = await rejection(toPiAgentTool(forged, "add").execute("call-bad", { left: 1, right: 2 }));
    expect(isToolContractError(error) && error.code).toBe("INVALID_ARGUMENT");
    expect((error as Error).message).toContain("toPiAgentTool: the executor's result has malformed attachments");
  });

  it("gives the tool a never-aborting signal when Pi passes none", async () => {
    const { registry, contexts } = makeRegistry();
    await toPiAgentTool(registry, "add").execute("call-2", { left: 1, right: 1 });
    expect(contexts[0]?.signal).toBeInstanceOf(AbortSignal);
    expect(contexts[0]?.signal.aborted).toBe(false);
  });

  it("throws our error content for a recoverable error result (both majors make it an isError result)", async () => {
    const { registry } = makeRegistry();
    const error = await rejection(toPiAgentTool(registry, "boom").execute("call-3", {}));
    expect(error).toBeInstanceOf(Error);
    expect(JSON.parse((error as Error).message)).toEqual({ error: { code: "TOOL_EXECUTION_FAILED", message: "kaboom" } });
  });

  it("prepareArguments runs our validator first: refused arguments throw our TOOL_ARGUMENTS_INVALID content", () => {
    const { registry } = makeRegistry();
    const tool = toPiAgentTool(registry, "add");
    const raw = { left: "2", right: 3 };
    expect(() => tool.prepareArguments(raw)).toThrow(
      JSON.stringify({ error: { code: "TOOL_ARGUMENTS_INVALID", message: "Invalid arguments (1 issue):\n  - $.left: must be number" } }),
    );
    const good = { left: 2, right: 3 };
    expect(tool.prepareArguments(good)).toBe(good);
  });

  it("prepareArguments refuses arguments the executor's snapshot would refuse, as TOOL_ARGUMENTS_INVALID the model reads", () => {
    const { registry } = makeRegistry();
    const tool = toPiAgentTool(registry, "add");
    expect(() => tool.prepareArguments({ left: Number.NaN })).toThrow(
      /^\{"error":\{"code":"TOOL_ARGUMENTS_INVALID","message":"arguments\.left /,
    );
  });

  describe.each(PI_MAJORS)("against $name's own argument check", (major) => {
    it("whatever our validator accepts as is, Pi's check (with its coercion) accepts unchanged", () => {
      const registry = new ToolRegistry([
        { name: "search", description: "Searches.", validate: validatorFromTypeBox(Search), execute: () => "ok" },
        {
          name: "find",
          description: "Finds.",
          parameters: z.object({ query: z.string(), limit: z.number().int().nullable().optional(), tags: z.array(z.string()).optional() }),
          execute: () => "ok",
        },
      ]);
      for (const name of ["search", "find"]) {
        const tool = toPiAgentTool(registry, name);
        for (const args of [{ query: "a" }, { query: "a", limit: 3 }, { query: "a", limit: null }, { query: "", tags: ["1", "x"] }]) {
          expect(tool.prepareArguments(args)).toBe(args);
          expect(major.validateToolArguments(tool, args)).toEqual(args);
        }
      }
    });

    it("Pi's check would coerce what ours refuses: that is why ours runs first", () => {
      const tool = toPiAgentTool(makeRegistry().registry, "add");
      expect(major.validateToolArguments(tool, { left: "2", right: 3 })).toEqual({ left: 2, right: 3 });
      expect(() => tool.prepareArguments({ left: "2", right: 3 })).toThrow(/TOOL_ARGUMENTS_INVALID/);
    });
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

  it("progress reports reach onUpdate as partial results; a throwing onUpdate does not fail the call", async () => {
    const { registry } = makeRegistry();
    const partials: unknown[] = [];
    const result = await toPiAgentTool(registry, "steps").execute("call-p", {}, undefined, (partial) => {
      partials.push(partial);
      throw new Error("a broken UI");
    });
    const progress = (value: number, message: string | undefined): ToolProgress => ({
      toolCallId: "call-p",
      toolName: "steps",
      progress: value,
      total: 2,
      message,
    });
    expect(partials).toEqual([
      { content: [{ type: "text", text: "1/2" }], details: progress(1, undefined) },
      { content: [{ type: "text", text: "done soon" }], details: progress(2, "done soon") },
    ]);
    expect(partials.every((partial) => Object.isFrozen(partial))).toBe(true);
    expect(result.content).toEqual([{ type: "text", text: "stepped" }]);
    // Without onUpdate the reports are dropped, and the call is the same.
    expect((await toPiAgentTool(registry, "steps").execute("call-q", {})).content).toEqual([{ type: "text", text: "stepped" }]);
  });

  it("nothing reaches onUpdate once the call settled or its signal aborted, however late the tool reports", async () => {
    let late: (() => void) | undefined;
    const registry = new ToolRegistry([
      defineTool({
        name: "late",
        description: "Reports after it returned.",
        parameters: typeboxParameters(Type.Object({})),
        async execute(_args, { reportProgress, signal }) {
          late = () => reportProgress({ progress: 9 });
          await sleep(5); // still running when the second call is aborted
          if (signal.aborted) throw signal.reason;
          return "returned";
        },
      }),
    ]);
    const partials: unknown[] = [];
    const tool = toPiAgentTool(registry, "late");
    await tool.execute("call-l", {}, undefined, (partial) => partials.push(partial));
    late?.();
    await sleep(80);
    const controller = new AbortController();
    const aborted = tool.execute("call-m", {}, controller.signal, (partial) => partials.push(partial));
    controller.abort(new Error("stop"));
    await rejection(aborted);
    late?.();
    await sleep(80);
    expect(partials).toEqual([]);
  });

  it("runs calls through any ToolCallExecutor (with `this` bound to it), passing onProgress only when Pi gives onUpdate", async () => {
    const { registry } = makeRegistry();
    const calls: unknown[] = [];
    const executor: ToolCallExecutor & { readonly log: unknown[] } = {
      registry,
      log: calls,
      executeToolCall(call: unknown, signal: AbortSignal, options?: CallOptions): Promise<ToolResultMessage> {
        this.log.push([call, typeof options?.onProgress]);
        return executeToolCall(this.registry, call, signal, options);
      },
    };
    const result = await toPiAgentTool(executor, "add").execute("call-6", { left: 20, right: 22 });
    expect(result.content).toEqual([{ type: "text", text: "42" }]);
    await toPiAgentTool(executor, "add").execute("call-7", { left: 1, right: 2 }, undefined, () => {});
    expect(calls).toEqual([
      [{ type: "toolCall", id: "call-6", name: "add", arguments: { left: 20, right: 22 } }, "undefined"],
      [{ type: "toolCall", id: "call-7", name: "add", arguments: { left: 1, right: 2 } }, "function"],
    ]);
  });

  it("toPiAgentTools exposes every registered tool in registration order", () => {
    const { registry } = makeRegistry();
    expect(toPiAgentTools(registry).map((tool) => tool.name)).toEqual(["add", "greet", "boom", "stall", "fatal", "steps"]);
  });

  it("refuses an unknown name, something that is not an executor, and bad options, up front", () => {
    const { registry } = makeRegistry();
    const hostile = new Proxy({}, { get: () => () => undefined });
    for (const make of [
      () => toPiAgentTool(registry, "nope"),
      () => toPiAgentTool({} as never, "add"),
      () => toPiAgentTools({ registry: {}, executeToolCall: () => undefined } as never),
      () => toPiAgentTools({ registry } as never),
      () => toPiAgentTools(registry, null as never),
      () => toPiAgentTools(registry, hostile),
      () => toPiAgentTools(registry, { onNonRecoverableError: "abort" as never }),
      () => toPiAgentTool(registry, "add", { onNonRecoverableError: new Proxy(() => {}, {}) }),
    ]) {
      expect(contractError(make).code).toBe("INVALID_ARGUMENT");
    }
    // An accessor is never called: it is refused (an option read through a getter could change after the check).
    let reads = 0;
    const sneaky = {
      get onNonRecoverableError() {
        reads += 1;
        return () => {};
      },
    };
    expect(contractError(() => toPiAgentTools(registry, sneaky)).message).toBe(
      "toPiAgentTools: options.onNonRecoverableError must be a data property, not an accessor",
    );
    expect(reads).toBe(0);
    expect(contractError(() => toPiAgentTools(registry, { onNonRecoverableError: 5 as never })).message).toBe(
      "toPiAgentTools: options.onNonRecoverableError must be a function (got the number 5)",
    );
  });
});

describe("docs/adapters.md — Use it with Pi: fromPiAgentTool", () => {
  const received: unknown[][] = [];
  const piAdd: agent0.AgentTool<typeof Add, { sum: number }> = {
    name: "pi_add",
    label: "Add",
    description: "Adds two numbers (a Pi tool).",
    parameters: Add,
    async execute(toolCallId, params, signal) {
      received.push([toolCallId, params, signal instanceof AbortSignal]);
      return { content: [{ type: "text", text: `sum=${params.left + params.right}` }], details: { sum: params.left + params.right } };
    },
  };

  function piTool(execute: agent1.AgentTool["execute"], extra: Partial<agent1.AgentTool> = {}): agent1.AgentTool {
    return { name: "pi_tool", label: "T", description: "A Pi tool.", parameters: obj({}), execute, ...extra };
  }

  async function call(registry: ToolRegistry, name: string, args: Record<string, unknown>, id = "c1", options: CallOptions = {}) {
    return executeToolCall(registry, { type: "toolCall", id, name, arguments: args as never }, new AbortController().signal, options);
  }

  it("wraps name, description and schema; execute gets (toolCallId, args, signal); text comes back", async () => {
    received.length = 0;
    const tool = fromPiAgentTool(piAdd);
    expectTypeOf(tool.execute).parameter(0).toEqualTypeOf<{ left: number; right: number }>();
    expect(Object.isFrozen(tool)).toBe(true);
    expect(tool.name).toBe("pi_add");
    expect(tool.description).toBe("Adds two numbers (a Pi tool).");
    const registry = new ToolRegistry([tool]);
    expect(describeTools(registry)[0]?.parameters).toEqual(ADD_JSON);
    const result = await call(registry, "pi_add", { left: 2, right: 3 }, "call-7");
    expect(result).toMatchObject({ toolCallId: "call-7", isError: false, content: "sum=5" });
    expect(received).toEqual([["call-7", { left: 2, right: 3 }, true]]);
  });

  it("a Pi 1.x tool with a pi-schema (plain JSON Schema) parameters: checked by its schema, typed from it, shown as is", async () => {
    const Read = obj({ path: str({ minLength: 1 }), offset: opt(num()) });
    const read: agent1.AgentTool<typeof Read> = {
      name: "read",
      label: "Read",
      description: "Reads a file (a Pi 1.x tool).",
      parameters: Read,
      async execute(_id, { path, offset }) {
        return { content: [{ type: "text", text: `${path}@${offset ?? 0}` }], details: undefined };
      },
    };
    const tool = fromPiAgentTool(read);
    expectTypeOf(tool.execute).parameter(0).toEqualTypeOf<{ path: string; offset?: number }>();
    const registry = new ToolRegistry([tool]);
    expect(describeTools(registry)[0]?.parameters).toEqual(JSON.parse(JSON.stringify(Read)));
    expect((await call(registry, "read", { path: "a.txt", offset: 3 })).content).toBe("a.txt@3");
    for (const bad of [{ path: "" }, { path: "a", extra: 1 }, { offset: 1 }]) {
      expect(JSON.parse((await call(registry, "read", bad)).content).error.code).toBe("TOOL_ARGUMENTS_INVALID");
    }
    // TypeBox converts along TypeBox schemas only: "3" stays a string here, and is refused.
    expect(JSON.parse((await call(registry, "read", { path: "a", offset: "3" })).content).error.code).toBe("TOOL_ARGUMENTS_INVALID");
  });

  it("a Pi 1.x result with isError: true is TOOL_EXECUTION_FAILED with the result's text, not a success", async () => {
    const tool = fromPiAgentTool(
      piTool(async () => ({ content: [{ type: "text", text: "no such file" }], details: { code: 2 }, isError: true })),
    );
    const result = await call(new ToolRegistry([tool]), "pi_tool", {});
    expect(result.isError).toBe(true);
    expect(JSON.parse(result.content)).toEqual({ error: { code: "TOOL_EXECUTION_FAILED", message: "no such file" } });
  });

  it("the Pi tool's partial results (onUpdate) become progress reports: a count and the partial text", async () => {
    const tool = fromPiAgentTool(
      piTool(async (_id, _params, _signal, onUpdate) => {
        onUpdate?.({ content: [{ type: "text", text: "reading" }], details: undefined });
        await sleep(70);
        onUpdate?.({ content: "garbage" } as never); // malformed: still counted, without a message
        await sleep(70);
        return { content: [{ type: "text", text: "read" }], details: undefined };
      }),
    );
    const reports: ToolProgress[] = [];
    const result = await call(new ToolRegistry([tool]), "pi_tool", {}, "c-up", { onProgress: (report) => reports.push(report) });
    expect(result.content).toBe("read");
    expect(reports).toEqual([
      { toolCallId: "c-up", toolName: "pi_tool", progress: 1, total: undefined, message: "reading" },
      { toolCallId: "c-up", toolName: "pi_tool", progress: 2, total: undefined, message: undefined },
    ]);
  });

  it("coerces like Pi by default along a TypeBox schema, and not with coerce: false", async () => {
    const coercing = new ToolRegistry([fromPiAgentTool(piAdd)]);
    expect((await call(coercing, "pi_add", { left: "2", right: 3 })).content).toBe("sum=5");
    const strict = new ToolRegistry([fromPiAgentTool(piAdd, { coerce: false })]);
    const refused = await call(strict, "pi_add", { left: "2", right: 3 });
    expect(refused.isError).toBe(true);
    expect(JSON.parse(refused.content).error.code).toBe("TOOL_ARGUMENTS_INVALID");
  });

  it("applies the Pi tool's prepareArguments shim (on a private copy) before validating", async () => {
    const seen: unknown[] = [];
    const shimmed: agent0.AgentTool<typeof Add> = {
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
    expect(describeTools(registry)[0]?.parameters).toEqual(ADD_JSON);
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

  it("a result without content is empty; a malformed one is an execution failure; a getter is not called", async () => {
    const empty = fromPiAgentTool(piTool(async () => ({ details: {} }) as never));
    expect((await call(new ToolRegistry([empty]), "pi_tool", {})).content).toBe("");
    const malformed = fromPiAgentTool(piTool(async () => ({ content: "text", details: {} }) as never));
    expect(JSON.parse((await call(new ToolRegistry([malformed]), "pi_tool", {})).content).error.code).toBe("TOOL_EXECUTION_FAILED");
    let reads = 0;
    const sneaky = fromPiAgentTool(
      piTool(async () => ({
        content: [{ type: "text", text: "visible" }],
        details: {},
        get isError() {
          reads += 1;
          return true;
        },
      })),
    );
    expect((await call(new ToolRegistry([sneaky]), "pi_tool", {})).content).toBe("visible");
    expect(reads).toBe(0);
  });

  it("refuses a Pi tool toolgate cannot define (empty description, a schema that is not JSON)", () => {
    expect(() => fromPiAgentTool(piTool(async () => ({ content: [], details: {} }), { description: "" }))).toThrow(/description/);
    const withFunction = { type: "object", default: () => ({}) };
    expect(
      contractError(() => fromPiAgentTool(piTool(async () => ({ content: [], details: {} }), { parameters: withFunction }))).code,
    ).toBe("INVALID_TOOL_DEFINITION");
  });
});

describe("docs/adapters.md — Use it with Pi: round trips", () => {
  it("Pi → toolgate → Pi keeps the schema (as JSON) and the result text", async () => {
    const piEcho: agent0.AgentTool<typeof Search> = {
      name: "search",
      label: "Search",
      description: "Searches.",
      parameters: Search,
      async execute(_id, params) {
        return { content: [{ type: "text", text: `results for ${params.query}` }], details: null };
      },
    };
    const back: ToolgatePiAgentTool = toPiAgentTool(new ToolRegistry([fromPiAgentTool(piEcho)]), "search");
    expect(back.parameters).toEqual(JSON.parse(JSON.stringify(Search)));
    expect(back.description).toBe("Searches.");
    expect((await back.execute("c1", { query: "pi" })).content).toEqual([{ type: "text", text: "results for pi" }]);
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
