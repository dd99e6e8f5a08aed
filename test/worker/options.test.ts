// Every option of WorkerToolExecutor.create is checked up front, with both bounds
// (docs/contract.md, rule W1 — tool modules; rule W3 — timeout and termination: a delay of
// 2^31 ms or more would become 1 ms, as Node clamps timer delays).
import { WorkerToolExecutor } from "toolgate/worker";
import { describe, expect, test } from "vitest";
import { contractError } from "../support/assertions.js";
import { call, errorOf, fixture, neverAborted } from "../support/helpers.js";

const CONTRACT_TOOLS = fixture("contract-tools");
const WORKER_TOOLS = fixture("worker-tools");
const TOO_LONG = 2 ** 31;
const LONGEST = 2 ** 31 - 1;

function refusal(options: Record<string, unknown>): Promise<{ code: string; message: string }> {
  return contractError(WorkerToolExecutor.create({ modules: [CONTRACT_TOOLS], ...options } as never));
}

describe("rule W1 — tool modules: numeric options have an upper bound, named with the value", () => {
  test.each([
    ["timeoutMs", TOO_LONG, `options.timeoutMs must be an integer from 1 to ${LONGEST} (got the number ${TOO_LONG})`],
    ["abortGraceMs", TOO_LONG, `options.abortGraceMs must be an integer from 0 to ${LONGEST} (got the number ${TOO_LONG})`],
    ["idleTimeout", TOO_LONG, `options.idleTimeout must be an integer from 0 to ${LONGEST} (got the number ${TOO_LONG})`],
    ["moduleLoadTimeoutMs", TOO_LONG, `options.moduleLoadTimeoutMs must be an integer from 1 to ${LONGEST} (got the number ${TOO_LONG})`],
    ["moduleLoadTimeoutMs", 0, `options.moduleLoadTimeoutMs must be an integer from 1 to ${LONGEST} (got the number 0)`],
    ["maxThreads", 257, "options.maxThreads must be an integer from 1 to 256 (got the number 257)"],
    ["minThreads", -1, "options.minThreads must be an integer from 0 to 256 (got the number -1)"],
    ["timeoutMs", Number.POSITIVE_INFINITY, `options.timeoutMs must be an integer from 1 to ${LONGEST} (got the number Infinity)`],
    ["abortGraceMs", "100", `options.abortGraceMs must be an integer from 0 to ${LONGEST} (got a string)`],
    ["setupTimeoutMs", TOO_LONG, `options.setupTimeoutMs must be an integer from 1 to ${LONGEST} (got the number ${TOO_LONG})`],
    ["setupTimeoutMs", 0, `options.setupTimeoutMs must be an integer from 1 to ${LONGEST} (got the number 0)`],
    ["setupTimeoutMs", null, `options.setupTimeoutMs must be an integer from 1 to ${LONGEST} (got null)`],
  ])("%s = %s is an INVALID_ARGUMENT", async (name, value, message) => {
    const error = await refusal({ [name]: value });
    expect(error).toMatchObject({ code: "INVALID_ARGUMENT", message });
  });

  test.each<[string, Record<string, unknown>, string]>([
    [
      "a zero heap limit",
      { resourceLimits: { maxOldGenerationSizeMb: 0 } },
      "options.resourceLimits.maxOldGenerationSizeMb must be a number above 0 and at most 1048576 (got the number 0)",
    ],
    [
      "a 2 TiB stack",
      { resourceLimits: { stackSizeMb: 2 ** 21 } },
      "options.resourceLimits.stackSizeMb must be a number above 0 and at most 1048576 (got the number 2097152)",
    ],
    ["resourceLimits not an object", { resourceLimits: "big" }, "options.resourceLimits must be an object (got a string)"],
    [
      "a numeric loader",
      { loader: 5 },
      "options.loader must be a URL, a file URL string or a path of 1 to 4096 characters (got the number 5)",
    ],
    ["an empty loader", { loader: "" }, "options.loader must be a URL, a file URL string or a path of 1 to 4096 characters (got a string)"],
    ["a loader path of 4097 characters", { loader: "x".repeat(4097) }, "(got a string)"],
    ["a loader behind a Proxy", { loader: new Proxy(new URL("file:///loader.mjs"), {}) }, "(got a Proxy)"],
    [
      "257 modules",
      { modules: new Array(257).fill(CONTRACT_TOOLS.href) },
      "options.modules must be a non-empty array of at most 256 tool module URLs or paths",
    ],
  ])("%s is an INVALID_ARGUMENT", async (_label, options, message) => {
    const error = await refusal(options);
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.message).toContain(message);
  });

  test("options are read once, as own data properties: a getter is refused, never called", async () => {
    let reads = 0;
    const getter = {
      get(): number {
        reads += 1;
        return 1;
      },
      enumerable: true,
    };
    // A shared option (timeoutMs) and one of the pool's own (abortGraceMs) alike.
    for (const name of ["timeoutMs", "abortGraceMs"]) {
      const options = Object.defineProperty({ modules: [CONTRACT_TOOLS] }, name, getter); // not spread: that would call it
      const error = await contractError(WorkerToolExecutor.create(options));
      expect(error).toMatchObject({ code: "INVALID_ARGUMENT", message: `options.${name} must be a data property, not an accessor` });
    }
    expect(reads).toBe(0);
  });
});

describe("rule W3 — timeout and termination: the longest delays allowed are honoured, not clamped", () => {
  test("timeoutMs and abortGraceMs of 2^31 - 1 ms: an aborted slow call neither times out nor loses its thread early", async () => {
    const executor = await WorkerToolExecutor.create({
      modules: [WORKER_TOOLS, CONTRACT_TOOLS],
      maxThreads: 1,
      timeoutMs: LONGEST,
      abortGraceMs: LONGEST,
    });
    try {
      const before = (await executor.executeToolCall(call("threadId"), neverAborted())).content;
      // A 1 ms timer (what 2^31 used to become) would end this call with TOOL_EXECUTION_TIMEOUT.
      const slow = await executor.executeToolCall(call("delayed", { n: 1, ms: 100 }), neverAborted());
      expect(slow.isError).toBe(false);
      // Aborted while it spins for 150 ms: a 1 ms grace period would terminate its thread.
      const controller = new AbortController();
      const spinning = executor.executeToolCall(call("spin", { ms: 150 }), controller.signal);
      await new Promise((resolve) => setTimeout(resolve, 30));
      controller.abort("stop");
      await expect(spinning).rejects.toBe("stop");
      await new Promise((resolve) => setTimeout(resolve, 300)); // the spin is over: the thread is idle, and alive
      expect((await executor.executeToolCall(call("threadId"), neverAborted())).content).toBe(before);
    } finally {
      await executor.close();
    }
  });

  test("the shortest: timeoutMs 1 times a slow call out", async () => {
    const executor = await WorkerToolExecutor.create({ modules: [CONTRACT_TOOLS], maxThreads: 1, timeoutMs: 1, abortGraceMs: 0 });
    try {
      const result = await executor.executeToolCall(call("delayed", { n: 1, ms: 500 }), neverAborted());
      expect(errorOf(result)).toEqual({ code: "TOOL_EXECUTION_TIMEOUT", message: "the tool did not finish within 1 ms" });
    } finally {
      await executor.close();
    }
  });
});
