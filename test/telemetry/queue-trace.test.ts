// docs/operations.md — Tracing, across the queue: the job carries the agent's W3C trace context,
// the host (another process, the real `toolgate-worker`, with the real SDK of its own: see
// host-tracing.mjs) reads it as untrusted and its execute_tool span is a child of the agent's.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { QueueToolExecutor } from "toolgate/queue";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { jobTraceParent, readTraceparent, readTracestate } from "../../src/queue/trace-context.js";
import { type HostProcess, startHostProcess } from "../queue/host-process.js";
import { call, fixture, neverAborted, scratchDir } from "../support/helpers.js";
import { type OtelSdk, registerOtelSdk } from "../support/otel-sdk.js";
import { findRedis, uniqueQueue } from "../support/redis.js";

const redis = await findRedis();
const PRELOAD = fileURLToPath(new URL("./host-tracing.mjs", import.meta.url));
const TOOLS = fixture("operator-tools");
const VALID = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

let sdk: OtelSdk;
beforeAll(() => {
  sdk = registerOtelSdk();
}, 300_000);

describe("the traceparent and tracestate a job carries: read as untrusted", () => {
  test("only version 00, lowercase hex, non-zero ids, exact length", () => {
    expect(readTraceparent(VALID)).toEqual({ traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: 1 });
    for (const forged of [
      VALID.toUpperCase(),
      `01${VALID.slice(2)}`,
      "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      "00-00000000000000000000000000000000-b7ad6b7169203331-01",
      "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
      `${VALID}-extra`,
      `${VALID}\n`,
      ` ${VALID}`,
      "00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333-001",
      "",
      42,
      null,
      { toString: () => VALID },
    ]) {
      expect(readTraceparent(forged)).toBeUndefined();
    }
  });

  test("tracestate: the W3C grammar, at most 32 members and 512 characters, else all of it is dropped", () => {
    expect(readTracestate("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")).toBe("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
    expect(readTracestate("tenant@vendor=x")).toBe("tenant@vendor=x");
    for (const forged of [
      "Rojo=1", // keys are lowercase
      "rojo=a,b", // a member without "="
      "rojo=a=b",
      "rojo=a\tb", // a tab is not a value character (spaces around a member are allowed)
      "rojo=\u00e9",
      "x".repeat(600),
      Array.from({ length: 33 }, (_, index) => `k${index}=v`).join(","),
      `k=${"v".repeat(520)}`,
      "",
      ["rojo=1"],
    ]) {
      expect(readTracestate(forged)).toBeUndefined();
    }
  });

  test("the job's fields are own data properties: a getter is not run, a Proxy or a prototype's are not read", () => {
    const reads: string[] = [];
    const withGetter = Object.defineProperty({}, "traceparent", {
      get: () => {
        reads.push("traceparent");
        return VALID;
      },
      enumerable: true,
    });
    expect(jobTraceParent(withGetter)).toBeUndefined();
    expect(jobTraceParent(new Proxy({ traceparent: VALID }, {}))).toBeUndefined();
    expect(jobTraceParent(Object.create({ traceparent: VALID }))).toBeUndefined();
    expect(reads).toEqual([]);
    const parent = jobTraceParent({ traceparent: VALID, tracestate: "rojo=1" });
    const spanContext = parent === undefined ? undefined : sdk.api.trace.getSpanContext(parent as never);
    expect(spanContext).toMatchObject({ traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", isRemote: true });
    expect(spanContext?.traceState?.get("rojo")).toBe("1");
    // A malformed tracestate drops the tracestate alone.
    const bare = jobTraceParent({ traceparent: VALID, tracestate: "Bad=1" });
    expect(bare === undefined ? undefined : sdk.api.trace.getSpanContext(bare as never)?.traceState).toBeUndefined();
  });
});

interface ExportedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes: Record<string, unknown>;
  status: { code: number };
}

describe.skipIf(!("url" in redis))("across machines: the host's span is a child of the agent's", () => {
  const spansFile = join(scratchDir(), "host-spans.jsonl");
  let host: HostProcess;
  let agent: QueueToolExecutor;
  const queue = uniqueQueue("trace");
  beforeAll(async () => {
    const url = (redis as { url: string }).url;
    host = await startHostProcess(url, queue, [TOOLS], ["--threads", "1"], (command, args, options) =>
      spawn(command, ["--import", PRELOAD, ...args], {
        ...options,
        env: { ...process.env, TOOLGATE_OTEL_SDK_DIR: sdk.dir, TOOLGATE_SPANS_FILE: spansFile },
      }),
    );
    agent = await QueueToolExecutor.create({
      connection: url,
      queue,
      modules: [TOOLS],
      heartbeatMs: 100,
      tracing: { recordArguments: true, recordResults: true },
    });
  }, 300_000);
  afterAll(async () => {
    await agent?.close();
    await host?.stop("SIGTERM");
  });

  test("one trace: the agent's step → the agent's execute_tool → the host's execute_tool", async () => {
    const step = sdk.api.trace.getTracer("agent").startSpan("the agent's step");
    const result = await sdk.api.context.with(sdk.api.trace.setSpan(sdk.api.context.active(), step), () =>
      agent.executeToolCall(call("wait", { ms: 1 }, "call-remote"), neverAborted()),
    );
    step.end();
    expect(result.isError).toBe(false);
    const agentSpan = sdk.exporter.getFinishedSpans().find((span) => span.attributes["gen_ai.tool.call.id"] === "call-remote");
    expect(agentSpan?.parentSpanContext?.spanId).toBe(step.spanContext().spanId);
    // The host exported its span before it answered (a simple processor exports as a span ends).
    const hostSpans = existsSync(spansFile)
      ? readFileSync(spansFile, "utf8")
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line) as ExportedSpan)
      : [];
    const hostSpan = hostSpans.find((span) => span.attributes["gen_ai.tool.call.id"] === "call-remote");
    expect(hostSpan).toMatchObject({
      name: "execute_tool wait",
      traceId: step.spanContext().traceId,
      parentSpanId: agentSpan?.spanContext().spanId,
      attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "wait", "thread.id": expect.any(Number) },
    });
    expect(hostSpan?.spanId).not.toBe(agentSpan?.spanContext().spanId);
    // The agent's tracing option: its span records the arguments and the result; the host's, its own defaults (none).
    expect(agentSpan?.attributes).toMatchObject({ "gen_ai.tool.call.arguments": '{"ms":1}', "gen_ai.tool.call.result": "waited" });
    expect(hostSpan?.attributes["gen_ai.tool.call.arguments"]).toBeUndefined();
  });
});
