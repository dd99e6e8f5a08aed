// toolgate/pi: what `prepareArguments` accepted is taken by the `execute` that follows when Pi
// hands it equal arguments (the validator decides once per call), and only then: other
// arguments, arguments that would not snapshot the same (an accessor, a Proxy, -0 for 0), a
// second call, or an executor that validates on its own all run the validator again.
import { defineTool, InProcessToolExecutor, type ToolContext, ToolRegistry } from "toolgate";
import { toPiAgentTools } from "toolgate/pi";
import { describe, expect, it } from "vitest";
import { PI_MAJORS } from "../support/pi-e2e.js";

/**
 * The message of TOOL_ARGUMENTS_INVALID in what Pi's execute threw (a recoverable result: an
 * Error whose message is toolgate's error JSON), or what was thrown otherwise.
 */
function argumentsRefusal(thrown: unknown): unknown {
  if (!(thrown instanceof Error)) return thrown;
  const { error } = JSON.parse(thrown.message) as { error: { code: string; message: string } };
  return error.code === "TOOL_ARGUMENTS_INVALID" ? error.message : error;
}

/** A tool whose validator counts its runs and tags the value it accepts with that run's number. */
function countingTool() {
  const validated: unknown[] = [];
  const executed: unknown[] = [];
  const tool = defineTool({
    name: "echo",
    description: "Echoes its arguments.",
    jsonSchema: { type: "object", properties: { n: {} }, required: ["n"] },
    validate: (args: unknown) => {
      validated.push(args);
      const n = (args as { n?: unknown }).n;
      return n === undefined ? { ok: false as const, error: "n is required" } : { ok: true as const, value: { n, run: validated.length } };
    },
    execute: (args: unknown, _context: ToolContext) => {
      executed.push(args);
      return args;
    },
  });
  return { validated, executed, registry: new ToolRegistry([tool]) };
}

function piTool(source: Parameters<typeof toPiAgentTools>[0]) {
  const tool = toPiAgentTools(source)[0];
  if (tool === undefined) throw new Error("no tool");
  return tool;
}

describe("Pi: the verdict of prepareArguments and the execute that follows", () => {
  it("equal arguments (Pi's clone): the validator runs once, and execute gets the value it accepted", async () => {
    const { validated, executed, registry } = countingTool();
    const tool = piTool(registry);
    const raw = { n: 1 };
    tool.prepareArguments(raw);
    const result = await tool.execute("call-1", structuredClone(raw));
    expect(validated).toHaveLength(1);
    expect(executed).toEqual([{ n: 1, run: 1 }]);
    expect(result.content).toEqual([{ type: "text", text: '{"n":1,"run":1}' }]);
  });

  it("other arguments than those prepareArguments saw (Pi converted them): validated again, execute gets their value", async () => {
    const { validated, executed, registry } = countingTool();
    const tool = piTool(registry);
    tool.prepareArguments({ n: "3" });
    await tool.execute("call-1", { n: 3 });
    expect(validated).toEqual([{ n: "3" }, { n: 3 }]);
    expect(executed).toEqual([{ n: 3, run: 2 }]);
  });

  it("a verdict is taken by one call: a second execute with the same arguments validates", async () => {
    const { validated, registry } = countingTool();
    const tool = piTool(registry);
    tool.prepareArguments({ n: 1 });
    await tool.execute("call-1", { n: 1 });
    await tool.execute("call-2", { n: 1 });
    expect(validated).toHaveLength(2);
  });

  it("a verdict a call with other arguments did not take waits for one with equal arguments", async () => {
    const { validated, executed, registry } = countingTool();
    const tool = piTool(registry);
    tool.prepareArguments({ n: 1 });
    tool.prepareArguments({ n: 2 }); // Pi prepares every call of a turn before it runs them
    await tool.execute("call-1", { n: 1 });
    await tool.execute("call-2", { n: 2 });
    expect(validated).toEqual([{ n: 1 }, { n: 2 }, { n: 1 }]);
    expect(executed).toEqual([
      { n: 1, run: 3 },
      { n: 2, run: 2 },
    ]);
  });

  it("-0 where prepareArguments saw 0 is not taken as equal", async () => {
    const { validated, executed, registry } = countingTool();
    const tool = piTool(registry);
    tool.prepareArguments({ n: 0 });
    await tool.execute("call-1", { n: -0 });
    expect(validated).toHaveLength(2);
    expect(Object.is((executed[0] as { n: number }).n, -0)).toBe(true);
  });

  it("equal-looking arguments with an accessor: the getter never runs, the model reads TOOL_ARGUMENTS_INVALID", async () => {
    const { validated, executed, registry } = countingTool();
    const tool = piTool(registry);
    let reads = 0;
    const sly = {};
    Object.defineProperty(sly, "n", {
      enumerable: true,
      get: () => {
        reads += 1;
        return 1;
      },
    });
    tool.prepareArguments({ n: 1 });
    const outcome = await tool.execute("call-1", sly).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(reads).toBe(0);
    expect(argumentsRefusal(outcome)).toBe("arguments.n is an accessor");
    expect(validated).toHaveLength(1); // the precheck's own, on its snapshot
    expect(executed).toHaveLength(0);
  });

  it("equal-looking arguments behind a Proxy: no trap runs, the model reads TOOL_ARGUMENTS_INVALID", async () => {
    const { executed, registry } = countingTool();
    const tool = piTool(registry);
    let traps = 0;
    const proxy = new Proxy(
      { n: 1 },
      {
        get: (target, key) => {
          traps += 1;
          return Reflect.get(target, key);
        },
        ownKeys: (target) => {
          traps += 1;
          return Reflect.ownKeys(target);
        },
        getPrototypeOf: (target) => {
          traps += 1;
          return Reflect.getPrototypeOf(target);
        },
      },
    );
    tool.prepareArguments({ n: 1 });
    const outcome = await tool.execute("call-1", proxy).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(traps).toBe(0);
    expect(argumentsRefusal(outcome)).toBe("call.arguments must be a plain JSON object");
    expect(executed).toHaveLength(0);
  });

  it("nested arguments: taken only when every level matches in keys, order and values", async () => {
    const { validated, registry } = countingTool();
    const tool = piTool(registry);
    tool.prepareArguments({ n: { a: [1, "x", null, { b: true }] } });
    await tool.execute("call-1", { n: { a: [1, "x", null, { b: true }] } });
    tool.prepareArguments({ n: { a: [1, "x", null, { b: true }] } });
    await tool.execute("call-2", { n: { a: [1, "x", null, { b: false }] } });
    tool.prepareArguments({ n: { a: 1, b: 2 } });
    await tool.execute("call-3", { n: { b: 2, a: 1 } });
    expect(validated).toHaveLength(1 + 2 + 2);
  });

  it("an executor as the source validates on its own: the verdict is not handed across", async () => {
    const { validated, registry } = countingTool();
    const executor = new InProcessToolExecutor(registry);
    const tool = piTool(executor);
    tool.prepareArguments({ n: 1 });
    await tool.execute("call-1", { n: 1 });
    expect(validated).toHaveLength(2);
    await executor.close();
  });

  describe.each(PI_MAJORS)("in $name's agent loop", (major) => {
    it("each call's arguments are validated once, and each call gets its own value", async () => {
      const { validated, executed, registry } = countingTool();
      const tools = toPiAgentTools(registry);
      const run = major.agentLoop(
        tools,
        [
          major.assistant([major.toolCall("echo", { n: 1 }, "call-1"), major.toolCall("echo", { n: 2 }, "call-2")], "toolUse"),
          major.assistant("done"),
        ],
        undefined,
      );
      for await (const _event of run.events) {
        // drained
      }
      await run.result();
      expect(executed.map((value) => (value as { n: number }).n).sort()).toEqual([1, 2]);
      // Pi prepares both calls before it runs them: the second precheck's verdict replaces the first's.
      expect(validated).toHaveLength(3);
      for (const value of executed) expect(validated[(value as { run: number }).run - 1]).toEqual({ n: (value as { n: number }).n });
    });
  });
});
