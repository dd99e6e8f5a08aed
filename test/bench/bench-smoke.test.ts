// The benchmarks are not tests, but they must not rot: run every case once with tiny
// counts (smoke mode) and check that each produced its figures under their stable names.
// Nothing here asserts a performance target.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { BENCH_CASE_NAMES, BENCH_CASES, type BenchResults, benchBudgets, RESULTS_SCHEMA, runBenchmarks } from "../../dist/bench/index.js";
import { renderCharts, renderMarkdownReport, renderReport } from "../../dist/bench/report.js";

/** Every number anywhere in `value`, with its path. */
function numbersIn(value: unknown, path = "$"): [string, number][] {
  if (typeof value === "number") return [[path, value]];
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, member]) => numbersIn(member, `${path}.${key}`));
}

const TARGET_IDS = [
  "serializer.flat100.oursVsSss",
  "serializer.flat100.oursVsJson",
  "serializer.nested120.oursVsSss",
  "serializer.nested120.oursVsJson",
  "serializer.string4000.oursVsSss",
  "serializer.string4000.oursVsJson",
  "inProcess.ratio",
  "inProcess.stepsRatio",
  "inProcess.tracedRatio",
  "workerDispatch.sequential.ratio",
  "workerDispatch.parallel.ratio",
  "workerDispatch.sequential.controlRatio",
  "workerDispatch.parallel.controlRatio",
  "cpuBatch.speedup",
  "cpuBatch.speedupVsCores",
  "cpuBatch.piscinaSpeedup",
  "responsiveness.worker.p99Ms",
  "responsiveness.inProcess.p99Ms",
  "abort.inProcess.cooperativeRejectMs",
  "abort.inProcess.spinningSettledAfterMs",
  "abort.worker.cooperativeRejectMs",
  "abort.worker.spinningRejectMs",
  "abort.worker.spinningNextCallMs",
  "scaling.outputObjectKeys.perDoubling",
  "scaling.outputArrayElements.perDoubling",
  "scaling.argumentsObjectKeys.perDoubling",
  "scaling.argumentsArrayElements.perDoubling",
  "scaling.batchInProcess.perDoubling",
  "scaling.batchWorker.perDoubling",
  "scaling.cpuThreads.perDoubling",
  "peers.rawWorkerThreads.usPerCall",
  "peers.piscina.usPerCall",
  "peers.tinypool.usPerCall",
  "peers.workerpool.usPerCall",
  "peers.toolgate.usPerCall",
];

/** Case 10, versus what a user would pick instead (issue 32), after the queue's rows. */
const VERSUS_TARGET_IDS = [
  "versus.aiSdkStep",
  "versus.openAiAgentsStep",
  "versus.mcpCall",
  "versus.mcpCallPoolAlive",
  "versus.piStep",
  "versus.inProcessVsAiSdkSteps",
  "versus.aiSdkStepWorker",
  "versus.mcpCallWorker",
];

const INFORMATIONAL = [
  "inProcess.ratio", // a call with no contract: context, its floor inProcess.stepsRatio (issue 32)
  "inProcess.stepsRatio",
  "inProcess.tracedRatio", // what a recorded span costs: the SDK's work, context not a target
  "workerDispatch.sequential.ratio", // at a floor (issue 43): bench/index.ts FLOOR_ROWS
  "workerDispatch.sequential.controlRatio", // two identical bare Piscina pools: the instrument's spread
  "workerDispatch.parallel.controlRatio",
  "cpuBatch.speedupVsCores", // issue 10's 0.95 x cores, context since issue 43 judges against bare Piscina
  "cpuBatch.piscinaSpeedup",
  "abort.inProcess.spinningSettledAfterMs",
  "scaling.cpuThreads.perDoubling",
  ...TARGET_IDS.filter((id) => id.startsWith("peers.")),
];

/** Case 7 runs only when Redis answers (required in CI); its sandboxed comparison only with a redis-server on PATH. */
const SANDBOX_TARGET_IDS = [
  "queue.vsSandbox1",
  "queue.vsSandbox8",
  "queue.commandsPerCall.inFlight1.ours",
  "queue.commandsPerCall.inFlight1.peer",
  "queue.bytesPerCall.inFlight1.ours",
  "queue.bytesPerCall.inFlight1.peer",
  "queue.criticalPathRequests.inFlight1.ours",
  "queue.criticalPathRequests.inFlight1.peer",
  "queue.commandsPerCall.inFlight8.ours",
  "queue.commandsPerCall.inFlight8.peer",
];
/** Issue 42: durable calls on a private redis-server (the queue's rows once the queue takes durable calls). */
const DURABLE_TARGET_IDS = [
  "queue.durable.inProcess.vsBound",
  "queue.durable.inProcess.vsFloor",
  "queue.durable.inProcess.criticalPathRequests",
];
const DURABLE_QUEUE_TARGET_IDS = [
  "queue.durable.vsPlain1",
  "queue.durable.vsPlain8",
  "queue.durable.commandsPerCall.inFlight1",
  "queue.durable.criticalPathRequests",
];
const QUEUE_TARGET_IDS = [
  "queue.hosts1.inFlight1.ratio",
  "queue.hosts1.inFlight8.ratio",
  "queue.hosts2.inFlight1.ratio",
  "queue.hosts2.inFlight8.ratio",
];

const RUN = fileURLToPath(new URL("../../dist/bench/run.js", import.meta.url));

describe("docs/benchmarks.md — How to reproduce: benchmarks, smoke mode (one tiny round of every case)", () => {
  const dir = mkdtempSync(join(tmpdir(), "toolgate-bench-run-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let results: BenchResults;
  let printed: string;
  beforeAll(() => {
    // What `BENCH_SMOKE=1 npm run bench` runs (after the build): every case, each in a process of its own.
    const file = join(dir, "results.json");
    const run = spawnSync(process.execPath, [RUN], {
      env: { ...process.env, BENCH_SMOKE: "1", BENCH_OUT: file },
      encoding: "utf8",
      timeout: 150_000,
    });
    expect(run.status, run.stderr).toBe(0);
    printed = run.stdout;
    results = JSON.parse(readFileSync(file, "utf8")) as BenchResults;
  }, 160_000);

  test("each case ran in a process of its own, in case order, and the printed report says so", () => {
    const processes = results.caseProcesses ?? {};
    expect(Object.keys(processes)).toEqual([...BENCH_CASE_NAMES]);
    const pids = Object.values(processes).map((run) => run.pid);
    expect(new Set(pids).size).toBe(BENCH_CASE_NAMES.length);
    expect(pids).not.toContain(process.pid);
    for (const run of Object.values(processes)) expect(run).toMatchObject({ node: process.version, durationMs: expect.any(Number) });
    expect(printed).toContain("Each case ran in a process of its own");
    expect(results.caseRuns).toBeUndefined();
  });

  test("runBenchmarks (the library) runs every case in its caller's process: the same sections and target rows", async () => {
    const inProcess = await runBenchmarks({ smoke: true });
    expect(inProcess.caseProcesses).toBeUndefined();
    expect(Object.keys(inProcess)).toEqual(Object.keys(results).filter((key) => key !== "caseProcesses" && key !== "processesPerCase"));
    expect(inProcess.targets.map((check) => check.id)).toEqual(results.targets.map((check) => check.id));
  }, 60_000);

  test("BENCH_CASE_RESULTS (set by a whole run for each case's process) without BENCH_CASE is refused, exit code 2", () => {
    const run = spawnSync(process.execPath, [RUN], {
      env: { ...process.env, BENCH_SMOKE: "1", BENCH_CASE_RESULTS: join(dir, "stray.json") },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain("BENCH_CASE_RESULTS: set by a whole run for one case's process; it needs BENCH_CASE");
    expect(() => readFileSync(join(dir, "stray.json"))).toThrow();
  });

  test("every figure is a finite number", () => {
    const numbers = numbersIn(results);
    expect(numbers.length).toBeGreaterThan(60);
    expect(numbers.filter(([, value]) => !Number.isFinite(value))).toEqual([]);
    expect(results.schema).toBe(RESULTS_SCHEMA);
    expect(results.mode).toBe("smoke");
  });

  test("serializer: three shapes, three implementations, two ratios", () => {
    expect(Object.keys(results.serializer.shapes)).toEqual(["flat100", "nested120", "string4000"]);
    for (const shape of Object.values(results.serializer.shapes)) {
      expect(shape).toEqual({
        nodes: expect.any(Number),
        members: expect.any(Number),
        depth: expect.any(Number),
        outputChars: expect.any(Number),
        oursOpsPerSec: expect.any(Number),
        sssOpsPerSec: expect.any(Number),
        jsonOpsPerSec: expect.any(Number),
        oursVsSss: expect.any(Number),
        oursVsJson: expect.any(Number),
      });
      expect(shape.nodes).toBeLessThanOrEqual(128); // inside the serializer's budgets: rendered in full
      expect(shape.oursOpsPerSec).toBeGreaterThan(0);
    }
  });

  test("in-process overhead and worker dispatch report µs per call and a ratio", () => {
    expect(results.inProcess).toMatchObject({
      oursUsPerCall: expect.any(Number),
      naiveUsPerCall: expect.any(Number),
      ratio: expect.any(Number),
      stepsUsPerCall: expect.any(Number),
      stepsRatio: expect.any(Number),
      tracing: { noSdkCheckNsPerCall: expect.any(Number), noSdkCheckShare: expect.any(Number) },
    });
    expect(results.inProcess.stepsUsPerCall).toBeGreaterThan(0);
    // The SDK is installed beside ours when the registry answers; else the row says why.
    const { tracedUsPerCall, unavailable } = results.inProcess.tracing;
    expect(tracedUsPerCall === null ? typeof unavailable : tracedUsPerCall).toEqual(
      tracedUsPerCall === null ? "string" : expect.any(Number),
    );
    for (const variant of [results.workerDispatch.sequential, results.workerDispatch.parallel]) {
      expect(variant).toMatchObject({
        threads: expect.any(Number),
        inFlight: expect.any(Number),
        oursUsPerCall: expect.any(Number),
        piscinaUsPerCall: expect.any(Number),
        oursCallsPerSec: expect.any(Number),
        piscinaCallsPerSec: expect.any(Number),
        ratio: expect.any(Number),
        oursCpuUsPerCall: expect.any(Number),
        piscinaCpuUsPerCall: expect.any(Number),
        cpuRatio: expect.any(Number),
        controlUsPerCall: expect.any(Number),
        controlRatio: expect.any(Number),
      });
      // The control ran its own calls: a pool that ran none would read 0 µs.
      expect(variant.controlUsPerCall).toBeGreaterThan(0);
      expect(variant.controlRatio).toBeGreaterThan(0);
    }
    expect(results.workerDispatch.sequential.threads).toBe(1);
  });

  test("CPU batch, responsiveness and abort latency report their figures", () => {
    expect(results.cpuBatch).toMatchObject({
      calls: expect.any(Number),
      toolMs: expect.any(Number),
      inProcessCallsPerSec: expect.any(Number),
      workerCallsPerSec: expect.any(Number),
      speedup: expect.any(Number),
      piscinaMs: expect.any(Number),
      piscinaSpeedup: expect.any(Number),
      oursVsPiscina: expect.any(Number),
      targetSpeedup: expect.any(Number),
    });
    expect(results.cpuBatch.piscinaMs).toBeGreaterThan(0);
    // Issue 43, section 2: the target follows bare Piscina's own speedup in the same rounds.
    expect(results.cpuBatch.targetSpeedup).toBeCloseTo(0.97 * results.cpuBatch.piscinaSpeedup, 1);
    for (const delay of [results.responsiveness.inProcess, results.responsiveness.worker]) {
      expect(delay).toEqual({
        samples: expect.any(Number),
        p50Ms: expect.any(Number),
        p99Ms: expect.any(Number),
        maxMs: expect.any(Number),
      });
      expect(delay.samples).toBeGreaterThan(0);
    }
    expect(results.abort.worker).toMatchObject({
      cooperativeRejectMs: expect.any(Number),
      cooperativeNextCallMs: expect.any(Number),
      spinningRejectMs: expect.any(Number),
      spinningNextCallMs: expect.any(Number),
    });
    expect(results.abort.worker.threadReplaced).toBe(true); // the spinning thread was terminated
    expect(results.abort.inProcess.cooperativeRejectMs).toEqual(expect.any(Number));
  });

  test("through Redis: 1 and 2 hosts, sequential and a window in flight, beside raw BullMQ", () => {
    if (process.env.TOOLGATE_REQUIRE_REDIS === "1") expect(results.queue.ran).toBe(true);
    if (!results.queue.ran) return;
    expect(results.queue.variants.map((variant) => [variant.hosts, variant.inFlight])).toEqual([
      [1, 1],
      [1, 8],
      [2, 1],
      [2, 8],
    ]);
    for (const variant of results.queue.variants) {
      expect(variant.oursCallsPerSec).toBeGreaterThan(0);
      expect(variant.bullmqCallsPerSec).toBeGreaterThan(0);
      expect(variant.ratio).toEqual(expect.any(Number));
    }
  });

  test("through Redis, side by side with BullMQ's sandboxed processor: ratios at 1 and 8 in flight, Redis commands per call", () => {
    if (!results.queue.ran || !results.queue.sandbox.ran) return;
    const sandbox = results.queue.sandbox;
    expect(sandbox.variants.map((variant) => variant.inFlight)).toEqual([1, 8]);
    for (const variant of sandbox.variants) {
      expect(variant.oursUsPerCall).toBeGreaterThan(0);
      expect(variant.peerUsPerCall).toBeGreaterThan(0);
      expect(Number.isFinite(variant.ratio)).toBe(true);
    }
    // Every call costs Redis commands on both sides: a figure of 0 would mean the count read nothing.
    expect(sandbox.commandsPerCall.ours).toBeGreaterThan(5);
    expect(sandbox.commandsPerCall.peer).toBeGreaterThan(5);
  });

  test("durable calls beside plain ones: every durable call costs Redis commands and requests a plain in-process call does not", () => {
    if (!results.queue.ran) return;
    const durable = results.queue.durable;
    if (process.env.TOOLGATE_REQUIRE_REDIS === "1") expect(durable.ran).toBe(true);
    if (!durable.ran) return;
    // A claim before the tool runs and the outcome recorded before it is answered: a figure of 0
    // would mean the count read nothing (or the store was bypassed).
    expect(durable.inProcess.commandsPerCall).toBeGreaterThan(1);
    expect(durable.inProcess.criticalPathRequests).toBeGreaterThanOrEqual(1);
    expect(durable.inProcess.durableUsPerCall).toBeGreaterThan(0);
    expect(Number.isFinite(durable.inProcess.vsBound)).toBe(true);
    // The floor probe sends the same two scripts in turn: it takes time, and the bound's PING is one request of it.
    expect(durable.inProcess.floorProbeUs).toBeGreaterThan(0);
    expect(Number.isFinite(durable.inProcess.vsFloor)).toBe(true);
    expect(durable.inProcess.unacknowledged.usPerCall).toBeGreaterThan(0);
    if (durable.queue !== undefined) {
      expect(durable.queue.commandsPerCall.durable.commands).toBeGreaterThan(durable.queue.commandsPerCall.plain.commands);
    } else {
      expect(durable.queueReason).toMatch(/durable/);
    }
  });

  test("every target has a stable id, a verdict, and the report renders it", () => {
    const sandboxIds = results.queue.ran && results.queue.sandbox.ran ? SANDBOX_TARGET_IDS : [];
    const durable = results.queue.ran ? results.queue.durable : undefined;
    const durableIds =
      durable?.ran === true ? [...DURABLE_TARGET_IDS, ...(durable.queue === undefined ? [] : DURABLE_QUEUE_TARGET_IDS)] : [];
    const queueIds = results.queue.ran ? [...sandboxIds, ...durableIds, ...QUEUE_TARGET_IDS] : [];
    expect(results.targets.map((check) => check.id)).toEqual([...TARGET_IDS, ...queueIds, ...VERSUS_TARGET_IDS]);
    for (const check of results.targets) {
      expect(check).toMatchObject({ target: expect.any(String), value: expect.any(Number), pass: expect.any(Boolean) });
    }
    const informational = results.targets.filter((check) => check.informational === true).map((check) => check.id);
    // The sandboxed comparison's two ratios (issue 29) and our exact counts (issue 43) have targets; the peer's counts and every other queue row are context.
    expect(informational).toEqual([
      ...INFORMATIONAL,
      ...queueIds.filter(
        (id) => !id.startsWith("queue.vsSandbox") && !id.endsWith(".ours") && !id.endsWith(".vsBound") && !/\.vsPlain\d$/.test(id),
      ),
      "versus.mcpCallPoolAlive",
      "versus.piStep", // at a floor (issue 43): bench/index.ts FLOOR_ROWS
      "versus.aiSdkStepWorker",
      "versus.mcpCallWorker",
    ]);
    // A figure shown for context has no bar to miss: its verdict never reads as a miss.
    expect(results.targets.filter((check) => check.informational === true && !check.pass).map((check) => check.id)).toEqual([]);
    expect(results.summary.passed + results.summary.missed).toBe(
      TARGET_IDS.length + queueIds.length + VERSUS_TARGET_IDS.length - informational.length,
    );
    const report = renderReport(results);
    for (const heading of [
      "Versus what you would use instead",
      "1. Serializer",
      "2. In-process",
      "3. Worker dispatch",
      "4. CPU-heavy batch",
      "5. Main-thread",
      "6. Abort latency",
      "7. Scaling",
      "8. Peers",
      "9. Through Redis",
      "Context, not targets",
      "Targets:",
    ]) {
      expect(report).toContain(heading);
    }
    // Every versus row names the command that measures it.
    for (const id of VERSUS_TARGET_IDS) expect(report).toMatch(new RegExp(`\`${id}\`.*\`BENCH_CASE=versus npm run bench\``));
    expect(report).not.toContain("NaN");
    // Every table row has as many cells as its header.
    const tables = report.split(/\n(?!\|)/).map((block) => block.split("\n").filter((line) => line.startsWith("|")));
    for (const rows of tables.filter((lines) => lines.length > 0)) {
      const cells = (line: string) => line.split("|").length;
      expect(rows.map(cells)).toEqual(rows.map(() => cells(rows[0] as string)));
    }
    expect(JSON.parse(JSON.stringify(results))).toEqual(results);
  });

  test("scaling: every series doubles N over at least 2 steps (6 in a full run); batches report per-call figures", () => {
    for (const series of Object.values(results.scaling.series)) {
      expect(series.points.length).toBeGreaterThanOrEqual(2);
      for (let index = 1; index < series.points.length; index += 1) {
        expect(series.points[index]?.n).toBe(2 * (series.points[index - 1]?.n ?? 0));
      }
    }
    for (const series of [results.scaling.series.batchInProcess, results.scaling.series.batchWorker]) {
      for (const point of series.points)
        expect(point).toEqual({
          n: expect.any(Number),
          us: expect.any(Number),
          usPerCall: expect.any(Number),
          bytesPerCall: expect.any(Number),
        });
    }
  });

  test("peers: every pool ran the same tasks, and toolgate's overhead over each is stated", () => {
    expect(Object.keys(results.peers.peers)).toEqual(["rawWorkerThreads", "piscina", "tinypool", "workerpool", "toolgate"]);
    for (const figures of Object.values(results.peers.peers)) {
      expect(figures.usPerCall).toBeGreaterThan(0);
      expect(figures.cpuTaskUsPerCall).toBeGreaterThan(0);
    }
    expect(results.peers.peers.toolgate.toolgateRatio).toBe(1);
  });

  test("versus: every comparison times both sides, with wall and CPU ratios", () => {
    for (const id of VERSUS_TARGET_IDS) {
      const key = id.slice("versus.".length) as keyof BenchResults["versus"];
      const figure = results.versus[key];
      expect(figure).toMatchObject({ ours: expect.any(String), peer: expect.any(String), callsPerRound: expect.any(Number) });
      if (typeof figure !== "object" || !("oursUsPerCall" in figure)) throw new Error(`${id} is not a comparison`);
      expect(figure.oursUsPerCall).toBeGreaterThan(0);
      expect(figure.peerUsPerCall).toBeGreaterThan(0);
      expect(figure.ratio).toBeCloseTo(figure.oursUsPerCall / figure.peerUsPerCall, 1); // one round: the ratio is that round's
      expect(Number.isFinite(figure.cpuRatio)).toBe(true);
    }
    expect(results.versus.inProcessExecutorUsPerCall).toBeGreaterThan(0);
  });

  test("report.md: one well-formed SVG chart per section, each referenced", () => {
    const charts = renderCharts(results);
    expect(Object.keys(charts)).toEqual([
      "versus",
      "serializer",
      "in-process",
      "worker-dispatch",
      "cpu-batch",
      "responsiveness",
      "abort",
      "scaling",
      "peers",
    ]);
    for (const svg of Object.values(charts)) {
      expect(svg.startsWith("<svg ")).toBe(true);
      expect(svg.trimEnd().endsWith("</svg>")).toBe(true);
      expect(svg).not.toContain("NaN");
    }
    const markdown = renderMarkdownReport(results, Object.keys(charts));
    for (const name of Object.keys(charts)) expect(markdown).toContain(`(charts/${name}.svg)`);
  });
});

describe("benchmarks, smoke mode: the budgets case", () => {
  test("every default budget's worst admitted input, beside JSON.stringify, on both sides", async () => {
    const budgets = await benchBudgets({ smoke: true });
    const cases = Object.values(budgets.cases);
    expect(cases.filter((figures) => figures.side === "output").map((figures) => figures.budget.split(" ")[0])).toEqual([
      "maxDepth",
      "maxNodes",
      "maxNodes",
      "maxMembers",
      "maxStringCodePoints",
      "maxBigIntBits",
    ]);
    expect(cases.filter((figures) => figures.side === "arguments").map((figures) => figures.budget.split(" ")[0])).toEqual([
      "maxDepth",
      "maxNodes",
      "maxNodes",
      "maxStringLength",
      "maxTotalSize",
      "maxNodes",
    ]);
    for (const figures of cases) {
      expect(figures.oursUs).toBeGreaterThan(0);
      expect(figures.jsonUs).toBeGreaterThan(0);
      expect(Number.isFinite(figures.oursOverJson)).toBe(true);
    }
    expect(budgets.targets).toEqual([]);
  }, 60_000);
});

describe("docs/benchmarks.md — How to reproduce: BENCH_CASE=<name> runs one case alone and merges it into the results file", () => {
  const dir = mkdtempSync(join(tmpdir(), "toolgate-bench-case-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const runCase = (name: string, out: string) =>
    spawnSync(process.execPath, [RUN], {
      env: { ...process.env, BENCH_SMOKE: "1", BENCH_CASE: name, BENCH_OUT: out },
      encoding: "utf8",
      timeout: 60_000,
    });

  /** A results file as a previous run left it: a section of another case, rows of both, one stale row of the case. */
  function previousFile(name: string, section: string): string {
    const file = join(dir, `${name}.json`);
    const kept = { id: "serializer.flat100.oursVsSss", target: "kept", value: 1, pass: false };
    const stale = { id: `${section}.gone`, target: "replaced", value: 9, pass: false };
    writeFileSync(
      file,
      JSON.stringify({ schema: RESULTS_SCHEMA, serializer: { marker: "kept" }, [section]: { marker: "old" }, targets: [stale, kept] }),
    );
    return file;
  }

  test.each([
    ["versus", "versus", "Versus what you would use instead"],
    ["inProcess", "inProcess", "2. In-process call overhead"],
  ])(
    "BENCH_CASE=%s: prints its section, replaces its section and rows, keeps the rest, counts the summary again",
    (name, section, heading) => {
      const file = previousFile(name, section);
      const run = runCase(name, file);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toContain(heading);
      const merged = JSON.parse(readFileSync(file, "utf8")) as BenchResults & Record<string, unknown>;
      expect(merged.serializer).toEqual({ marker: "kept" });
      expect(merged[section]).not.toEqual({ marker: "old" });
      const ids = merged.targets.map((check) => check.id);
      const fresh = (merged[section] as { targets: { id: string }[] }).targets.map((check) => check.id);
      expect(fresh.length).toBeGreaterThan(0);
      // Section order: the serializer's row first, then the case's fresh rows; the stale one is gone.
      expect(ids).toEqual(["serializer.flat100.oursVsSss", ...fresh]);
      const counted = merged.targets.filter((check) => check.informational !== true);
      expect(merged.summary.passed + merged.summary.missed).toBe(counted.length);
      expect(merged.summary.missedIds).toContain("serializer.flat100.oursVsSss");
      expect(merged.caseRuns?.[name]).toMatchObject({
        node: process.version,
        pid: expect.any(Number),
        loadAverageStart: expect.any(Number),
      });
    },
    60_000,
  );

  test("every case has a name BENCH_CASE takes", () => {
    // Each name runs a case (bench/index.ts BENCH_CASES), and each case has a name.
    expect(Object.keys(BENCH_CASES).sort()).toEqual([...BENCH_CASE_NAMES].sort());
    expect(new Set(BENCH_CASE_NAMES).size).toBe(BENCH_CASE_NAMES.length);
  });

  test("an unknown name is refused with exit code 2 and the list of valid names; nothing is written", () => {
    const file = join(dir, "unknown.json");
    const run = runCase("nope", file);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`BENCH_CASE: no case named "nope"; the cases are: ${BENCH_CASE_NAMES.join(", ")}`);
    expect(() => readFileSync(file)).toThrow();
  });
});

describe("docs/benchmarks.md — Verdicts over processes: BENCH_PROCESSES=<odd n> judges every row on the median of n processes", () => {
  const dir = mkdtempSync(join(tmpdir(), "toolgate-bench-processes-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const runCase = (processes: string, out: string) =>
    spawnSync(process.execPath, [RUN], {
      env: { ...process.env, BENCH_SMOKE: "1", BENCH_CASE: "serializer", BENCH_PROCESSES: processes, BENCH_OUT: out },
      encoding: "utf8",
      timeout: 90_000,
    });

  test("BENCH_PROCESSES=3: each row holds its 3 processes' values, their median, its verdict and the spread; 3 pids", () => {
    const file = join(dir, "three.json");
    const run = runCase("3", file);
    expect(run.status, run.stderr).toBe(0);
    const results = JSON.parse(readFileSync(file, "utf8")) as BenchResults;
    expect(results.targets.length).toBe(6);
    for (const check of results.targets) {
      const values = check.processValues ?? [];
      expect(check.processes).toBe(3);
      expect(values).toHaveLength(3);
      const middle = [...values].sort((a, b) => a - b)[1];
      expect(check.value).toBe(middle);
      expect(check.spread).toBeCloseTo(Math.max(...values) - Math.min(...values), 3);
    }
    const pids = results.caseRuns?.serializer?.pids ?? [];
    expect(new Set(pids).size).toBe(3);
    expect(pids).not.toContain(process.pid);
  }, 100_000);

  test("an even or non-numeric BENCH_PROCESSES is refused with exit code 2 before any case runs; nothing is written", () => {
    for (const processes of ["2", "0", "five"]) {
      const file = join(dir, `refused-${processes}.json`);
      const run = runCase(processes, file);
      expect(run.status).toBe(2);
      expect(run.stderr).toContain(
        `BENCH_PROCESSES must be an odd positive integer: each row is judged on the median process (got "${processes}")`,
      );
      expect(() => readFileSync(file)).toThrow();
    }
  }, 100_000);
});
