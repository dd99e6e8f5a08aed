// `npm run bench`: runs every case, prints the tables, writes bench/results.json.
// BENCH_SMOKE=1 runs each case once with tiny counts (and writes nothing unless BENCH_OUT is set).
// BENCH_OUT=path writes the JSON there instead.
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { runBenchmarks } from "./index.js";
import { RESULTS_FILE } from "./paths.js";
import { renderReport } from "./report.js";

const smoke = process.env.BENCH_SMOKE === "1";
const log = (line: string): void => {
  process.stderr.write(`  … ${line}\n`);
};

const results = await runBenchmarks({ smoke, log });
process.stdout.write(`${renderReport(results)}\n`);
const out = process.env.BENCH_OUT ?? (smoke ? undefined : fileURLToPath(RESULTS_FILE));
if (out !== undefined) {
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`\nwrote ${out}\n`);
}
