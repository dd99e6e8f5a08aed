// docs/operations.md — Tracing: @opentelemetry/api is an optional peer. Without it every
// executor works as before (no span, nothing asked of the missing package after the first
// call); with something else under its name, the same.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, test } from "vitest";
import { loadOtelApi } from "../../src/executor/otel-api.js";

const run = promisify(execFile);
const HIDE = fileURLToPath(new URL("./hide-otel-api.cjs", import.meta.url));
const INDEX = new URL("../../dist/src/index.js", import.meta.url).href;
const WORKER = new URL("../../dist/src/worker/index.js", import.meta.url).href;
const TOOLS = new URL("../../dist/test/fixtures/operator-tools.js", import.meta.url).href;

describe("loading the API", () => {
  test("a missing package, a throwing one, or something that is not the API: no API, and nothing thrown", () => {
    const requests: string[] = [];
    const missing = (name: string): never => {
      requests.push(name);
      throw Object.assign(new Error(`Cannot find module '${name}'`), { code: "MODULE_NOT_FOUND" });
    };
    expect(loadOtelApi(missing)).toBeUndefined();
    expect(requests).toEqual(["@opentelemetry/api"]);
    for (const impostor of [null, 42, {}, { trace: {}, context: {} }, { trace: { getTracerProvider() {} }, context: { with() {} } }]) {
      expect(loadOtelApi(() => impostor)).toBeUndefined();
    }
  });

  test("the API itself is taken as it is", async () => {
    const api = await import("@opentelemetry/api");
    const loaded = loadOtelApi(() => api);
    expect(loaded?.trace).toBe(api.trace);
    expect(loaded?.ROOT_CONTEXT).toBe(api.ROOT_CONTEXT);
  });
});

describe("a process without @opentelemetry/api", () => {
  test("the in-process and worker executors run calls, and the package is asked for once", async () => {
    const script = `
      const Module = await import("node:module");
      const { InProcessToolExecutor, ToolRegistry } = await import(${JSON.stringify(INDEX)});
      const { WorkerToolExecutor } = await import(${JSON.stringify(WORKER)});
      let asked = 0;
      const resolve = Module.default._resolveFilename;
      Module.default._resolveFilename = function (request, ...rest) {
        if (request === "@opentelemetry/api") asked += 1;
        return Reflect.apply(resolve, this, [request, ...rest]);
      };
      const registry = new ToolRegistry([{ name: "add", description: "adds", validate: (a) => ({ ok: true, value: a }), execute: ({ a, b }) => a + b }]);
      const signal = new AbortController().signal;
      const local = new InProcessToolExecutor(registry, { tracing: { recordArguments: true } });
      const first = await local.executeToolCall({ type: "toolCall", id: "c1", name: "add", arguments: { a: 1, b: 2 } }, signal);
      const second = await local.executeToolCall({ type: "toolCall", id: "c2", name: "add", arguments: { a: 2, b: 2 } }, signal);
      const pool = await WorkerToolExecutor.create({ modules: [new URL(${JSON.stringify(TOOLS)})], maxThreads: 1 });
      const pooled = await pool.executeToolCall({ type: "toolCall", id: "c3", name: "wait", arguments: { ms: 1 } }, signal);
      await pool.close();
      process.stdout.write(JSON.stringify({ contents: [first.content, second.content, pooled.content], asked }));
    `;
    const { stdout } = await run(process.execPath, ["--require", HIDE, "--input-type=module", "--eval", script], { timeout: 60_000 });
    expect(JSON.parse(stdout)).toEqual({ contents: ["3", "4", "waited"], asked: 1 });
  });
});
