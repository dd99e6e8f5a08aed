// The instrument's arithmetic, on dumps and results written out by hand: how a callgrind dump
// is read, how its instructions split into GC, compilation and the rest, how JIT code is named,
// and how the results file keeps the counts beside a wall-time run. (Counting itself needs
// valgrind and minutes: `npm run bench:instructions`, docs/benchmarks.md.)
import { describe, expect, test } from "vitest";
import type { TargetCheck } from "../../bench/harness.js";
import { type CaseResults, combineProcesses, FLOOR_ROWS } from "../../bench/index.js";
import { ownByFunction, parseDump, perfMapLookup, splitDump } from "../../bench/instructions/callgrind.js";
import { keepInstructions, mergeInstructions } from "../../bench/instructions/merge.js";

/**
 * A dump as callgrind 3.19 writes it with --dump-instr=yes --dump-line=no: compressed names,
 * relative instruction addresses, call costs after `calls=` lines. JavaScript (a JIT address)
 * allocates; the allocation enters the GC; the runtime compiles, and the compiler's zone
 * helper (not a compiler function) calls back into the compiler and into the GC.
 */
const DUMP = `version: 1
creator: callgrind-3.19.0
desc: Trigger: --dump-before=uv_os_getpriority
positions: instr
events: Ir
summary: 1000
totals: 1000
ob=(1) /usr/bin/node
fn=(1) 0x000000000000abc0
0x1000 100
+4 50
cfn=(2) v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace)
calls=1 0x2000
+2 300
cfn=(3) Runtime_CompileOptimized
calls=1 0x3000
* 400
fn=(2)
0x2000 120
cfn=(4) v8::internal::Scavenger::Process()
calls=2 0x2100
+8 180
fn=(4)
0x2100 180
fn=(3)
0x3000 40
cfn=(5) v8::internal::compiler::PipelineImpl::Run()
calls=1 0x4000
+1 360
fn=(5)
0x4000 200
cfn=(6) v8::internal::Zone::Expand(unsigned long)
calls=1 0x5000
+3 160
fn=(6)
0x5000 30
cfn=(5)
calls=1 0x4000
+1 60
cfn=(2)
calls=1 0x2000
+1 70
fn=(7) Builtins_ObjectFreeze
0x6000 150
`;

describe("bench/instructions/callgrind.ts: reading a dump", () => {
  const dump = parseDump(DUMP);

  test("the trigger, the total, own costs by function (names decompressed) and inclusive call costs", () => {
    expect(dump.trigger).toBe("--dump-before=uv_os_getpriority");
    expect(dump.total).toBe(1000);
    expect(dump.self.get("0x000000000000abc0")).toBe(150);
    expect(dump.self.get("v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace)")).toBe(120);
    expect(dump.self.get("Builtins_ObjectFreeze")).toBe(150);
    expect(dump.calls.get("0x000000000000abc0\0Runtime_CompileOptimized")).toBe(400);
    expect(dump.calls.get("v8::internal::Zone::Expand(unsigned long)\0v8::internal::compiler::PipelineImpl::Run()")).toBe(60);
  });

  test("JIT code's own costs by instruction address, relative addresses resolved (+4 after 0x1000)", () => {
    expect([...dump.jit]).toEqual([
      [0x1000, 100],
      [0x1004, 50],
    ]);
  });

  test("GC and compilation by own instructions: their functions by name, and a helper called only from the compiler, counted once", () => {
    // GC: CollectGarbage 120 + the scavenger 180. Compilation: the runtime entry 40, the
    // pipeline 200 and the zone helper only it calls 30 (re-entering the pipeline adds nothing).
    // Builtins_ObjectFreeze and the JIT code stay with the calls.
    expect(splitDump(dump)).toEqual({ total: 1000, gc: 300, compiler: 270, run: 430 });
  });

  test("a helper that the calls also use stays with the calls, and a builtin never joins a column", () => {
    const shared = parseDump(`events: Ir
totals: 100
fn=(1) 0x0000000000000010
0x10 10
cfn=(2) memcpy
calls=1 0x20
+1 20
cfn=(3) Builtins_CompileLazy
calls=1 0x30
+1 50
fn=(3)
0x30 50
fn=(4) v8::internal::Scavenger::Process()
0x40 20
cfn=(2)
calls=1 0x20
+1 20
fn=(2)
0x20 20
`);
    expect(splitDump(shared)).toEqual({ total: 100, gc: 20, compiler: 0, run: 80 });
  });

  test("JIT code named from node's perf map by address; a later entry for the same range wins; unknown addresses say so", () => {
    const lookup = perfMapLookup("ff0 12 JS:~old\nff0 12 JS:*executeToolCall file:///x.js:1:1\n");
    expect(lookup(0x1000)).toBe("JS:*executeToolCall file:///x.js:1:1");
    expect(lookup(0x1010)).toBeUndefined();
    const own = ownByFunction(dump, lookup);
    expect(own.get("JS:*executeToolCall file:///x.js:1:1")).toBe(100);
    expect(own.get("(JIT code not in the perf map)")).toBe(50);
    expect(own.has("0x000000000000abc0")).toBe(false);
  });
});

const row = (id: string, value: number, pass: boolean, extra: Partial<TargetCheck> = {}): TargetCheck => ({
  id,
  target: "ours / peer <= 1",
  value,
  pass,
  ...extra,
});

const caseRun = (pid: number, rows: TargetCheck[], detail: number): CaseResults =>
  ({
    name: "versus",
    sections: { versus: { detail, targets: rows } },
    run: { startedAt: "t", durationMs: 1, node: "v", pid, loadAverageStart: 0, loadAverageEnd: 0 },
  }) as unknown as CaseResults;

describe("bench/index.ts combineProcesses: every row judged on the median process", () => {
  const runs = [
    caseRun(11, [row("versus.aiSdkStep", 0.9, true, { min: 0.8 }), row("versus.piStep", 1.2, false, { min: 1.1 })], 1),
    caseRun(12, [row("versus.aiSdkStep", 1.3, false, { min: 0.7 }), row("versus.piStep", 1.0, true, { min: 0.9 })], 2),
    caseRun(13, [row("versus.aiSdkStep", 1.1, false, { min: 1.0 }), row("versus.piStep", 1.1, false, { min: 1.0 })], 3),
  ];
  const combined = combineProcesses(runs);
  const rows = (combined.sections.versus as unknown as { targets: TargetCheck[] }).targets;

  test("the median process's value and verdict, each process's value in order, the spread, the lowest min", () => {
    expect(rows[0]).toMatchObject({ id: "versus.aiSdkStep", value: 1.1, pass: false, min: 0.7, processes: 3, spread: 0.4 });
    expect(rows[0]?.processValues).toEqual([0.9, 1.3, 1.1]);
  });

  test("a row at a floor becomes informational, its floor in the note", () => {
    expect(rows[1]).toMatchObject({ id: "versus.piStep", value: 1.1, informational: true, processValues: [1.2, 1.0, 1.1] });
    expect(rows[1]?.note).toBe(FLOOR_ROWS["versus.piStep"]);
  });

  test("the sections' detail figures are the middle process's of the first row, and every pid is kept", () => {
    expect((combined.sections.versus as unknown as { detail: number }).detail).toBe(3);
    expect(combined.run).toMatchObject({ pid: 13, pids: [11, 12, 13] });
  });

  test("an even number of processes, or a row missing from one, is refused", () => {
    expect(() => combineProcesses(runs.slice(0, 2))).toThrow("odd number of processes (got 2)");
    const missing = [...runs.slice(0, 2), caseRun(14, [row("versus.aiSdkStep", 1, true)], 4)];
    expect(() => combineProcesses(missing)).toThrow("the versus case's processes disagree on its rows (versus.piStep)");
  });
});

describe("bench/instructions/merge.ts: the counts and a wall-time run share bench/results.json", () => {
  const wallRows = [row("serializer.flat100.oursVsSss", 1.4, true), row("versus.piStep", 1.1, false)];
  const counted = { repeats: 1, targets: [row("instructions.piStep", 1.1, false), row("instructions.mcpCall", 0.9, true)] };

  test("merging the counts replaces the previous instructions rows only, and counts the summary again", () => {
    const previous = { serializer: { x: 1 }, targets: [...wallRows, row("instructions.old", 2, false)], summary: {} };
    const merged = mergeInstructions(previous, counted);
    expect((merged.targets as TargetCheck[]).map((check) => check.id)).toEqual([
      "serializer.flat100.oursVsSss",
      "versus.piStep",
      "instructions.piStep",
      "instructions.mcpCall",
    ]);
    expect(merged.serializer).toEqual({ x: 1 });
    expect(merged.instructions).toBe(counted);
    expect(merged.summary).toEqual({ passed: 2, missed: 2, missedIds: ["versus.piStep", "instructions.piStep"] });
  });

  test("a wall-time run written over the file keeps its instructions section and rows; a file without them gains none", () => {
    const file = mergeInstructions({ targets: wallRows }, counted);
    const fresh = { targets: [row("serializer.flat100.oursVsSss", 1.3, true)], summary: {} };
    const kept = keepInstructions(fresh, file);
    expect((kept.targets as TargetCheck[]).map((check) => check.id)).toEqual([
      "serializer.flat100.oursVsSss",
      "instructions.piStep",
      "instructions.mcpCall",
    ]);
    expect(kept.instructions).toBe(counted);
    expect(kept.summary).toEqual({ passed: 2, missed: 1, missedIds: ["instructions.piStep"] });
    expect(keepInstructions(fresh, { targets: wallRows })).toBe(fresh);
  });
});
