// docs/queue.md — Watching a host: runToolWorkerHost({ metricsPort }) and `toolgate-worker
// --metrics-port` serve /metrics (Prometheus text, parsed here line by line against the format's
// grammar), /healthz and /readyz, scraped over HTTP, while Redis is up and while it is down.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { isToolContractError } from "toolgate";
import { QueueToolExecutor, runToolWorkerHost, type ToolWorkerHost } from "toolgate/queue";
import { afterEach, describe, expect, test } from "vitest";
import { bootFailuresLeft, setBootFailures } from "../fixtures/support/boot-gate.js";
import { call, errorOf, fixture, neverAborted, scratchDir } from "../support/helpers.js";
import { findRedis, startRedisServer, uniqueQueue } from "../support/redis.js";

const run = promisify(execFile);
const redis = await findRedis();
const TOOLS = fixture("operator-tools");
const CLI = fileURLToPath(new URL("../../dist/src/queue/cli.js", import.meta.url));

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

/**
 * The text exposition format, strictly: `# HELP`/`# TYPE` lines, and samples
 * `name{label="value",…} number`; anything else fails the test. A TYPE precedes its samples.
 */
function parseExposition(text: string): { samples: Sample[]; types: Map<string, string> } {
  expect(text.endsWith("\n")).toBe(true);
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.slice(0, -1).split("\n")) {
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type !== null) {
      types.set(type[1] as string, type[2] as string);
      continue;
    }
    if (/^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*$/.test(line)) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*",?)*)\})? (\S+)$/.exec(line);
    expect(sample, `not a line of the text format: ${JSON.stringify(line)}`).not.toBeNull();
    const [, name, labelText, valueText] = sample as unknown as [string, string, string | undefined, string];
    const value = valueText === "+Inf" ? Number.POSITIVE_INFINITY : Number(valueText);
    expect(Number.isNaN(value), `not a number: ${line}`).toBe(false);
    const family = name.replace(/_(bucket|sum|count)$/, "");
    expect(types.has(name) || types.get(family) === "histogram", `${name} has no TYPE before it`).toBe(true);
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (labelText ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[key as string] = (raw as string).replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    }
    samples.push({ name, labels, value });
  }
  return { samples, types };
}

const sampleValue = (samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined =>
  samples.find((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))?.value;

async function scrape(port: number, path: string): Promise<{ status: number; type: string | null; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: response.status, type: response.headers.get("content-type"), body: await response.text() };
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

describe.skipIf(!("url" in redis))("a host's metrics and health over HTTP", () => {
  test("calls by tool and outcome, the duration histogram, threads and readiness, scraped and parsed", async () => {
    const url = (redis as { url: string }).url;
    const queue = uniqueQueue("metrics");
    const host = await runToolWorkerHost({ connection: url, queue, modules: [TOOLS], threads: 2, metricsPort: 0 });
    cleanups.push(() => host.close());
    const agent = await QueueToolExecutor.create({ connection: url, queue, modules: [TOOLS], heartbeatMs: 100 });
    cleanups.push(() => agent.close());
    expect(host.metricsPort).toBeGreaterThan(0);
    const port = host.metricsPort as number;

    expect((await agent.executeToolCall(call("wait", { ms: 1 }, "call-ok"), neverAborted())).isError).toBe(false);
    const late = await agent.executeToolCall(call("wait", { ms: 5000 }, "call-late"), neverAborted(), { timeoutMs: 300 });
    expect(errorOf(late).code).toBe("TOOL_EXECUTION_TIMEOUT");

    const metrics = await scrape(port, "/metrics");
    expect(metrics.status).toBe(200);
    expect(metrics.type).toBe("text/plain; version=0.0.4; charset=utf-8");
    const { samples, types } = parseExposition(metrics.body);
    expect(types.get("toolgate_host_calls_total")).toBe("counter");
    expect(types.get("toolgate_host_call_duration_seconds")).toBe("histogram");
    expect(sampleValue(samples, "toolgate_host_calls_total", { tool: "wait", outcome: "success" })).toBe(1);
    // The host's own stop of the late call (the limit travelled with the job): an error, or an abort once the agent's cancel came first.
    const stopped =
      (sampleValue(samples, "toolgate_host_calls_total", { tool: "wait", outcome: "error" }) ?? 0) +
      (sampleValue(samples, "toolgate_host_calls_total", { tool: "wait", outcome: "aborted" }) ?? 0);
    expect(stopped).toBe(1);
    expect(sampleValue(samples, "toolgate_host_call_duration_seconds_count", { tool: "wait" })).toBe(2);
    expect(sampleValue(samples, "toolgate_host_call_duration_seconds_bucket", { tool: "wait", le: "+Inf" })).toBe(2);
    expect(sampleValue(samples, "toolgate_host_call_duration_seconds_bucket", { tool: "wait", le: "0.1" })).toBe(1);
    expect(sampleValue(samples, "toolgate_host_threads")).toBe(2);
    expect(sampleValue(samples, "toolgate_host_threads_busy")).toBe(0);
    expect(sampleValue(samples, "toolgate_host_jobs_waiting_for_thread")).toBe(0);
    expect(types.get("toolgate_host_thread_boot_failures_total")).toBe("counter");
    expect(sampleValue(samples, "toolgate_host_thread_boot_failures_total")).toBe(0);
    expect(sampleValue(samples, "toolgate_host_ready")).toBe(1);
    expect(await scrape(port, "/healthz")).toMatchObject({ status: 200, body: "ok\n" });
    expect(await scrape(port, "/readyz")).toMatchObject({ status: 200, body: "ready\n" });
    expect((await scrape(port, "/other")).status).toBe(404);
  });

  test("while Redis is down: alive, not ready, the reconnections counted; the port is freed on close", async () => {
    const server = await startRedisServer();
    cleanups.push(() => server.kill());
    const queue = uniqueQueue("metrics-down");
    const host: ToolWorkerHost = await runToolWorkerHost({
      connection: server.url,
      queue,
      modules: [TOOLS],
      threads: 1,
      metricsPort: 0,
      closeTimeoutMs: 500,
    });
    const port = host.metricsPort as number;
    expect((await scrape(port, "/readyz")).status).toBe(200);
    await server.kill();
    const deadline = Date.now() + 10_000;
    while ((await scrape(port, "/readyz")).status !== 503 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await scrape(port, "/readyz")).toMatchObject({ status: 503, body: "not ready\n" });
    expect(await scrape(port, "/healthz")).toMatchObject({ status: 200 });
    const { samples } = parseExposition((await scrape(port, "/metrics")).body);
    expect(sampleValue(samples, "toolgate_host_ready")).toBe(0);
    while (
      (sampleValue(parseExposition((await scrape(port, "/metrics")).body).samples, "toolgate_host_redis_reconnects_total") ?? 0) === 0
    ) {
      if (Date.now() > deadline) throw new Error("no reconnection was counted within 10 s");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await host.close();
    await expect(scrape(port, "/healthz")).rejects.toThrow();
  }, 30_000);

  test("threads that cannot boot are counted, one per thread (a module whose setup() exits while a gate file says so)", async () => {
    const url = (redis as { url: string }).url;
    const gate = join(scratchDir(), "boot-gate");
    const setGate = (n: number): void => setBootFailures(gate, n);
    setGate(0); // the host's first thread boots
    const module = `${fixture("boot-flaky").href}?gate=${encodeURIComponent(gate)}`;
    const queue = uniqueQueue("metrics-boot");
    const host = await runToolWorkerHost({ connection: url, queue, modules: [module], threads: 1, metricsPort: 0 });
    cleanups.push(() => host.close());
    const agent = await QueueToolExecutor.create({ connection: url, queue, modules: [module], heartbeatMs: 100 });
    cleanups.push(() => agent.close());
    const port = host.metricsPort as number;
    const bootFailures = async (): Promise<number | undefined> =>
      sampleValue(parseExposition((await scrape(port, "/metrics")).body).samples, "toolgate_host_thread_boot_failures_total");

    expect((await agent.executeToolCall(call("bootedOn", {}, "first"), neverAborted())).isError).toBe(false);
    expect(await bootFailures()).toBe(0);
    setGate(2); // the next two threads exit in setup()
    expect(errorOf(await agent.executeToolCall(call("exitNow", {}, "crash"), neverAborted())).code).toBe("TOOL_EXECUTION_FAILED");
    // Calls until one is served again (after each failed boot the pool waits before the next thread).
    let served = false;
    for (let k = 0; !served && k < 500; k += 1) {
      served = !(await agent.executeToolCall(call("bootedOn", {}, `retry-${k}`), neverAborted())).isError;
      if (!served) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(served).toBe(true);
    expect(bootFailuresLeft(gate)).toBe(0);
    const deadline = Date.now() + 10_000;
    while ((await bootFailures()) !== 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await bootFailures()).toBe(2);
  }, 30_000);

  test("metricsPort is checked like every option", async () => {
    const url = (redis as { url: string }).url;
    const refused = await runToolWorkerHost({
      connection: url,
      queue: uniqueQueue("metrics-bad"),
      modules: [TOOLS],
      metricsPort: 70_000,
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isToolContractError(refused) && refused.message).toBe(
      "options.metricsPort must be an integer from 0 to 65535 (got the number 70000)",
    );
  });
});

describe("toolgate-worker --help and --metrics-port", () => {
  test("--help describes every flag, with its default, the environment, and an example; exit code 0", async () => {
    const { stdout } = await run(process.execPath, [CLI, "--help"]);
    const flags = [
      ...["--redis", "--queue", "--prefix", "--redis-ca", "--cluster", "--sentinel"],
      ...["--threads", "--timeout", "--abort-grace", "--lock-duration", "--metrics-port", "--fetch-stall", "--help"],
    ];
    for (const flag of flags) expect(stdout).toMatch(new RegExp(`^  ${flag} `, "m"));
    expect(stdout.match(/default: [^)\n]+\)/g)?.length).toBe(flags.length - 3); // every flag but the two required ones and --help
    expect(stdout).toContain("Environment:");
    expect(stdout).toContain("Example:\n  toolgate-worker --redis redis://");
  });

  test("a bad --metrics-port names the flag; a missing --redis says so; exit code 2", async () => {
    const bad = await run(process.execPath, [
      CLI,
      "--redis",
      "redis://127.0.0.1:1",
      "--queue",
      "q",
      "--metrics-port",
      "http",
      "t.js",
    ]).catch((error: { code: number; stderr: string }) => error);
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining("--metrics-port must be a whole number of decimal digits") });
    const missing = await run(process.execPath, [CLI, "--queue", "q", "t.js"]).catch((error: { code: number; stderr: string }) => error);
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringContaining("toolgate-worker: --redis is required") });
  });

  test("--redis more than once: refused without --cluster or --sentinel, and when the URLs' users differ; exit code 2", async () => {
    const refused = (args: string[]) =>
      run(process.execPath, [CLI, ...args, "--queue", "q", "t.js"]).then(
        () => undefined,
        (error: { code: number; stderr: string }) => error,
      );
    expect(await refused(["--redis", "redis://127.0.0.1:1", "--redis", "redis://127.0.0.1:2"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--redis is given 2 times: more than one only with --cluster (startup nodes) or --sentinel"),
    });
    expect(await refused(["--cluster", "--redis", "redis://a:pw@127.0.0.1:1", "--redis", "redis://b:pw@127.0.0.1:2"])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("every --redis must have the scheme, user and password of the first (the second has"),
    });
    // The password is never printed, whichever URL holds it.
    const sentinel = await refused(["--sentinel", "m", "--redis", "redis://127.0.0.1:1", "--redis", "rediss://u:secret@127.0.0.1:2"]);
    expect(sentinel).toMatchObject({ code: 2 });
    expect(sentinel?.stderr).not.toContain("secret");
  });
});
