// The tool contract, rule by rule (docs/contract.md, rules 1–13). Each
// describe block names the rule it pins down by number and title; hostile inputs count every
// read they receive.
import { getEventListeners } from "node:events";
import {
  COURSE_TOOL_MAX_COLLECTION_VISITS,
  COURSE_TOOL_MAX_CONTENT_CODE_POINTS,
  COURSE_TOOL_MAX_NODES,
  COURSE_TOOL_TRUNCATION_MARKER,
  type CourseToolResultMessage,
  defineTool,
  executeToolCall,
  isNonRecoverableToolError,
  isToolContractError,
  type JsonValue,
  NonRecoverableToolError,
  ToolContractError,
  ToolRegistry,
} from "toolgate";
import { describe, expect, test, vi } from "vitest";
import { expectContractError } from "../support/assertions.js";
import { call, codePoints, errorOf, neverAborted } from "../support/helpers.js";

function echoTool(name = "echo") {
  return defineTool({
    name,
    description: "Echo the arguments.",
    validate: (args) => ({ ok: true, value: args }),
    execute: async (args) => args,
  });
}

/** A tool whose output is whatever `produce` returns (for serializer rules). */
function outputTool(produce: () => unknown) {
  return new ToolRegistry([
    defineTool({ name: "out", description: "Produce output.", validate: () => ({ ok: true, value: null }), execute: produce }),
  ]);
}

async function serialized(produce: () => unknown): Promise<CourseToolResultMessage> {
  return executeToolCall(outputTool(produce), call("out", {}), neverAborted());
}

test("argument validation runs before effects and preserves validation details", async () => {
  const execute = vi.fn(async () => ({ unreachable: true }));
  const registry = new ToolRegistry([
    defineTool({
      name: "add",
      description: "Add numbers.",
      validate: () => ({ ok: false, error: "left must be a number" }),
      execute,
    }),
  ]);

  await expect(
    executeToolCall(registry, call("add", { left: "twenty", right: 22 }, "call-invalid-add"), new AbortController().signal),
  ).resolves.toMatchObject({
    toolCallId: "call-invalid-add",
    toolName: "add",
    isError: true,
    content: '{"error":{"code":"TOOL_ARGUMENTS_INVALID","message":"left must be a number"}}',
  });
  expect(execute).not.toHaveBeenCalled();
});

test("the seed's failure experiment: an accepting validator calls the spy once and succeeds", async () => {
  const execute = vi.fn(async (args: { left: number; right: number }) => ({ sum: args.left + args.right }));
  const registry = new ToolRegistry([
    defineTool({
      name: "add",
      description: "Add numbers.",
      validate: () => ({ ok: true, value: { left: 20, right: 22 } }),
      execute,
    }),
  ]);
  const result = await executeToolCall(registry, call("add", { left: "twenty", right: 22 }, "call-add"), neverAborted());
  expect(execute).toHaveBeenCalledTimes(1);
  expect(result).toMatchObject({ toolCallId: "call-add", isError: false, content: '{"sum":42}' });
});

describe("rule 1 — definition snapshot: defineTool snapshots four own fields, each read once", () => {
  test("each field is read exactly once, through own getters", () => {
    const reads = { name: 0, description: 0, validate: 0, execute: 0 };
    const definition = {
      get name() {
        reads.name += 1;
        return "counted";
      },
      get description() {
        reads.description += 1;
        return "Counts reads.";
      },
      get validate() {
        reads.validate += 1;
        return () => ({ ok: true, value: null });
      },
      get execute() {
        reads.execute += 1;
        return () => "ok";
      },
    };
    const tool = defineTool(definition);
    expect(reads).toEqual({ name: 1, description: 1, validate: 1, execute: 1 });
    expect(tool.name).toBe("counted");
    expect(Object.isFrozen(tool)).toBe(true);
    expect(reads).toEqual({ name: 1, description: 1, validate: 1, execute: 1 });
  });

  test("an inherited field is rejected without calling the inherited getter", () => {
    const inheritedGetter = vi.fn(() => "inherited");
    const proto = Object.defineProperty({}, "name", { get: inheritedGetter });
    const definition = Object.assign(Object.create(proto), {
      description: "Inherits its name.",
      validate: () => ({ ok: true, value: null }),
      execute: () => null,
    });
    expect(() => defineTool(definition)).toThrow(ToolContractError);
    expect(inheritedGetter).not.toHaveBeenCalled();
    try {
      defineTool(definition);
    } catch (error) {
      expect((error as ToolContractError).code).toBe("INVALID_TOOL_DEFINITION");
      expect((error as Error).message).toContain('"name"');
    }
  });

  test.each<[string, unknown]>([
    ["an empty name", { name: "", description: "d", validate: () => null, execute: () => null }],
    ["a non-string description", { name: "n", description: 3, validate: () => null, execute: () => null }],
    ["an empty description", { name: "n", description: "", validate: () => null, execute: () => null }],
    ["a non-function validate", { name: "n", description: "d", validate: "yes", execute: () => null }],
    ["a missing execute", { name: "n", description: "d", validate: () => null }],
    ["a Proxy definition", new Proxy({ name: "n", description: "d", validate: () => null, execute: () => null }, {})],
    ["null", null],
  ])("%s is an INVALID_TOOL_DEFINITION", (_label, definition) => {
    let caught: unknown;
    try {
      defineTool(definition as never);
    } catch (error) {
      caught = error;
    }
    expect(isToolContractError(caught)).toBe(true);
    expect((caught as ToolContractError).code).toBe("INVALID_TOOL_DEFINITION");
  });

  test("a throwing getter becomes a clear INVALID_TOOL_DEFINITION", () => {
    const definition = {
      name: "n",
      get description(): string {
        throw new Error("hostile");
      },
      validate: () => ({ ok: true, value: null }),
      execute: () => null,
    };
    expect(() => defineTool(definition)).toThrow(/description/);
  });

  test("later changes to the caller's object, the functions or Function.prototype cannot redirect the tool", async () => {
    // Plain counting functions, not vi.fn(): spies call through Function.prototype.apply.
    const calls = { validate: 0, execute: 0, hijacked: 0 };
    const originalValidate = () => {
      calls.validate += 1;
      return { ok: true as const, value: "validated" };
    };
    const originalExecute = async (value: string) => {
      calls.execute += 1;
      return `ran with ${value}`;
    };
    const hijack = () => {
      calls.hijacked += 1;
      return { ok: false as const, error: "hijacked" };
    };
    const definition = { name: "stable", description: "Stays put.", validate: originalValidate, execute: originalExecute };
    const registry = new ToolRegistry([defineTool(definition)]);

    definition.name = "renamed";
    definition.validate = hijack as never;
    definition.execute = hijack as never;
    Object.assign(originalValidate, { call: hijack, apply: hijack, bind: hijack });
    Object.assign(originalExecute, { call: hijack, apply: hijack, bind: hijack });
    const { call: realCall, apply: realApply } = Function.prototype;
    Function.prototype.call = function hijackedCall() {
      throw new Error("Function.prototype.call was used");
    };
    Function.prototype.apply = function hijackedApply() {
      throw new Error("Function.prototype.apply was used");
    };
    let result: CourseToolResultMessage;
    try {
      result = await executeToolCall(registry, call("stable", {}), neverAborted());
    } finally {
      Function.prototype.call = realCall;
      Function.prototype.apply = realApply;
    }
    expect(registry.names()).toEqual(["stable"]);
    expect(result).toMatchObject({ isError: false, content: "ran with validated" });
    expect(calls).toEqual({ validate: 1, execute: 1, hijacked: 0 });
  });

  test("the snapshot is frozen and a snapshot passed again is reused as is", () => {
    const tool = echoTool();
    expect(Object.isFrozen(tool)).toBe(true);
    expect(Object.isFrozen(tool.validate)).toBe(true);
    expect(defineTool(tool)).toBe(tool);
    expect(Object.keys(tool).sort()).toEqual(["description", "execute", "name", "validate"]);
  });
});

describe("rule 2 — atomic registration: registerMany is atomic", () => {
  const valid = (name: string) => ({ name, description: "d", validate: () => ({ ok: true as const, value: null }), execute: () => null });

  test("a hostile definition at position 2 leaves the registry exactly as it was", () => {
    const registry = new ToolRegistry([valid("existing")]);
    const hostile = {
      name: "hostile",
      description: "d",
      get validate(): never {
        throw new Error("boom");
      },
      execute: () => null,
    };
    expect(() => registry.registerMany([valid("first"), hostile, valid("third")])).toThrow(ToolContractError);
    expect(registry.names()).toEqual(["existing"]);
    expect(registry.size).toBe(1);
    expect(registry.has("first")).toBe(false);
  });

  test("a sparse array is refused and changes nothing", () => {
    const registry = new ToolRegistry();
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point
    const sparse = [valid("a"), , valid("c")] as unknown as ReturnType<typeof valid>[];
    let caught: unknown;
    try {
      registry.registerMany(sparse);
    } catch (error) {
      caught = error;
    }
    expect((caught as ToolContractError).code).toBe("INVALID_TOOL_DEFINITION");
    expect((caught as Error).message).toContain("tools[1]");
    expect(registry.size).toBe(0);
  });

  test("a duplicate inside the batch is refused and changes nothing", () => {
    const registry = new ToolRegistry([valid("kept")]);
    expect(() => registry.registerMany([valid("a"), valid("b"), valid("a")])).toThrow(/appears twice/);
    try {
      registry.registerMany([valid("a"), valid("a")]);
    } catch (error) {
      expect((error as ToolContractError).code).toBe("DUPLICATE_TOOL_NAME");
    }
    expect(registry.names()).toEqual(["kept"]);
  });

  test("a name already registered is refused and changes nothing", () => {
    const registry = new ToolRegistry([valid("taken")]);
    const original = registry.get("taken");
    expect(() => registry.registerMany([valid("new"), valid("taken")])).toThrow(/already registered/);
    expect(() => registry.register(valid("taken"))).toThrow(ToolContractError);
    expect(registry.names()).toEqual(["taken"]);
    expect(registry.get("taken")).toBe(original);
  });

  test("any iterable works, and a throwing iterator is a contract error that changes nothing", () => {
    const registry = new ToolRegistry(new Set([valid("from-set")]));
    function* hostile() {
      yield valid("yielded");
      throw new Error("iterator broke");
    }
    expect(() => registry.registerMany(hostile())).toThrow(ToolContractError);
    expect(registry.names()).toEqual(["from-set"]);
  });

  test("the registry does not depend on Map.prototype staying intact", () => {
    const registry = new ToolRegistry([valid("a")]);
    const { set, get, has } = Map.prototype;
    Map.prototype.set = function patchedSet() {
      throw new Error("patched set");
    };
    Map.prototype.get = () => undefined;
    Map.prototype.has = () => false;
    try {
      registry.register(valid("b"));
      expect(registry.get("a")?.name).toBe("a");
      expect(registry.has("b")).toBe(true);
    } finally {
      Object.assign(Map.prototype, { set, get, has });
    }
    expect(registry.names()).toEqual(["a", "b"]);
  });
});

describe("rule 3 — registry snapshot: snapshot() copies membership and reuses the frozen tools", () => {
  test("same tool objects, independent membership", () => {
    const registry = new ToolRegistry([echoTool("a"), echoTool("b")]);
    const copy = registry.snapshot();
    expect(copy.get("a")).toBe(registry.get("a"));
    expect(copy.get("b")).toBe(registry.get("b"));
    copy.register(echoTool("only-in-copy"));
    registry.register(echoTool("only-in-original"));
    expect(copy.names()).toEqual(["a", "b", "only-in-copy"]);
    expect(registry.names()).toEqual(["a", "b", "only-in-original"]);
  });
});

describe("rule 4 — call snapshot: the signal is checked first, then the call is snapshotted", () => {
  test("an aborted signal wins over a malformed call", async () => {
    const controller = new AbortController();
    const reason = new Error("stop");
    controller.abort(reason);
    await expect(executeToolCall(new ToolRegistry(), { not: "a call" }, controller.signal)).rejects.toBe(reason);
  });

  const args = { ok: 1 };
  const sparseArgs = [1, 2];
  delete sparseArgs[0];
  class Point {
    x = 1;
  }
  test.each<[string, unknown]>([
    ["null", null],
    ["a string", "toolCall"],
    ["an array", [call("echo", {})]],
    ["a wrong type", { type: "function", id: "c", name: "echo", arguments: args }],
    ["an empty id", { type: "toolCall", id: "", name: "echo", arguments: args }],
    ["a numeric id", { type: "toolCall", id: 7, name: "echo", arguments: args }],
    ["a missing name", { type: "toolCall", id: "c", arguments: args }],
    ["an empty name", { type: "toolCall", id: "c", name: "", arguments: args }],
    ["array arguments", { type: "toolCall", id: "c", name: "echo", arguments: [] }],
    ["null arguments", { type: "toolCall", id: "c", name: "echo", arguments: null }],
    ["NaN in arguments", call("echo", { n: Number.NaN })],
    ["Infinity in arguments", call("echo", { n: Number.POSITIVE_INFINITY })],
    ["undefined in arguments", call("echo", { n: undefined as unknown as JsonValue })],
    ["a function in arguments", call("echo", { f: (() => 1) as unknown as JsonValue })],
    ["a BigInt in arguments", call("echo", { b: 1n as unknown as JsonValue })],
    ["a Date in arguments", call("echo", { d: new Date() as unknown as JsonValue })],
    ["a class instance in arguments", call("echo", { p: new Point() as unknown as JsonValue })],
    ["a sparse array in arguments", call("echo", { list: sparseArgs })],
    ["a symbol key in arguments", call("echo", { [Symbol("s")]: 1 } as unknown as Record<string, JsonValue>)],
    ["a non-enumerable argument", call("echo", Object.defineProperty({}, "hidden", { value: 1, enumerable: false }))],
    ["a class-instance call", Object.assign(new Point(), call("echo", {}))],
    ["a typed array posing as a plain object", call("echo", { t: Object.setPrototypeOf(new Uint8Array(3), Object.prototype) })],
  ])("%s is INVALID_TOOL_CALL", async (_label, malformed) => {
    await expectContractError(executeToolCall(new ToolRegistry([echoTool()]), malformed, neverAborted()), "INVALID_TOOL_CALL");
  });

  test("accessors are refused without being called, at any depth", async () => {
    const getter = vi.fn(() => "x");
    const topLevel = {
      type: "toolCall",
      id: "c",
      get name() {
        return getter();
      },
      arguments: {},
    };
    const nested = call("echo", { outer: Object.defineProperty({}, "inner", { get: getter, enumerable: true }) as JsonValue });
    const registry = new ToolRegistry([echoTool()]);
    await expectContractError(executeToolCall(registry, topLevel, neverAborted()), "INVALID_TOOL_CALL");
    await expectContractError(executeToolCall(registry, nested, neverAborted()), "INVALID_TOOL_CALL");
    expect(getter).not.toHaveBeenCalled();
  });

  test.each(["type", "id", "name", "arguments"])(
    "a setter-only %s on the call is refused as an accessor, its setter never called",
    async (key) => {
      const setter = vi.fn();
      const malformed = Object.defineProperty({ ...call("echo", {}) }, key, { set: setter, enumerable: true });
      const error = await expectContractError(
        executeToolCall(new ToolRegistry([echoTool()]), malformed, neverAborted()),
        "INVALID_TOOL_CALL",
      );
      expect(error.message).toBe(`call.${key} is an accessor; only data properties are read`);
      expect(setter).not.toHaveBeenCalled();
    },
  );

  test("Proxies are refused without touching a trap, at any depth", async () => {
    const trap = vi.fn();
    const handler = { get: trap, getOwnPropertyDescriptor: trap, ownKeys: trap, getPrototypeOf: trap, has: trap };
    const registry = new ToolRegistry([echoTool()]);
    await expectContractError(executeToolCall(registry, new Proxy(call("echo", {}), handler), neverAborted()), "INVALID_TOOL_CALL");
    await expectContractError(
      executeToolCall(registry, call("echo", { list: new Proxy([1], handler) as unknown as JsonValue }), neverAborted()),
      "INVALID_TOOL_CALL",
    );
    expect(trap).not.toHaveBeenCalled();
  });

  test("circular arguments are refused", async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expectContractError(
      executeToolCall(new ToolRegistry([echoTool()]), call("echo", cyclic as Record<string, JsonValue>), neverAborted()),
      "INVALID_TOOL_CALL",
    );
  });

  test("mutating the caller's call after the start changes nothing the validator or tool sees", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const seenByValidator: unknown[] = [];
    const seenByTool: unknown[] = [];
    const registry = new ToolRegistry([
      defineTool({
        name: "slow",
        description: "Waits, then reports what it got.",
        validate: (args) => {
          seenByValidator.push(args);
          return { ok: true, value: args };
        },
        execute: async (args) => {
          await gate;
          seenByTool.push(JSON.parse(JSON.stringify(args)));
          return args;
        },
      }),
    ]);
    const original = call("slow", { path: "/tmp/a", nested: { list: [1, 2, 3] } }, "call-mutated");
    const pending = executeToolCall(registry, original, neverAborted());
    original.id = "call-other";
    original.name = "other";
    (original.arguments.nested as { list: number[] }).list.push(4);
    original.arguments.path = "/etc/passwd";
    release();
    const result = await pending;
    expect(seenByTool).toEqual([{ path: "/tmp/a", nested: { list: [1, 2, 3] } }]);
    expect(Object.isFrozen(seenByValidator[0])).toBe(true);
    expect(Object.isFrozen((seenByValidator[0] as { nested: { list: number[] } }).nested.list)).toBe(true);
    expect(result).toMatchObject({ toolCallId: "call-mutated", toolName: "slow" });
    expect(JSON.parse(result.content)).toEqual({ nested: { list: [1, 2, 3] }, path: "/tmp/a" });
  });

  test('a "__proto__" argument stays an ordinary key of the snapshot', async () => {
    const registry = new ToolRegistry([echoTool()]);
    const args = JSON.parse('{"__proto__": {"polluted": true}, "x": 1}');
    const result = await executeToolCall(registry, call("echo", args), neverAborted());
    expect(JSON.parse(result.content)).toEqual(JSON.parse('{"__proto__": {"polluted": true}, "x": 1}'));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test("a registry or signal of the wrong kind is a contract error", async () => {
    const fakeRegistry = Object.create(ToolRegistry.prototype) as ToolRegistry;
    await expectContractError(executeToolCall(fakeRegistry, call("echo", {}), neverAborted()), "INVALID_ARGUMENT");
    await expectContractError(executeToolCall(new ToolRegistry(), call("echo", {}), { aborted: false } as AbortSignal), "INVALID_ARGUMENT");
  });
});

describe("rule 5 — unknown tool: an unregistered tool is a linked TOOL_NOT_FOUND result", () => {
  test("no throw, no registry change, and the message names what is registered", async () => {
    const registry = new ToolRegistry([echoTool("search"), echoTool("read_file")]);
    const result = await executeToolCall(registry, call("serach", {}, "call-typo"), neverAborted());
    expect(result).toMatchObject({ id: "tool-result-call-typo", toolCallId: "call-typo", toolName: "serach", isError: true });
    expect(errorOf(result)).toEqual({
      code: "TOOL_NOT_FOUND",
      message: 'Tool "serach" is not registered. Available tools: search, read_file.',
    });
    expect(registry.names()).toEqual(["search", "read_file"]);
  });

  test("the list of names is bounded", async () => {
    const registry = new ToolRegistry(Array.from({ length: 40 }, (_, index) => echoTool(`tool_${index}`)));
    const { message } = errorOf(await executeToolCall(registry, call("missing".repeat(100), {}), neverAborted()));
    expect(message).toContain("tool_31, and 8 more.");
    expect(message).not.toContain("tool_32");
    expect(message.length).toBeLessThan(1000);
  });
});

describe("rule 6 — validation first: validate runs first, synchronously, and its decision is read strictly", () => {
  function validating(validate: (args: unknown) => unknown) {
    const execute = vi.fn(() => "ran");
    const registry = new ToolRegistry([defineTool({ name: "v", description: "Validated.", validate: validate as never, execute })]);
    return { registry, execute };
  }

  test("a throwing validator gives TOOL_VALIDATION_FAILED with its message", async () => {
    const { registry, execute } = validating(() => {
      throw new TypeError("schema exploded");
    });
    const result = await executeToolCall(registry, call("v", {}), neverAborted());
    expect(errorOf(result)).toEqual({ code: "TOOL_VALIDATION_FAILED", message: "TypeError: schema exploded" });
    expect(execute).not.toHaveBeenCalled();
  });

  const okGetter = vi.fn(() => true);
  test.each<[string, unknown]>([
    ["null", null],
    ["a boolean", true],
    ["ok that is not boolean", { ok: "yes", value: 1 }],
    ["ok: true without value", { ok: true }],
    ["ok: false without error", { ok: false }],
    ["an inherited ok", Object.create({ ok: true, value: 1 })],
    ["an accessor ok", Object.defineProperty({ value: 1 }, "ok", { get: okGetter, enumerable: true })],
    ["a setter-only ok", Object.defineProperty({ value: 1 }, "ok", { set: okGetter, enumerable: true })],
    ["a setter-only value", Object.defineProperty({ ok: true }, "value", { set: okGetter, enumerable: true })],
    ["a setter-only error", Object.defineProperty({ ok: false }, "error", { set: okGetter, enumerable: true })],
    [
      "a Proxy decision",
      new Proxy({ ok: true, value: 1 }, { get: okGetter, getOwnPropertyDescriptor: okGetter } as unknown as ProxyHandler<object>),
    ],
  ])("a malformed decision (%s) gives TOOL_VALIDATION_FAILED", async (_label, decision) => {
    const { registry, execute } = validating(() => decision);
    const result = await executeToolCall(registry, call("v", {}), neverAborted());
    expect(errorOf(result).code).toBe("TOOL_VALIDATION_FAILED");
    expect(execute).not.toHaveBeenCalled();
    expect(okGetter).not.toHaveBeenCalled();
  });

  test("a rejected Promise from validate is refused and its rejection is observed", async () => {
    const unhandled = vi.fn();
    process.on("unhandledRejection", unhandled);
    try {
      const { registry, execute } = validating(async () => {
        throw new Error("async validators are not allowed");
      });
      const result = await executeToolCall(registry, call("v", {}), neverAborted());
      expect(errorOf(result).code).toBe("TOOL_VALIDATION_FAILED");
      expect(errorOf(result).message).toContain("Promise");
      expect(execute).not.toHaveBeenCalled();
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off("unhandledRejection", unhandled);
    }
  });

  test("a thenable from validate is refused, and observed through its own then", async () => {
    const then = vi.fn();
    const { registry, execute } = validating(() => ({ ok: true, value: 1, then }));
    const result = await executeToolCall(registry, call("v", {}), neverAborted());
    expect(errorOf(result)).toMatchObject({ code: "TOOL_VALIDATION_FAILED" });
    expect(errorOf(result).message).toContain("thenable");
    expect(then).toHaveBeenCalledTimes(1);
    expect(execute).not.toHaveBeenCalled();
  });

  test("structured validation details are carried as readable JSON", async () => {
    const { registry } = validating(() => ({ ok: false, error: { path: "/left", expected: "number" } }));
    const result = await executeToolCall(registry, call("v", {}), neverAborted());
    expect(errorOf(result)).toEqual({ code: "TOOL_ARGUMENTS_INVALID", message: '{"expected":"number","path":"/left"}' });
  });
});

describe("rule 7 — execution context: execute gets the validated value and a frozen { signal, toolCallId }", () => {
  test("the value, not the raw arguments, and the very same signal", async () => {
    const seen: { args: unknown; context: unknown }[] = [];
    const registry = new ToolRegistry([
      defineTool({
        name: "ctx",
        description: "Records its context.",
        validate: (args) => ({ ok: true, value: { coerced: Number((args as { n: string }).n) } }),
        execute: (args, context) => {
          seen.push({ args, context });
          return "ok";
        },
      }),
    ]);
    const signal = neverAborted();
    await executeToolCall(registry, call("ctx", { n: "41" }, "call-ctx"), signal);
    expect(seen[0]?.args).toEqual({ coerced: 41 });
    const context = seen[0]?.context as { signal: AbortSignal; toolCallId: string };
    expect(Object.isFrozen(context)).toBe(true);
    expect(context.signal).toBe(signal);
    expect(context.toolCallId).toBe("call-ctx");
    expect(Object.keys(context).sort()).toEqual(["reportProgress", "signal", "toolCallId"]);
  });
});

describe("rule 8 — abort wins: abort is checked at every boundary and never becomes a result", () => {
  test("checked before validation: the validator never runs", async () => {
    const controller = new AbortController();
    controller.abort("early");
    const validate = vi.fn(() => ({ ok: true as const, value: null }));
    const registry = new ToolRegistry([defineTool({ name: "t", description: "d", validate, execute: () => null })]);
    await expect(executeToolCall(registry, call("t", {}), controller.signal)).rejects.toBe("early");
    expect(validate).not.toHaveBeenCalled();
  });

  test("checked after validation: a validator that aborts the run keeps execute from running", async () => {
    const controller = new AbortController();
    const reason = new Error("user pressed stop during validation");
    const execute = vi.fn();
    const registry = new ToolRegistry([
      defineTool({
        name: "t",
        description: "d",
        validate: () => {
          controller.abort(reason);
          return { ok: false, error: "would have been a result" };
        },
        execute,
      }),
    ]);
    await expect(executeToolCall(registry, call("t", {}), controller.signal)).rejects.toBe(reason);
    expect(execute).not.toHaveBeenCalled();
  });

  test("while awaiting execute: abort rejects at once, without waiting for the tool", async () => {
    const controller = new AbortController();
    const sawAbort = vi.fn();
    const registry = new ToolRegistry([
      defineTool({
        name: "hang",
        description: "Never settles on its own.",
        validate: () => ({ ok: true, value: null }),
        execute: (_args, { signal }) => {
          signal.addEventListener("abort", sawAbort);
          return new Promise(() => {});
        },
      }),
    ]);
    const reason = new DOMException("aborted by test", "AbortError");
    const pending = executeToolCall(registry, call("hang", {}), controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(sawAbort).toHaveBeenCalledTimes(1);
  });

  test("after the tool settles: a tool that aborts and then resolves produces no result", async () => {
    const controller = new AbortController();
    const registry = new ToolRegistry([
      defineTool({
        name: "late",
        description: "Resolves after the run was aborted.",
        validate: () => ({ ok: true, value: null }),
        execute: () => {
          controller.abort("aborted while running");
          return "a result nobody may see";
        },
      }),
    ]);
    await expect(executeToolCall(registry, call("late", {}), controller.signal)).rejects.toBe("aborted while running");
  });

  test("an abort a few microtasks after the tool resolved still wins, until the result is published", async () => {
    const outcomes: string[] = [];
    for (let delay = 0; delay < 12; delay += 1) {
      const controller = new AbortController();
      let resolvedAt = -1;
      const registry = new ToolRegistry([
        defineTool({
          name: "quick",
          description: "Resolves, then the run is aborted `delay` microtasks later.",
          validate: () => ({ ok: true, value: null }),
          execute: () => {
            let chain = Promise.resolve();
            for (let tick = 0; tick < delay; tick += 1) chain = chain.then(() => {});
            void chain.then(() => controller.abort("late abort"));
            resolvedAt = delay;
            return Promise.resolve("done");
          },
        }),
      ]);
      outcomes.push(
        await executeToolCall(registry, call("quick", {}), controller.signal).then(
          (result) => (result.isError ? "error" : "result"),
          (reason: unknown) => (reason === "late abort" ? "aborted" : "other"),
        ),
      );
      expect(resolvedAt).toBe(delay);
    }
    // The tool's promise was already resolved in every round; abort still wins for the
    // first rounds (after settle, after serialization, before publishing), then the result
    // is published and later aborts cannot retract it. Never anything else.
    const firstResult = outcomes.indexOf("result");
    expect(outcomes.slice(0, 2)).toEqual(["aborted", "aborted"]);
    expect(firstResult).toBeGreaterThan(1);
    expect(outcomes.slice(firstResult).every((outcome) => outcome === "result")).toBe(true);
    expect(outcomes.slice(0, firstResult).every((outcome) => outcome === "aborted")).toBe(true);
  });

  test("a long-lived run signal gets one shared listener, not one per call", async () => {
    const controller = new AbortController();
    const add = vi.spyOn(controller.signal, "addEventListener");
    const registry = new ToolRegistry([echoTool()]);
    for (let index = 0; index < 50; index += 1) await executeToolCall(registry, call("echo", { index }), controller.signal);
    // The boundary uses the captured intrinsic, not the instance's method...
    expect(add).not.toHaveBeenCalled();
    // ...and 50 calls later the signal carries a single listener: no growth per call.
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    // That one listener still serves: a call in flight rejects at once on abort.
    const hanging = new ToolRegistry([
      defineTool({ name: "hang", description: "d", validate: () => ({ ok: true, value: null }), execute: () => new Promise(() => {}) }),
    ]);
    const pending = executeToolCall(hanging, call("hang", {}), controller.signal);
    controller.abort("stop");
    await expect(pending).rejects.toBe("stop");
  });
});

describe("rule 9 — failure classification: ordinary failures are recoverable; genuine NonRecoverableToolErrors escape", () => {
  function throwing(thrown: () => unknown) {
    return new ToolRegistry([
      defineTool({ name: "fail", description: "Fails.", validate: () => ({ ok: true, value: null }), execute: thrown as never }),
    ]);
  }
  const run = (registry: ToolRegistry) => executeToolCall(registry, call("fail", {}, "call-fail"), neverAborted());

  test("a thrown Error and a rejected promise become TOOL_EXECUTION_FAILED", async () => {
    const thrown = await run(
      throwing(() => {
        throw new RangeError("disk full");
      }),
    );
    expect(thrown).toMatchObject({ isError: true, toolCallId: "call-fail" });
    expect(errorOf(thrown)).toEqual({ code: "TOOL_EXECUTION_FAILED", message: "RangeError: disk full" });
    const rejected = await run(throwing(() => Promise.reject(new Error("network down"))));
    expect(errorOf(rejected)).toEqual({ code: "TOOL_EXECUTION_FAILED", message: "network down" });
  });

  test("normalizing never throws and never runs the thrown value's code", async () => {
    const touched = vi.fn(() => {
      throw new Error("touched");
    });
    const hostileError = new Error("real message");
    Object.defineProperty(hostileError, "name", { get: touched });
    const hostileObject = {
      get message() {
        return touched();
      },
      toString: touched,
      toJSON: touched,
    };
    const trapProxy = new Proxy({}, { get: touched, getOwnPropertyDescriptor: touched, getPrototypeOf: touched, ownKeys: touched });
    const cases: [unknown, string][] = [
      [null, "null"],
      [undefined, "undefined"],
      [Symbol("odd"), "Symbol(odd)"],
      [42n, "42"],
      ["plain string", "plain string"],
      [trapProxy, "a Proxy was thrown"],
      [hostileError, "real message"],
      [hostileObject, "{}"],
    ];
    for (const [value, message] of cases) {
      const result = await run(
        throwing(() => {
          throw value;
        }),
      );
      expect(errorOf(result)).toEqual({ code: "TOOL_EXECUTION_FAILED", message });
    }
    expect(touched).not.toHaveBeenCalled();
  });

  test("a DOMException reads `Name: message` from its own slots, on every Node (a native error since Node 22)", async () => {
    // Node >= 22 makes a DOMException with the Error constructor (util.types.isNativeError is
    // true), yet its name and message stay getters on DOMException.prototype.
    const touched = vi.fn(() => "touched");
    const planted = new DOMException("not allowed here", "NotAllowedError");
    Object.defineProperty(planted, "message", { get: touched });
    Object.defineProperty(planted, "name", { get: touched });
    let cloneError: unknown;
    try {
      structuredClone(() => 1);
    } catch (error) {
      cloneError = error;
    }
    class QuotaDOMException extends DOMException {}
    const cases: [unknown, string][] = [
      [new DOMException("not allowed here", "NotAllowedError"), "NotAllowedError: not allowed here"],
      [planted, "NotAllowedError: not allowed here"],
      [new QuotaDOMException("over quota", "QuotaExceededError"), "QuotaExceededError: over quota"],
      [new DOMException("", "AbortError"), "AbortError"],
      [cloneError, `DataCloneError: ${(cloneError as DOMException).message}`],
      // Look-alikes fail the brand check and are read as the data they carry.
      [Object.create(DOMException.prototype, { name: { value: "Fake" }, message: { value: "look-alike" } }), "Fake: look-alike"],
    ];
    for (const [value, message] of cases) {
      const result = await run(
        throwing(() => {
          throw value;
        }),
      );
      expect(errorOf(result)).toEqual({ code: "TOOL_EXECUTION_FAILED", message });
    }
    expect(touched).not.toHaveBeenCalled();
  });

  test("a genuine NonRecoverableToolError, subclasses included, rejects with the error itself", async () => {
    class InvariantBroken extends NonRecoverableToolError {}
    const fatal = new NonRecoverableToolError("ledger out of balance");
    await expect(
      run(
        throwing(() => {
          throw fatal;
        }),
      ),
    ).rejects.toBe(fatal);
    const sub = new InvariantBroken("sub");
    await expect(run(throwing(() => Promise.reject(sub)))).rejects.toBe(sub);
    expect(isNonRecoverableToolError(sub)).toBe(true);
  });

  test("look-alikes stay recoverable", async () => {
    const fakes: unknown[] = [
      Object.create(NonRecoverableToolError.prototype),
      Object.assign(new Error("fake"), { name: "NonRecoverableToolError" }),
      { name: "NonRecoverableToolError", message: "fields only" },
      Object.setPrototypeOf(new Error("re-parented"), NonRecoverableToolError.prototype),
    ];
    for (const fake of fakes) {
      expect(isNonRecoverableToolError(fake)).toBe(false);
      const result = await run(
        throwing(() => {
          throw fake;
        }),
      );
      expect(errorOf(result).code).toBe("TOOL_EXECUTION_FAILED");
    }
  });

  test("a reloaded copy of the module recognises (and is recognised by) the realm-wide registry", async () => {
    // A query string makes the loader create a second, independent module instance.
    const url = new URL(`../../dist/src/contract/errors.js?copy=${Date.now()}`, import.meta.url).href;
    const copy = (await import(/* @vite-ignore */ url)) as typeof import("toolgate");
    expect(copy.NonRecoverableToolError).not.toBe(NonRecoverableToolError);
    const fromCopy = new copy.NonRecoverableToolError("thrown by a tool bundling its own toolgate");
    expect(isNonRecoverableToolError(fromCopy)).toBe(true);
    expect(copy.isNonRecoverableToolError(new NonRecoverableToolError("ours"))).toBe(true);
    await expect(
      run(
        throwing(() => {
          throw fromCopy;
        }),
      ),
    ).rejects.toBe(fromCopy);
    // ToolContractError ownership is module-local: the copy's errors are not ours.
    const foreignContractError = new copy.ToolContractError("INVALID_TOOL_CALL", "from the copy");
    expect(isToolContractError(foreignContractError)).toBe(false);
    const result = await run(
      throwing(() => {
        throw foreignContractError;
      }),
    );
    expect(errorOf(result)).toEqual({ code: "TOOL_EXECUTION_FAILED", message: "ToolContractError: from the copy" });
  });

  test("a ToolContractError look-alike thrown by a tool is an ordinary failure", async () => {
    const lookAlike = Object.assign(Object.create(ToolContractError.prototype), { code: "INVALID_TOOL_CALL", message: "fake" });
    expect(isToolContractError(lookAlike)).toBe(false);
    const result = await run(
      throwing(() => {
        throw lookAlike;
      }),
    );
    expect(errorOf(result).code).toBe("TOOL_EXECUTION_FAILED");
  });
});

describe("rule 10 — safe serialization: the serializer calls no code supplied by the value", () => {
  test("toJSON, getters and Proxy traps are never called", async () => {
    const touched = vi.fn(() => "touched");
    const value = {
      b: 2,
      a: 1,
      toJSON: touched,
      get secret() {
        return touched();
      },
      nested: { toJSON: touched, keep: true },
    };
    const result = await serialized(() => value);
    expect(result).toMatchObject({ isError: false, content: '{"a":1,"b":2,"nested":{"keep":true}}' });
    expect(touched).not.toHaveBeenCalled();

    const trap = vi.fn();
    const proxied = await serialized(() => ({ inner: new Proxy({}, { get: trap, ownKeys: trap, getPrototypeOf: trap }) }));
    expect(errorOf(proxied)).toEqual({ code: "TOOL_OUTPUT_SERIALIZATION_FAILED", message: "output contains a Proxy at $.inner" });
    expect(trap).not.toHaveBeenCalled();
  });

  test("Maps and Sets go through intrinsic iterators, never the instance's or a patched prototype's", async () => {
    const touched = vi.fn();
    const map = new Map<unknown, unknown>([
      ["k", 1],
      [2, new Set(["x", "y"])],
    ]);
    Object.assign(map, { entries: touched, forEach: touched, keys: touched, values: touched, [Symbol.iterator]: touched });
    const { entries, values } = Map.prototype;
    const setValues = Set.prototype.values;
    Map.prototype.entries = touched as never;
    Map.prototype.values = touched as never;
    Set.prototype.values = touched as never;
    let result: CourseToolResultMessage;
    try {
      result = await serialized(() => ({ map }));
    } finally {
      Map.prototype.entries = entries;
      Map.prototype.values = values;
      Set.prototype.values = setValues;
    }
    expect(result.content).toBe('{"map":[["k",1],[2,["x","y"]]]}');
    expect(touched).not.toHaveBeenCalled();
  });

  test("plain and null-prototype objects are accepted; keys are sorted; accessors skipped", async () => {
    const bare = Object.assign(Object.create(null), { z: 1, a: { y: [], b: null } });
    Object.defineProperty(bare, "accessor", { get: () => 1, enumerable: true });
    expect((await serialized(() => bare)).content).toBe('{"a":{"b":null,"y":[]},"z":1}');
  });

  test("cycles become a marker; shared references are rendered each time", async () => {
    const shared = { v: 1 };
    const cyclic: Record<string, unknown> = { shared, again: shared, list: [] };
    (cyclic.list as unknown[]).push(cyclic);
    expect((await serialized(() => cyclic)).content).toBe('{"again":{"v":1},"list":["[Circular]"],"shared":{"v":1}}');
  });

  test.each<[string, () => unknown]>([
    ["a class instance", () => ({ when: new (class Clock {})() })],
    ["a boxed primitive", () => ({ s: Object(1) })],
    ["a typed array", () => new Uint8Array(4)],
    ["an Error", () => new Error("returned, not thrown")],
    ["an array with a swapped prototype", () => Object.setPrototypeOf([1, 2], null)],
    ["a top-level function", () => () => 1],
  ])("%s gives TOOL_OUTPUT_SERIALIZATION_FAILED", async (_label, produce) => {
    expect(errorOf(await serialized(produce)).code).toBe("TOOL_OUTPUT_SERIALIZATION_FAILED");
  });

  test("functions, symbols and undefined are omitted as JSON.stringify omits them", async () => {
    const value = { f: () => 1, s: Symbol("s"), u: undefined, list: [() => 1, Symbol("t"), undefined, 1] };
    const result = await serialized(() => value);
    expect(result.content).toBe(JSON.stringify({ list: [null, null, null, 1] }));
  });

  test("special values: non-finite numbers, -0, Dates, BigInts, holes, top-level strings and undefined", async () => {
    const value = {
      nan: Number.NaN,
      inf: -Infinity,
      zero: -0,
      date: new Date(0),
      bad: new Date(Number.NaN),
      big: -(2n ** 70n),
      // biome-ignore lint/suspicious/noSparseArray: a hole is the input under test (it renders as null).
      holes: [1, , 3],
    };
    expect((await serialized(() => value)).content).toBe(
      '{"bad":null,"big":-1180591620717411303424,"date":"1970-01-01T00:00:00.000Z","holes":[1,null,3],"inf":null,"nan":null,"zero":0}',
    );
    expect((await serialized(() => "plain text, not JSON-quoted")).content).toBe("plain text, not JSON-quoted");
    expect((await serialized(() => undefined)).content).toBe("");
  });

  test("a million-element array is refused without walking or listing it", async () => {
    const huge = new Array(1_000_000).fill(7);
    const started = performance.now();
    const result = await serialized(() => huge);
    expect(performance.now() - started).toBeLessThan(500); // generous: the budget refuses in O(1)
    expect(errorOf(result)).toEqual({
      code: "TOOL_OUTPUT_SERIALIZATION_FAILED",
      message: `output contains more than ${COURSE_TOOL_MAX_COLLECTION_VISITS} collection members at $`,
    });
  });
});

describe("rule 11 — work budgets: each budget does what docs/guarantees.md says", () => {
  const nest = (levels: number) => {
    let value: unknown = "leaf";
    for (let level = 0; level < levels; level += 1) value = [value];
    return value;
  };

  test("depth: 32 nested containers pass, 33 are refused", async () => {
    expect((await serialized(() => nest(32))).isError).toBe(false);
    let dated: unknown = new Date(0); // a Date is a value, not a container
    for (let level = 0; level < 32; level += 1) dated = [dated];
    expect((await serialized(() => dated)).isError).toBe(false);
    expect(errorOf(await serialized(() => nest(33)))).toMatchObject({
      code: "TOOL_OUTPUT_SERIALIZATION_FAILED",
      message: expect.stringContaining("nesting deeper than 32"),
    });
  });

  test("nodes: 2048 values pass, 2049 are refused", async () => {
    const values = COURSE_TOOL_MAX_NODES;
    expect(values).toBe(2048); // the default the title names
    expect((await serialized(() => Array.from({ length: values - 1 }, (_, index) => index))).isError).toBe(false);
    const refused = errorOf(await serialized(() => Array.from({ length: values }, (_, index) => index)));
    expect(refused.message).toBe(`output contains more than ${values} values at $[${values - 1}]`);
  });

  test("collection visits count omitted members too: 4096 pass, 4097 are refused", async () => {
    const visits = COURSE_TOOL_MAX_COLLECTION_VISITS;
    expect(visits).toBe(4096); // the default the title names
    const withFunctions = (count: number) => Object.fromEntries(Array.from({ length: count }, (_, index) => [`f${index}`, () => index]));
    expect((await serialized(() => withFunctions(visits))).content).toBe("{}");
    expect(errorOf(await serialized(() => withFunctions(visits + 1))).message).toBe(
      `output contains more than ${visits} collection members at $`,
    );
  });

  test("strings and keys: cut to 4096 code points, which marks the content truncated", async () => {
    const atLimit = "😀".repeat(4096); // 8192 UTF-16 units, 4096 code points
    expect((await serialized(() => atLimit)).content).toBe(atLimit);
    const over = await serialized(() => `${atLimit}!`);
    expect(codePoints(over.content)).toBe(COURSE_TOOL_MAX_CONTENT_CODE_POINTS);
    expect(over.content.endsWith(COURSE_TOOL_TRUNCATION_MARKER)).toBe(true);
    const longKey = await serialized(() => ({ ["k".repeat(5000)]: 1 }));
    expect(longKey.content.startsWith(`{"${"k".repeat(100)}`)).toBe(true);
    expect(longKey.content.endsWith(COURSE_TOOL_TRUNCATION_MARKER)).toBe(true);
  });

  test("BigInt: below 2^4096 passes, 2^4096 is refused", async () => {
    expect((await serialized(() => 2n ** 4096n - 1n)).isError).toBe(false);
    expect(errorOf(await serialized(() => ({ n: -(2n ** 4096n) }))).message).toBe("output contains a BigInt larger than 4096 bits at $.n");
  });
});

describe("rule 12 — content cap: content is at most 4096 code points, exactly 4096 with one marker when cut", () => {
  test("a long rendering is cut to exactly 4096 code points ending with the marker once", async () => {
    const result = await serialized(() => Array.from({ length: 100 }, (_, index) => `item-${index}-${"x".repeat(60)}`));
    expect(codePoints(result.content)).toBe(4096);
    expect(result.content.endsWith(COURSE_TOOL_TRUNCATION_MARKER)).toBe(true);
    expect(result.content.split(COURSE_TOOL_TRUNCATION_MARKER)).toHaveLength(2);
  });

  test("content that fits is untouched", async () => {
    const fits = "y".repeat(4096);
    const result = await serialized(() => fits);
    expect(result.content).toBe(fits);
  });

  test.each([0, 1])("a surrogate pair is never split at the cut (offset %i)", async (offset) => {
    const text = "a".repeat(offset) + "😀".repeat(5000);
    const { content } = await serialized(() => text);
    expect(codePoints(content)).toBe(4096);
    expect(content.isWellFormed()).toBe(true);
    expect(content.slice(0, -COURSE_TOOL_TRUNCATION_MARKER.length).endsWith("😀")).toBe(true);
  });

  test("error content obeys the same cap", async () => {
    const registry = new ToolRegistry([
      defineTool({ name: "v", description: "d", validate: () => ({ ok: false, error: "e".repeat(10_000) }), execute: () => null }),
    ]);
    const result = await executeToolCall(registry, call("v", {}), neverAborted());
    expect(codePoints(result.content)).toBe(4096);
    expect(result.content.startsWith('{"error":{"code":"TOOL_ARGUMENTS_INVALID","message":"eee')).toBe(true);
    expect(result.content.endsWith(COURSE_TOOL_TRUNCATION_MARKER)).toBe(true);
  });
});

describe("rule 13 — frozen, linked results: results are frozen, deterministic and linked; concurrency never cross-links", () => {
  test("success and error results are frozen and carry the exact link fields", async () => {
    const registry = new ToolRegistry([echoTool()]);
    const success = await executeToolCall(registry, call("echo", { b: 1, a: 2 }, "call-ok"), neverAborted());
    const failure = await executeToolCall(registry, call("nope", {}, "call-missing"), neverAborted());
    expect(success).toEqual({
      role: "toolResult",
      id: "tool-result-call-ok",
      toolCallId: "call-ok",
      toolName: "echo",
      content: '{"a":2,"b":1}',
      isError: false,
    });
    expect(failure).toMatchObject({
      role: "toolResult",
      id: "tool-result-call-missing",
      toolCallId: "call-missing",
      toolName: "nope",
      isError: true,
    });
    expect(Object.isFrozen(success)).toBe(true);
    expect(Object.isFrozen(failure)).toBe(true);
  });

  test("error content is deterministic JSON with a stable code", async () => {
    const registry = new ToolRegistry([
      defineTool({
        name: "boom",
        description: "d",
        validate: () => ({ ok: true, value: null }),
        execute: () => {
          throw new Error("same every time");
        },
      }),
    ]);
    const first = await executeToolCall(registry, call("boom", {}), neverAborted());
    const second = await executeToolCall(registry, call("boom", {}), neverAborted());
    expect(first.content).toBe(second.content);
    expect(first.content).toBe('{"error":{"code":"TOOL_EXECUTION_FAILED","message":"same every time"}}');
  });

  test("parallel executions with shuffled completion never cross-link", async () => {
    const registry = new ToolRegistry([
      defineTool({
        name: "delayed",
        description: "Finishes after a per-call delay.",
        validate: (args) => ({ ok: true, value: args as { n: number } }),
        execute: async ({ n }, { toolCallId }) => {
          await new Promise((resolve) => setTimeout(resolve, (n * 7) % 13));
          return { n, toolCallId };
        },
      }),
    ]);
    const calls = Array.from({ length: 60 }, (_, n) => call(n % 5 === 0 ? "missing" : "delayed", { n }, `call-${n}`));
    const results = await Promise.all(calls.map((each) => executeToolCall(registry, each, neverAborted())));
    results.forEach((result, n) => {
      expect(result.toolCallId).toBe(`call-${n}`);
      expect(result.id).toBe(`tool-result-call-${n}`);
      if (n % 5 === 0) {
        expect(result.toolName).toBe("missing");
        expect(errorOf(result).code).toBe("TOOL_NOT_FOUND");
      } else {
        expect(result.toolName).toBe("delayed");
        expect(JSON.parse(result.content)).toEqual({ n, toolCallId: `call-${n}` });
      }
    });
  });
});

// Issue 12, item 7: the refused value is named through the one grammar helper (describeValue),
// so no message reads "is a undefined".
describe("a call's non-JSON argument is named with its article", () => {
  test.each([
    ["undefined", undefined, "arguments.a is undefined, which is not JSON"],
    ["a bigint", 1n, "arguments.a is a bigint, which is not JSON"],
    ["a symbol", Symbol("s"), "arguments.a is a symbol, which is not JSON"],
    ["a function", () => 1, "arguments.a is a function, which is not JSON"],
    ["a Proxy of a function", new Proxy(() => 1, {}), "arguments.a is a Proxy, which is not JSON"],
  ])("%s in arguments: INVALID_TOOL_CALL saying what it is", async (_label, value, message) => {
    const malformed = call("echo", { a: value as unknown as JsonValue });
    const error = await expectContractError(
      executeToolCall(new ToolRegistry([echoTool()]), malformed, neverAborted()),
      "INVALID_TOOL_CALL",
    );
    expect(error.message).toBe(message);
  });
});
