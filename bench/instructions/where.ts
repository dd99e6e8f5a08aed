// Where one side's instructions go, per call, by function: reads the dumps that
// `BENCH_INSTRUCTIONS_KEEP=dir npm run bench:instructions` kept, and prints the largest
// per-call own (exclusive) costs, the long window's less the short one's over the calls
// between them. JIT code is named from the perf map node wrote beside each dump.
//   node dist/bench/instructions/where.js <dir> <row> <ours|peer> [top=40]
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ownByFunction, parseDump, perfMapLookup } from "./callgrind.js";
import { LONG_DUMP, SHORT_DUMP } from "./count.js";
import { isRowName, ROWS } from "./rows.js";

const [dir = "", row = "", side = "", topText = "40"] = process.argv.slice(2);
if (!existsSync(dir) || !isRowName(row) || (side !== "ours" && side !== "peer") || !/^\d+$/.test(topText)) {
  process.stderr.write(`usage: where.js <dir kept by BENCH_INSTRUCTIONS_KEEP> <${Object.keys(ROWS).join("|")}> <ours|peer> [top]\n`);
  process.exit(2);
}

/** The first kept process of this row and side: its dump files' common name. */
const base = readdirSync(dir)
  .filter((file) => file.startsWith(`${row}.${side}.`) && file.endsWith(".perf.map"))
  .map((file) => join(dir, file.slice(0, -".perf.map".length)))
  .sort()[0];
if (base === undefined) throw new Error(`where: no kept dumps of ${row} ${side} in ${dir}`);
const lookup = perfMapLookup(readFileSync(`${base}.perf.map`, "utf8"));

/** The own instructions per function of a window (count.ts SHORT_DUMP or LONG_DUMP). */
const window = (part: number, calls: number): { calls: number; own: Map<string, number> } => ({
  calls,
  own: ownByFunction(parseDump(readFileSync(`${base}.${part}`, "utf8")), lookup),
});

const plan = ROWS[row];
const short = window(SHORT_DUMP, plan.short);
const long = window(LONG_DUMP, plan.long);
const perCall = new Map<string, number>();
for (const name of new Set([...short.own.keys(), ...long.own.keys()])) {
  perCall.set(name, ((long.own.get(name) ?? 0) - (short.own.get(name) ?? 0)) / (long.calls - short.calls));
}
const sorted = [...perCall].sort((a, b) => b[1] - a[1]);
const total = sorted.reduce((sum, [, cost]) => sum + cost, 0);
process.stdout.write(`${row} ${side}: ${Math.round(total)} instructions per call (own costs, every function)\n`);
for (const [name, cost] of sorted.slice(0, Number(topText))) {
  process.stdout.write(
    `${String(Math.round(cost)).padStart(8)}  ${((100 * cost) / total).toFixed(1).padStart(5)}%  ${name.slice(0, 150)}\n`,
  );
}
