// `npm run check:peers`: each optional peer's range beside what the npm registry has today:
// the lowest version the range claims, the newest published (`latest`), and every release past
// the range. Exits 1 when a newest version is outside its range (a framework shipped a version
// the tests have not proved: run the matrix, test/package/peer-matrix.test.ts, against it and
// move the range only when it passes), 2 when the registry cannot be reached.
// README.md — Install; docs/adapters.md — Versions.
import semver from "semver";
import { declaredPeers, lowestIn, pastRange, RegistryUnreachable, readPackuments } from "./registry.js";

const peers = Object.entries(declaredPeers()).sort(([left], [right]) => left.localeCompare(right));
let packuments: Awaited<ReturnType<typeof readPackuments>>;
try {
  packuments = await readPackuments(peers.map(([name]) => name));
} catch (error) {
  if (!(error instanceof RegistryUnreachable)) throw error;
  console.error(`check:peers: ${error.message}`);
  process.exit(2);
}

const rows = [["peer", "range", "lowest claimed", "newest", "verdict"]];
let behind = 0;
for (const [name, range] of peers) {
  const packument = packuments.get(name);
  if (packument === undefined) throw new Error(`no registry document for ${name}`);
  const past = pastRange(packument, range);
  const newestInRange = semver.satisfies(packument.latest, range);
  if (!newestInRange) behind += 1;
  const verdict = newestInRange
    ? "ok"
    : `PAST THE RANGE: ${past.length} release${past.length === 1 ? "" : "s"} (${past.slice(0, 3).join(", ")}${past.length > 3 ? ", …" : ""})`;
  rows.push([name, range, lowestIn(packument, range), packument.latest, verdict]);
}
const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] as string).length))) ?? [];
for (const row of rows)
  console.log(
    row
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join("  ")
      .trimEnd(),
  );
if (behind > 0) {
  console.log(
    `\n${behind} peer${behind === 1 ? "" : "s"} past the range: the newest release is untested. Prove it first (the adapters' ` +
      "frameworks: npx vitest run test/package/peer-matrix.test.ts; bullmq and ioredis: the queue suites), then widen the range " +
      "in package.json and where the code holds it (src/adapters/peer-version.ts; src/queue/peers.ts).",
  );
  process.exit(1);
}
