// One side of one row, run under callgrind by bench/instructions/count.ts:
//   node <V8 flags> subject.js <row> <ours|peer> <warm-up calls> <short> <long>
// It sets the side up, checks what one call returns, makes the warm-up calls, then runs two
// windows, `short` calls and `long` calls, each between two calls of the marker. Callgrind
// dumps its counts whenever the marker's native function is entered, so the second and fourth
// dumps hold these calls and nothing else (each loop awaits its calls to their end before the
// marker). Before each window, outside it, a full GC and then `SETTLE_CALLS` calls (the third
// dump holds the second of these): both windows start from the same state, an emptied heap
// and code optimized again, so where a major GC falls depends on the window's own calls, not
// on what the warm-up left behind. (The calls after the GC matter: a full GC made V8 optimize
// again, and without them Turbofan ran inside the long window, 40-74k instructions a call.)
// A row may go without them (rows.ts `collectBeforeWindows`): the third dump is then empty.
import { marker } from "./marker.js";
import { isRowName, ROWS, type RowPlan, type SideName } from "./rows.js";

const [rowName = "", side = "", ...countsText] = process.argv.slice(2);
if (
  !isRowName(rowName) ||
  (side !== "ours" && side !== "peer") ||
  countsText.length !== 3 ||
  !countsText.every((text) => /^\d+$/.test(text))
) {
  process.stderr.write(`usage: subject.js <${Object.keys(ROWS).join("|")}> <ours|peer> <warm-up calls> <short> <long>\n`);
  process.exit(2);
}
const [warmup, short, long] = countsText.map(Number) as [number, number, number];
const subject = await ROWS[rowName].setup[side as SideName]();

const first = subject.async ? await subject.call() : subject.call();
if (JSON.stringify(first) !== JSON.stringify(subject.returns)) {
  throw new Error(
    `instructions benchmark: ${rowName} ${side} returned ${JSON.stringify(first)}, expected ${JSON.stringify(subject.returns)}`,
  );
}

let sink: unknown;
async function run(count: number): Promise<void> {
  if (subject.async) {
    for (let call = 0; call < count; call += 1) sink = await subject.call();
  } else {
    for (let call = 0; call < count; call += 1) sink = subject.call();
  }
}

/** A full GC (node runs with --expose-gc, bench/instructions/count.ts V8_FLAGS). */
const collect = (globalThis as { gc?: () => void }).gc;
if (collect === undefined) throw new Error("instructions benchmark: run node with --expose-gc");

/** Calls after each full GC, before the window (V8 compiles again there, not in the window); never more than the warm-up (smoke mode's 20). */
const SETTLE_CALLS = Math.min(2000, warmup);
const plan: RowPlan = ROWS[rowName];
const settled = async (): Promise<void> => {
  if (plan.collectBeforeWindows === false) return; // the third dump is then empty
  collect();
  await run(SETTLE_CALLS);
};

await run(warmup);
await settled();
marker();
await run(short);
marker();
await settled();
marker();
await run(long);
marker();
if (JSON.stringify(sink) !== JSON.stringify(subject.returns))
  throw new Error(`instructions benchmark: ${rowName} ${side}: the last call differed`);
await subject.close?.();
