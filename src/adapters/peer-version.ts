// The frameworks' versions, checked once per process at each adapter's first use. npm refuses
// to install toolgate beside a framework outside its peer range, but not every install goes
// through npm's check (--legacy-peer-deps, --force, overrides, other package managers): there
// the adapter would meet a framework it was never tested with and fail somewhere deep inside
// it. Instead, its first call throws ToolContractError(MISSING_PEER_DEPENDENCY) naming the
// version found, where, and the range the tests prove.
// docs/adapters.md — Versions.
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ContractErrorCode } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { JSONParse, MapPrototypeGet, MapPrototypeSet, ObjectFreeze, RegExpPrototypeExec } from "../contract/primordials.js";
import { readOwnDataProperty } from "../contract/untrusted.js";

/**
 * The adapters' peer ranges, as package.json's peerDependencies declare them
 * (test/package/peer-version.test.ts holds them equal): each as wide as the packed-tarball
 * matrix (test/package/peer-matrix.test.ts) proves at both ends, and no wider.
 */
export const ADAPTER_PEER_RANGES = ObjectFreeze({
  ai: "^7.0.32",
  "@openai/agents": ">=0.16.0 <0.21.0",
  "@modelcontextprotocol/sdk": "^1.26.0",
  "@langchain/core": "^1.2.13",
  "@langchain/langgraph": "^1.0.0",
  "@mastra/core": "^1.57.0",
  "@earendil-works/pi-agent-core": ">=0.84.0 <2.0.0",
  "@earendil-works/pi-ai": ">=0.84.0 <2.0.0",
} as const);

export type AdapterPeer = keyof typeof ADAPTER_PEER_RANGES;

/** A framework's package as Node would find it from this module: where, and the version it declares. */
export interface InstalledPeer {
  readonly manifest: string;
  readonly version: string | undefined;
}

/** Each peer's outcome, read once per process: the packages do not change under a running process. */
const checked = new Map<AdapterPeer, string | null>();

/**
 * Throws ToolContractError(MISSING_PEER_DEPENDENCY) when a framework the adapter (`api`, the
 * function called) needs is installed at a version outside its range. A framework that cannot
 * be found in a node_modules folder (a bundle, Yarn Plug'n'Play, Pi under another name) is not
 * judged: whatever the adapter imported is what runs.
 */
export function checkPeerVersions(api: string, peers: readonly AdapterPeer[]): void {
  for (let index = 0; index < peers.length; index += 1) {
    const peer = peers[index] as AdapterPeer;
    let problem = MapPrototypeGet(checked, peer);
    if (problem === undefined) {
      problem = versionProblem(peer, findInstalledPeer(peer, dirname(fileURLToPath(import.meta.url))));
      MapPrototypeSet(checked, peer, problem);
    }
    if (problem !== null) throw new ToolContractError(ContractErrorCode.MISSING_PEER_DEPENDENCY, `${api}: ${problem}`);
  }
}

/** Why the installed package is not a supported one, or null when it is (or was not found). */
export function versionProblem(peer: AdapterPeer, installed: InstalledPeer | undefined): string | null {
  if (installed === undefined) return null;
  const range = ADAPTER_PEER_RANGES[peer];
  const install = `Install a version in that range beside toolgate: npm install "${peer}@${range}"`;
  if (installed.version === undefined) {
    return `toolgate supports ${peer} ${range}, but the version of the ${peer} installed at ${installed.manifest} cannot be read. ${install}`;
  }
  if (satisfies(installed.version, range)) return null;
  return `toolgate supports ${peer} ${range}, but ${peer} ${installed.version} is installed (${installed.manifest}). ${install}`;
}

/**
 * The package.json of `name` that Node's resolution finds from `from`: the first
 * node_modules/<name> in `from` or a folder above it (a folder that is itself named
 * node_modules gets no node_modules of its own, as in Node's lookup).
 */
export function findInstalledPeer(name: string, from: string): InstalledPeer | undefined {
  for (let folder = from; ; ) {
    if (basename(folder) !== "node_modules") {
      const manifest = join(folder, "node_modules", name, "package.json");
      if (existsSync(manifest)) return ObjectFreeze({ manifest, version: readVersion(manifest) });
    }
    const parent = dirname(folder);
    if (parent === folder) return undefined;
    folder = parent;
  }
}

function readVersion(manifest: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSONParse(readFileSync(manifest, "utf8"));
  } catch {
    return undefined; // unreadable or not JSON: reported as a version that cannot be read
  }
  const version = typeof parsed === "object" && parsed !== null ? readOwnDataProperty(parsed, "version") : undefined;
  return typeof version === "string" && RegExpPrototypeExec(VERSION, version) !== null ? version : undefined;
}

/** A semantic version: major.minor.patch, an optional prerelease after `-`, optional build metadata after `+`. */
const VERSION = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

type Triple = readonly [number, number, number];
/** `version >= from` (or `> from` when not inclusive), and below `below` when there is one. */
interface Comparator {
  readonly from: Triple;
  readonly inclusive: boolean;
  readonly below: Triple | undefined;
}

/**
 * npm's `satisfies` for the range forms ADAPTER_PEER_RANGES uses: `||` between sets of
 * space-separated comparators, each `^`, `~`, `>=`, `>`, `<` or nothing (exactly) before a full
 * major.minor.patch. As in npm, a prerelease (7.1.0-beta.1) is outside every such range: none of
 * its comparators names a prerelease.
 */
export function satisfies(version: string, range: string): boolean {
  const parsed = RegExpPrototypeExec(VERSION, version);
  if (parsed === null || parsed[4] !== undefined) return false;
  const triple: Triple = [+(parsed[1] as string), +(parsed[2] as string), +(parsed[3] as string)];
  const sets = parseRange(range);
  for (let set = 0; set < sets.length; set += 1) {
    const comparators = sets[set] as readonly Comparator[];
    let all = true;
    for (let index = 0; all && index < comparators.length; index += 1) {
      const { from, inclusive, below } = comparators[index] as Comparator;
      const order = compare(triple, from);
      all = (inclusive ? order >= 0 : order > 0) && (below === undefined || compare(triple, below) < 0);
    }
    if (all) return true;
  }
  return false;
}

/** A range as sets of comparators, read once (a range this cannot read is a programming error). */
function parseRange(range: string): readonly (readonly Comparator[])[] {
  const known = MapPrototypeGet(parsedRanges, range);
  if (known !== undefined) return known;
  const sets = range.split("||").map((set) =>
    set
      .trim()
      .split(/\s+/)
      .map((text) => parseComparator(text, range)),
  );
  MapPrototypeSet(parsedRanges, range, sets);
  return sets;
}
const parsedRanges = new Map<string, readonly (readonly Comparator[])[]>();
// Ours are read at load, as the primordials are captured, before any tool could patch String.prototype.
for (const range of Object.values(ADAPTER_PEER_RANGES)) parseRange(range);

function parseComparator(text: string, range: string): Comparator {
  const parsed = /^(\^|~|>=|>|<|=)?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/.exec(text);
  if (parsed === null) throw new Error(`toolgate: a peer range it cannot read: ${range}`);
  const bound: Triple = [+(parsed[2] as string), +(parsed[3] as string), +(parsed[4] as string)];
  const [major, minor, patch] = bound;
  switch (parsed[1]) {
    case "^": // the next major; for 0.x the next minor, for 0.0.x the next patch
      return { from: bound, inclusive: true, below: major > 0 ? [major + 1, 0, 0] : minor > 0 ? [0, minor + 1, 0] : [0, 0, patch + 1] };
    case "~":
      return { from: bound, inclusive: true, below: [major, minor + 1, 0] };
    case ">=":
      return { from: bound, inclusive: true, below: undefined };
    case ">":
      return { from: bound, inclusive: false, below: undefined };
    case "<":
      return { from: [0, 0, 0], inclusive: true, below: bound };
    default:
      return { from: bound, inclusive: true, below: [major, minor, patch + 1] };
  }
}

function compare(left: Triple, right: Triple): number {
  for (let index = 0; index < 3; index += 1) {
    const difference = (left[index] as number) - (right[index] as number);
    if (difference !== 0) return difference;
  }
  return 0;
}
