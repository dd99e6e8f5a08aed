// What the npm registry says about toolgate's optional peers, read at test time: which
// versions exist, the newest (`latest`), and each version's own peer ranges. Shared by the
// packed-tarball matrix (test/package/peer-matrix.test.ts) and `npm run check:peers`
// (check-peers.ts): "newest" is never written down, so a framework that ships past a range
// shows up the day it ships.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import semver from "semver";

const run = promisify(execFile);
export const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** What the registry's abbreviated document says of a package. */
export interface Packument {
  readonly name: string;
  readonly latest: string;
  /** Every published version (prereleases included), with its own dependency and peer ranges. */
  readonly versions: Readonly<
    Record<
      string,
      { readonly dependencies?: Readonly<Record<string, string>>; readonly peerDependencies?: Readonly<Record<string, string>> }
    >
  >;
}

/** The registry could not be reached at all (no network, DNS, a timeout): not a verdict on any version. */
export class RegistryUnreachable extends Error {
  override readonly name = "RegistryUnreachable";
}

/** toolgate's optional peers as package.json declares them. */
export function declaredPeers(): Record<string, string> {
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { peerDependencies: Record<string, string> };
  return manifest.peerDependencies;
}

/** The queue's peers (bullmq, ioredis): src/queue/peers.ts holds their ranges, test/package/pack.test.ts installs them. */
export const QUEUE_PEERS: readonly string[] = ["bullmq", "ioredis"];

let registryUrl: Promise<string> | undefined;
/** The registry npm uses here (npm config: .npmrc, npm_config_registry). */
function registry(): Promise<string> {
  registryUrl ??= run("npm", ["config", "get", "registry"]).then(({ stdout }) => {
    const url = stdout.trim();
    return url.endsWith("/") ? url : `${url}/`;
  });
  return registryUrl;
}

/** The registry's documents of `names`, fetched side by side; RegistryUnreachable when the registry does not answer. */
export async function readPackuments(names: readonly string[], timeoutMs = 30_000): Promise<Map<string, Packument>> {
  const base = await registry();
  const documents = await Promise.all(
    names.map(async (name): Promise<Packument> => {
      const url = `${base}${name.replace("/", "%2f")}`;
      let response: Response;
      try {
        response = await fetch(url, { headers: { accept: "application/vnd.npm.install-v1+json" }, signal: AbortSignal.timeout(timeoutMs) });
      } catch (error) {
        throw new RegistryUnreachable(`the npm registry (${base}) did not answer for ${name}: ${String((error as Error).cause ?? error)}`);
      }
      if (!response.ok) throw new Error(`the npm registry answered ${response.status} for ${url}`);
      const body = (await response.json()) as { "dist-tags"?: { latest?: string }; versions?: Packument["versions"] };
      const latest = body["dist-tags"]?.latest;
      if (typeof latest !== "string" || body.versions === undefined)
        throw new Error(`the npm registry's document of ${name} has no latest version`);
      return { name, latest, versions: body.versions };
    }),
  );
  return new Map(documents.map((document) => [document.name, document]));
}

/** Released versions (no prereleases), oldest first. */
export function releases(packument: Packument): string[] {
  return semver.sort(
    Object.keys(packument.versions).filter((version) => semver.valid(version) !== null && semver.prerelease(version) === null),
  );
}

/** The lowest published version `range` claims: the one the matrix installs as the range's lower end. */
export function lowestIn(packument: Packument, range: string): string {
  const lowest = semver.minSatisfying(releases(packument), range);
  if (lowest === null) throw new Error(`no published version of ${packument.name} is in ${range}`);
  return lowest;
}

/** The newest version of `packument` whose own peer range for `peer` accepts `version` (a companion for a cell). */
export function newestAccepting(packument: Packument, peer: string, version: string): string {
  const accepting = releases(packument).filter((candidate) => {
    const range = packument.versions[candidate]?.peerDependencies?.[peer];
    return range !== undefined && semver.satisfies(version, range);
  });
  const newest = accepting.at(-1);
  if (newest === undefined) throw new Error(`no version of ${packument.name} accepts ${peer} ${version}`);
  return newest;
}

/** Released versions newer than everything `range` accepts: what a range falls behind on. */
export function pastRange(packument: Packument, range: string): string[] {
  const all = releases(packument);
  const highest = semver.maxSatisfying(all, range);
  return highest === null ? all : all.filter((version) => semver.gt(version, highest));
}
