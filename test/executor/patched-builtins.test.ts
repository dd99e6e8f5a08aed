// The primordials habit on every executor's path (issue 9, defect 6: on the worker path a
// patched Array.prototype.push made calls hang, a patched Promise.prototype.then forged the
// content a call resolved with). While every method and getter of Array, Promise, Map, Set,
// Function, Object, Reflect, JSON and String (prototypes, statics and iterators) is replaced
// by a hostile copy, calls run as before: toolgate's own code never calls one of them, and
// a `then` that forges values never reaches a result. Third-party code (Piscina, comlink,
// the test runner) may call them: the copies forward to the originals, and count a call
// only when the caller's frame is in toolgate's compiled code.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { EXECUTORS } from "../support/executors.js";
import { call, fixture, neverAborted } from "../support/helpers.js";

type Executor = Awaited<ReturnType<(typeof EXECUTORS)[number][1]>>;

const apply = Reflect.apply;
const defineProperty = Object.defineProperty;
const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
const ownKeys = Reflect.ownKeys;
const captureStackTrace = Error.captureStackTrace;
const TOOLGATE_CODE = /\/dist\/(src|workers)\//;
const FORGED = "FORGED";
const SKIPPED = new Set<PropertyKey>(["constructor", "__proto__", "caller", "arguments", "callee", "prototype", "length", "name"]);

const owners: [string, object][] = [
  ["Array.prototype", Array.prototype],
  ["Array", Array],
  ["ArrayIterator", Object.getPrototypeOf([][Symbol.iterator]()) as object],
  ["Promise.prototype", Promise.prototype],
  ["Promise", Promise],
  ["Map.prototype", Map.prototype],
  ["MapIterator", Object.getPrototypeOf(new Map().entries()) as object],
  ["Set.prototype", Set.prototype],
  ["SetIterator", Object.getPrototypeOf(new Set().values()) as object],
  ["Function.prototype", Function.prototype],
  ["Object.prototype", Object.prototype],
  ["Object", Object],
  ["Reflect", Reflect],
  ["JSON", JSON],
  ["String.prototype", String.prototype],
  ["StringIterator", Object.getPrototypeOf(""[Symbol.iterator]()) as object],
];

/** Who called the patched built-in: set by a hostile copy, read only through captured intrinsics. */
let inside = false;
const toolgateCalls: string[] = [];

const FIRST_FRAME = /\n\s*at [^\n]*/;

/** The caller's frame, when it is toolgate's compiled code (the stack's first frame is the caller of `patched`). */
function callerOf(patched: () => unknown): string | undefined {
  const holder: { stack?: string } = {};
  captureStackTrace(holder, patched);
  const frame = FIRST_FRAME.exec(String(holder.stack));
  return frame !== null && TOOLGATE_CODE.exec(frame[0]) !== null ? frame[0] : undefined;
}

/** Replaces `value`'s `content` when it looks like a tool outcome or result. */
function forge(value: unknown): unknown {
  if (typeof value === "object" && value !== null && typeof (value as { content?: unknown }).content === "string") {
    return { ...(value as object), content: FORGED };
  }
  return value;
}

interface Patch {
  readonly owner: object;
  readonly key: PropertyKey;
  readonly original: PropertyDescriptor;
  readonly hostile: PropertyDescriptor;
}

function hostileCopy(label: string, key: PropertyKey, original: PropertyDescriptor): PropertyDescriptor | undefined {
  const name = `${label}.${String(key)}`;
  const note = (patched: () => unknown): void => {
    if (inside) return;
    inside = true;
    try {
      const caller = callerOf(patched);
      if (caller !== undefined) toolgateCalls.push(`${name} from ${caller}`);
    } finally {
      inside = false;
    }
  };
  if (typeof original.get === "function") {
    const get = original.get;
    const patchedGetter = function (this: unknown) {
      note(patchedGetter);
      return apply(get, this, []);
    };
    return {
      get: patchedGetter,
      ...(original.set === undefined ? {} : { set: original.set }),
      configurable: true,
      enumerable: original.enumerable ?? false,
    };
  }
  const inner = original.value;
  if (typeof inner !== "function") return undefined;
  const isThen = label === "Promise.prototype" && key === "then";
  const patched = function (this: unknown, ...args: unknown[]) {
    note(patched);
    if (isThen && !inside && typeof args[0] === "function") {
      const onFulfilled = args[0] as (value: unknown) => unknown;
      args[0] = (value: unknown) => onFulfilled(forge(value));
    }
    return apply(inner, this, args);
  };
  return { value: patched, writable: true, configurable: true, enumerable: original.enumerable ?? false };
}

const patches: Patch[] = [];
for (const [label, owner] of owners) {
  for (const key of ownKeys(owner)) {
    if (SKIPPED.has(key)) continue;
    const original = getOwnPropertyDescriptor(owner, key);
    if (original === undefined || original.configurable !== true) continue;
    const hostile = hostileCopy(label, key, original);
    if (hostile !== undefined) patches.push({ owner, key, original, hostile });
  }
}

/** Runs `body` with every hostile copy in place; restores the originals whatever happens. */
async function underHostileBuiltins<T>(body: () => Promise<T>): Promise<T> {
  toolgateCalls.length = 0;
  for (let index = 0; index < patches.length; index += 1) {
    const patch = patches[index] as Patch;
    defineProperty(patch.owner, patch.key, patch.hostile);
  }
  try {
    return await body();
  } finally {
    for (let index = 0; index < patches.length; index += 1) {
      const patch = patches[index] as Patch;
      defineProperty(patch.owner, patch.key, patch.original);
    }
  }
}

describe.each(EXECUTORS)("%s never consults patched built-ins", (_label, make) => {
  let executor: Executor;
  beforeAll(async () => {
    executor = await make([fixture("contract-tools")]);
    await executor.executeToolCall(call("echo"), neverAborted()); // threads warm, modules loaded
  });
  afterAll(() => executor.close());

  test("the hostile copies are in place and do forge (the check below could fail)", async () => {
    const forged = await underHostileBuiltins(() => Promise.resolve({ content: "real" }).then((value) => value));
    expect(forged).toEqual({ content: FORGED });
    expect(patches.length).toBeGreaterThan(100);
  });

  test("single calls: success, error results, unknown tool, and abort", async () => {
    const controller = new AbortController();
    const outcome = await underHostileBuiltins(async () => {
      const ok = await executor.executeToolCall(call("echo", { b: [1, 2], a: "x" }, "call-ok"), neverAborted());
      const failed = await executor.executeToolCall(call("fails", {}, "call-fails"), neverAborted());
      const unknown = await executor.executeToolCall(call("ecko", {}, "call-typo"), neverAborted());
      const invalid = await executor.executeToolCall(call("add", { left: "x" }, "call-invalid"), neverAborted());
      const waiting = executor.executeToolCall(call("waitForAbort", {}, "call-aborted"), controller.signal);
      controller.abort("stop");
      const aborted = await waiting.then(
        () => "resolved",
        (reason: unknown) => reason,
      );
      return { ok, failed, unknown, invalid, aborted };
    });
    expect(toolgateCalls).toEqual([]);
    expect(outcome.ok).toEqual({
      role: "toolResult",
      id: "tool-result-call-ok",
      toolCallId: "call-ok",
      toolName: "echo",
      content: '{"a":"x","b":[1,2]}',
      isError: false,
    });
    expect(outcome.failed).toMatchObject({ toolCallId: "call-fails", isError: true });
    expect(outcome.failed.content).toContain("RangeError: disk full");
    expect(outcome.unknown.content).toContain("TOOL_NOT_FOUND");
    expect(outcome.invalid.content).toContain("TOOL_ARGUMENTS_INVALID");
    expect(outcome.aborted).toBe("stop");
  });

  test("a batch: results in call order, each its own", async () => {
    const calls = Array.from({ length: 6 }, (_, n) => call("delayed", { n, ms: n % 3 }, `batch-${n}`));
    const results = await underHostileBuiltins(() => executor.executeBatch(calls, neverAborted(), { concurrency: 2 }));
    expect(toolgateCalls).toEqual([]);
    expect(results.map((result) => result.toolCallId)).toEqual(calls.map((each) => each.id));
    for (const [n, result] of results.entries()) expect(JSON.parse(result.content)).toEqual({ n, toolCallId: `batch-${n}` });
  });
});
