// Reads one callgrind dump (the format of callgrind 3.x, one event: Ir) into what the
// instruction counts need: the total, each function's own instructions, and the instructions
// of every call from one function into another (inclusive), from which the GC and compiler
// columns are made by function name.

/** One dump: its trigger, total instructions, own (exclusive) instructions per function, and calls. */
export interface Dump {
  readonly trigger: string;
  readonly total: number;
  readonly self: Map<string, number>;
  /** Inclusive instructions of the calls from `caller` into `callee`, keyed `caller\0callee`. */
  readonly calls: Map<string, number>;
  /**
   * Own instructions of code callgrind has no symbol for (V8's JIT code: its function names
   * are "0x…" offsets), by instruction address (the dump must be written with
   * `--dump-instr=yes --dump-line=no`), for naming through node's perf map.
   */
  readonly jit: Map<number, number>;
}

/** The last number of a cost line ("<position> <Ir>", positions possibly relative: "+3", "-1", "*"). */
const costOf = (line: string): number => {
  const fields = line.trim().split(/\s+/);
  return Number(fields[fields.length - 1]);
};

/** A cost line's position (an instruction address with `--dump-instr=yes`), from the previous one when relative. */
const positionOf = (line: string, previous: number): number => {
  const field = line.slice(0, line.indexOf(" "));
  if (field.startsWith("0x")) return Number.parseInt(field.slice(2), 16);
  if (field.startsWith("+")) return previous + Number.parseInt(field.slice(1), field.startsWith("+0x") ? 16 : 10);
  if (field.startsWith("-")) return previous - Number.parseInt(field.slice(1), field.startsWith("-0x") ? 16 : 10);
  if (field === "*") return previous;
  return Number(field);
};

const add = (map: Map<string, number>, key: string, value: number): void => {
  map.set(key, (map.get(key) ?? 0) + value);
};

/**
 * Parses a dump. Names are compressed ("fn=(12) name" defines id 12, "fn=(12)" refers to it);
 * a cost line after "calls=" is that call's inclusive cost, any other cost line is the
 * current function's own.
 */
export function parseDump(text: string): Dump {
  const names = new Map<string, string>();
  const self = new Map<string, number>();
  const calls = new Map<string, number>();
  const jit = new Map<number, number>();
  let position = 0;
  let trigger = "";
  let total = Number.NaN;
  let current = "";
  let callee = "";
  let callCostNext = false;
  const nameOf = (spec: string): string => {
    const match = /^\((\d+)\)(?: (.*))?$/.exec(spec);
    if (match === null) return spec;
    const [, id = "", name] = match;
    if (name !== undefined) names.set(id, name);
    return names.get(id) ?? `(${id})`;
  };
  for (const line of text.split("\n")) {
    if (line.length === 0) continue;
    const first = line.charCodeAt(0);
    // Cost lines start with a digit, '+', '-' or '*'.
    if ((first >= 48 && first <= 57) || first === 43 || first === 45 || first === 42) {
      const cost = costOf(line);
      position = positionOf(line, position);
      if (callCostNext) {
        add(calls, `${current}\0${callee}`, cost);
        callCostNext = false;
      } else {
        add(self, current, cost);
        if (current.startsWith("0x")) jit.set(position, (jit.get(position) ?? 0) + cost);
      }
      continue;
    }
    if (line.startsWith("fn=")) current = nameOf(line.slice(3));
    else if (line.startsWith("cfn=")) callee = nameOf(line.slice(4));
    else if (line.startsWith("calls=")) callCostNext = true;
    else if (line.startsWith("desc: Trigger:")) trigger = line.slice("desc: Trigger:".length).trim();
    else if (line.startsWith("totals:") || line.startsWith("summary:")) total = costOf(line.slice(line.indexOf(":") + 1));
  }
  return { trigger, total, self, calls, jit };
}

/**
 * V8's garbage collector, by the names of its functions: the young and old generation
 * collectors, incremental and concurrent marking, the sweeper, the tracer and the embedder
 * (cppgc) heap. Allocation's fast paths (Heap::AllocateRaw and friends) are not GC.
 */
const GC =
  /v8::internal::(Heap::(CollectGarbage|CollectAllGarbage|PerformGarbageCollection|GarbageCollectionPrologue|GarbageCollectionEpilogue|Scavenge|MarkCompact|MinorMarkCompact|StartIncrementalMarking|FinalizeIncrementalMarking|CompleteSweeping|EnsureSweepingCompleted)|Scavenger|ScavengerCollector|MarkCompactCollector|MinorMarkCompactCollector|MinorMarkSweep|IncrementalMarking|ConcurrentMarking|MarkingVisitor|MainMarkingVisitor|MarkingBarrier|Sweeper|GCTracer|EmbedderHeapTracer|CppHeap|ArrayBufferSweeper|ScavengeJob|MemoryReducer|IncrementalMarkingJob|Evacuator|FullEvacuator|YoungGenerationEvacuator)|^cppgc::|^heap::base::/;

/**
 * V8's compilers: Turbofan (compiler::, turboshaft::), Maglev, Sparkplug (baseline::), the
 * bytecode compiler (lazy compilation: the parser and the bytecode generator), on-stack
 * replacement, deoptimization, and the code logger that records new code for `--perf-basic-prof`.
 */
const COMPILER =
  /v8::internal::(compiler::|turboshaft::|maglev::|baseline::|interpreter::BytecodeGenerator|Parser::|ParserBase|PreParser|Deoptimizer|Runtime_NotifyDeoptimized|OptimizingCompileDispatcher|CodeEventLogger|LinuxPerfBasicLogger)|Compile/;

/** Node's and libuv's functions and JavaScript (builtins, JIT code) are never a helper of GC or the compiler. */
const BOUNDARY = /^Builtins_|^0x|^node::|^uv_|^\(/;

type Kind = "gc" | "compiler" | "other";

/**
 * Builtins are never a column's own: callgrind charges what a builtin jumps to (its tail
 * call) to the builtin, and `Builtins_CompileLazy` jumps into the function it compiled.
 */
const kindOf = (name: string): Kind =>
  name.startsWith("Builtins_") ? "other" : GC.test(name) ? "gc" : COMPILER.test(name) ? "compiler" : "other";

/** A dump's instructions split into GC, compilation and the rest (the code that ran). */
export interface Split {
  readonly total: number;
  readonly gc: number;
  readonly compiler: number;
  /** total - gc - compiler: the calls' own work. */
  readonly run: number;
}

/**
 * Every function's column: GC or compiler by name, or by being called only from that column
 * (a helper such as the compiler's zone allocator; found to a fixed point). A function that
 * both columns or the calls themselves call (memcpy, the object factory) stays with the calls.
 */
function columns(dump: Dump): Map<string, Kind> {
  const callers = new Map<string, Set<string>>();
  for (const key of dump.calls.keys()) {
    const [caller = "", callee = ""] = key.split("\0");
    if (caller === callee) continue;
    const set = callers.get(callee) ?? new Set<string>();
    set.add(caller);
    callers.set(callee, set);
  }
  const kinds = new Map<string, Kind>();
  for (const name of new Set([...dump.self.keys(), ...callers.keys()])) kinds.set(name, kindOf(name));
  for (let changed = true; changed; ) {
    changed = false;
    for (const [name, kind] of kinds) {
      if (kind !== "other" || BOUNDARY.test(name)) continue;
      const from = [...(callers.get(name) ?? [])].map((caller) => kinds.get(caller) ?? "other");
      const only = from[0];
      if (only !== undefined && only !== "other" && from.every((kindOfCaller) => kindOfCaller === only)) {
        kinds.set(name, only);
        changed = true;
      }
    }
  }
  return kinds;
}

/**
 * Splits a dump by own (exclusive) instructions: a function's instructions are GC's or the
 * compiler's when it is theirs by name or is called only from them (bench/instructions/
 * callgrind.ts `columns`). Own costs add up to the total, so nothing is counted twice however
 * the calls recurse; what GC or the compiler spend in functions shared with the calls (memcpy)
 * stays with the calls.
 */
export function splitDump(dump: Dump): Split {
  const kinds = columns(dump);
  let gc = 0;
  let compiler = 0;
  for (const [name, cost] of dump.self) {
    const kind = kinds.get(name);
    if (kind === "gc") gc += cost;
    else if (kind === "compiler") compiler += cost;
  }
  return { total: dump.total, gc, compiler, run: dump.total - gc - compiler };
}

/** A dump's own instructions per function, largest first, JIT code named by `jitName` from its instructions' addresses. */
export function ownByFunction(dump: Dump, jitName: (address: number) => string | undefined): Map<string, number> {
  const named = new Map<string, number>();
  for (const [name, cost] of dump.self) if (!name.startsWith("0x")) add(named, name, cost);
  for (const [address, cost] of dump.jit) add(named, jitName(address) ?? "(JIT code not in the perf map)", cost);
  return new Map([...named].sort((a, b) => b[1] - a[1]));
}

/**
 * The JIT code ranges node wrote with `--perf-basic-prof-only-functions` (/tmp/perf-<pid>.map:
 * "start size name" in hex), as a lookup by address (a later entry for the same address wins:
 * code moved or replaced).
 */
export function perfMapLookup(text: string): (address: number) => string | undefined {
  const ranges: { start: number; end: number; name: string }[] = [];
  for (const line of text.split("\n")) {
    const match = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/i.exec(line);
    if (match === null) continue;
    const start = Number.parseInt(match[1] as string, 16);
    ranges.push({ start, end: start + Number.parseInt(match[2] as string, 16), name: match[3] as string });
  }
  return (address) => {
    for (let index = ranges.length - 1; index >= 0; index -= 1) {
      const range = ranges[index] as (typeof ranges)[number];
      if (address >= range.start && address < range.end) return range.name;
    }
    return undefined;
  };
}
