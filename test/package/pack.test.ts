// The package as users get it: `npm pack` once, install the tarball into a temporary project
// with `npm ci --offline` (a lock file written from ours, so every dependency comes from the
// npm cache that `npm ci` filled: no network), then type-check and run every consumer file in
// test/package/consumers/ (top-level *.ts; subfolders hold what they import, such as tool
// modules) against the installed package. A file missing from `files`, a wrong `exports`
// path, a dependency missing from `dependencies` or a source map pointing at an unshipped
// source fails here, not for users.
//
// The tarball is packed from the dist/ that `npm test` has just built (`--ignore-scripts`:
// the `prepack` script would clean dist/ under the test files still to run).
//
// A second project installs the tarball alone: it brings piscina and comlink and nothing of the
// queue (bullmq and ioredis are optional peers of toolgate/queue, which says how to add them);
// the consumer project adds them, and its queue consumer runs. The consumers are type-checked
// by TypeScript 5.9 and by TypeScript 7, the native compiler (test/package/typescript-7/).
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { findRedis } from "../support/redis.js";
import { writeConsumerTsconfig } from "./peers/consumer-tsconfig.js";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CONSUMERS = join(ROOT, "test/package/consumers");
const TSC = join(ROOT, "node_modules/typescript/bin/tsc");
/** TypeScript 7, installed through its own package folder so that its `tsc` never shadows 5.9's. */
const TSC7_PACKAGE = join(ROOT, "test/package/typescript-7/node_modules/typescript");
/** toolgate/queue's optional peers: installed for the consumers, never by the tarball alone. */
const QUEUE_PEERS = ["bullmq", "ioredis"];
/** Where shipped files may live: what users run, and the sources its maps point at. */
const SHIPPED_DIRS = ["dist/src/", "dist/workers/", "src/", "workers/"];
const SHIPPED_FILES = ["package.json", "README.md", "LICENSE", "CHANGELOG.md"];
const SLOW = 600_000; // npm and tsc in child processes (Mastra's and LangChain's types are large), on a contended 2-core machine

/** The consumer programs: top-level .ts files, each run on its own. */
const consumers = readdirSync(CONSUMERS)
  .filter((name) => name.endsWith(".ts") && statSync(join(CONSUMERS, name)).isFile())
  .sort();

interface LockEntry {
  /** The real package's name, when it is installed under an alias. */
  name?: string;
  version?: string;
  dev?: boolean;
  devOptional?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  [field: string]: unknown;
}
interface PackedManifest {
  version: string;
  license: string;
  exports: unknown;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, unknown>;
  engines?: Record<string, string>;
}

/** Consumers of a framework that needs a newer Node: [major, minor] at least. Run only there (the 22/24 CI legs). */
const NEEDS_NODE: Readonly<Record<string, readonly [number, number]>> = { "mastra.ts": [22, 13] };
const [nodeMajor = 0, nodeMinor = 0] = process.versions.node.split(".").map(Number);
function runsOnThisNode(name: string): boolean {
  const [major, minor] = NEEDS_NODE[name] ?? [0, 0];
  return nodeMajor > major || (nodeMajor === major && nodeMinor >= minor);
}

/** Our lock file: the versions and integrity hashes `npm ci` put in the npm cache. */
const ours = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> };

let work: string;
let project: string;
let installed: string;
let packedFiles: string[];
let manifest: PackedManifest;
let typecheck: { ok: true } | { ok: false; output: string };
let typecheck7: { ok: true } | { ok: false; output: string };
/** The project with the tarball alone: its node_modules, and what using toolgate/queue there says. */
let alone: string;
let aloneQueue: { executor: unknown; host: unknown };
let redisUrl: string | undefined;

/** Bare package names the consumers import (besides toolgate itself and node: built-ins). */
function consumerImports(): string[] {
  const names = new Set<string>();
  const visit = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) visit(path);
      else if (name.endsWith(".ts")) {
        for (const match of readFileSync(path, "utf8").matchAll(/\bfrom\s+"([^"]+)"|\bimport\(\s*"([^"]+)"\s*\)/g)) {
          const specifier = (match[1] ?? match[2]) as string;
          if (specifier.startsWith(".") || specifier.startsWith("node:")) continue;
          const parts = specifier.split("/");
          const pkg = specifier.startsWith("@") ? `${parts[0]}/${parts[1]}` : (parts[0] as string);
          if (pkg !== "toolgate") names.add(pkg);
        }
      }
    }
  };
  visit(CONSUMERS);
  return [...names].sort();
}

/**
 * The temporary project's lock file: toolgate from the tarball, and every other package
 * (toolgate's dependencies, what the consumers import, @types/node) copied from our lock
 * with its transitive dependencies, found the way Node resolves them.
 */
function lockFor(tarball: string, rootDependencies: Record<string, string>, extra: readonly string[]): object {
  const packages: Record<string, unknown> = { "": { name: "toolgate-consumer", version: "1.0.0", dependencies: rootDependencies } };
  packages["node_modules/toolgate"] = {
    version: manifest.version,
    resolved: `file:${tarball}`,
    integrity: `sha512-${createHash("sha512")
      .update(readFileSync(join(project, tarball)))
      .digest("base64")}`,
    license: manifest.license,
    dependencies: manifest.dependencies,
    peerDependencies: manifest.peerDependencies,
    peerDependenciesMeta: manifest.peerDependenciesMeta,
    engines: manifest.engines,
  };
  const add = (from: string, name: string): void => {
    for (let base = from; ; ) {
      const path = `${base === "" ? "" : `${base}/`}node_modules/${name}`;
      const entry = ours.packages[path];
      if (entry !== undefined) {
        if (path in packages) return;
        const { dev: _dev, devOptional: _devOptional, ...copy } = entry; // a dependency of the consumer, not a dev one
        packages[path] = copy;
        for (const dependency of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) add(path, dependency);
        return;
      }
      if (base === "") throw new Error(`${name} (needed by ${from || "the consumer project"}) is not in package-lock.json`);
      const at = base.lastIndexOf("/node_modules/");
      base = at < 0 ? "" : base.slice(0, at);
    }
  };
  for (const name of [...Object.keys(manifest.dependencies ?? {}), ...extra]) add("", name);
  return { name: "toolgate-consumer", version: "1.0.0", lockfileVersion: 3, requires: true, packages };
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "toolgate-pack-"));
  project = join(work, "project");
  mkdirSync(project);
  const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", project], { cwd: ROOT });
  const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  if (packed === undefined) throw new Error(`npm pack printed no tarball: ${stdout}`);
  packedFiles = packed.files.map((file) => file.path).sort();
  const { stdout: manifestText } = await run("tar", ["-xzOf", join(project, packed.filename), "package/package.json"]);
  manifest = JSON.parse(manifestText) as PackedManifest;

  // The tarball alone, as `npm install toolgate` gives it: then toolgate/queue used without its peers.
  alone = join(work, "alone");
  mkdirSync(alone);
  cpSync(join(project, packed.filename), join(alone, packed.filename));
  const aloneDependencies = { toolgate: `file:${packed.filename}` };
  writeFileSync(
    join(alone, "package.json"),
    JSON.stringify({ name: "toolgate-consumer", version: "1.0.0", private: true, type: "module", dependencies: aloneDependencies }),
  );
  writeFileSync(join(alone, "package-lock.json"), JSON.stringify(lockFor(packed.filename, aloneDependencies, [])));
  await run("npm", ["ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: alone });
  const { stdout: queueOutcome } = await run(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `import { QueueToolExecutor, runToolWorkerHost } from "toolgate/queue";
       const outcome = (promise) => promise.then(() => "created", (error) => ({ name: error.name, code: error.code, message: error.message }));
       const options = { connection: "redis://127.0.0.1:1", queue: "q", modules: ["./tools.js"] };
       console.log(JSON.stringify({ executor: await outcome(QueueToolExecutor.create(options)), host: await outcome(runToolWorkerHost(options)) }));`,
    ],
    { cwd: alone },
  );
  aloneQueue = JSON.parse(queueOutcome) as typeof aloneQueue;

  // The consumer project: toolgate from the tarball, @types/node, whatever the consumers import,
  // and the queue's peers (the queue consumer imports only toolgate/queue).
  const extra = ["@types/node", ...new Set([...consumerImports(), ...QUEUE_PEERS])].sort();
  const rootDependencies: Record<string, string> = { toolgate: `file:${packed.filename}` };
  for (const name of extra) {
    const entry = ours.packages[`node_modules/${name}`];
    if (entry?.version === undefined) throw new Error(`a consumer imports ${name}, which is not in package-lock.json`);
    // An npm alias (pi-ai-1 for Pi 1.x's @earendil-works/pi-ai) stays an alias: `npm ci` goes
    // by the lock entry, which names the real package, and package.json says the same.
    rootDependencies[name] = entry.name !== undefined && entry.name !== name ? `npm:${entry.name}@${entry.version}` : entry.version;
  }
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "toolgate-consumer", version: "1.0.0", private: true, type: "module", dependencies: rootDependencies }),
  );
  writeFileSync(join(project, "package-lock.json"), JSON.stringify(lockFor(packed.filename, rootDependencies, extra)));
  await run("npm", ["ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: project });
  installed = join(project, "node_modules/toolgate");

  // Compile the consumers as a user's strict project would.
  cpSync(CONSUMERS, join(project, "consumers"), { recursive: true });
  writeConsumerTsconfig(project);
  const compiled = (pending: Promise<unknown>) =>
    pending.then(
      () => ({ ok: true as const }),
      (error: { stdout?: string; stderr?: string }) => ({ ok: false as const, output: `${error.stdout ?? ""}${error.stderr ?? ""}` }),
    );
  typecheck = await compiled(run(process.execPath, [TSC, "-p", project], { cwd: project }));
  typecheck7 = await compiled(run(process.execPath, [join(TSC7_PACKAGE, "bin/tsc"), "-p", project, "--noEmit"], { cwd: project }));
  const redis = await findRedis();
  redisUrl = "url" in redis ? redis.url : undefined;
}, SLOW);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
}, SLOW);

/** Every string target in an `exports` map, with the key path that leads to it. */
function exportTargets(value: unknown, at = "exports"): [string, string][] {
  if (typeof value === "string") return [[at, value]];
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, inner]) => exportTargets(inner, `${at}[${JSON.stringify(key)}]`));
}

describe("README.md — The public API: the packed tarball", () => {
  test("ships what users run and the sources its maps point at, nothing else", () => {
    const stray = packedFiles.filter((path) => !SHIPPED_FILES.includes(path) && !SHIPPED_DIRS.some((dir) => path.startsWith(dir)));
    expect(stray).toEqual([]);
    for (const file of [
      "package.json",
      "README.md",
      "LICENSE",
      "dist/src/index.js",
      "dist/src/index.d.ts",
      "dist/workers/tool-worker.js",
    ]) {
      expect(packedFiles).toContain(file);
    }
    expect(manifest.license).toBe("MIT");
    expect(readFileSync(join(installed, "LICENSE"), "utf8")).toMatch(/^MIT License/);
  });

  test("every `exports` target exists in the installed package", () => {
    const targets = exportTargets(manifest.exports);
    expect(targets.length).toBeGreaterThan(0);
    const missing = targets.filter(([, target]) => !existsSync(join(installed, target))).map(([at, target]) => `${at}: ${target}`);
    expect(missing).toEqual([]);
  });

  test("every compiled module has its source map and declaration map, and every map's sources are shipped", () => {
    const compiled = packedFiles.filter((path) => path.endsWith(".js") || path.endsWith(".d.ts"));
    expect(compiled.length).toBeGreaterThan(0);
    expect(compiled.filter((path) => !packedFiles.includes(`${path}.map`))).toEqual([]);
    const unresolved: string[] = [];
    for (const map of packedFiles.filter((path) => path.endsWith(".map"))) {
      const { sources, sourceRoot } = JSON.parse(readFileSync(join(installed, map), "utf8")) as { sources: string[]; sourceRoot?: string };
      for (const source of sources) {
        const path = resolve(dirname(join(installed, map)), sourceRoot ?? "", source);
        if (!relative(installed, path).startsWith("..") && existsSync(path)) continue;
        unresolved.push(`${map} -> ${source}`);
      }
    }
    expect(unresolved).toEqual([]);
  });
});

describe("README.md — The public API: consumers of the installed package (test/package/consumers)", () => {
  test("there are consumers, among them the README's first example and the worker tour", () => {
    expect(consumers).toEqual(expect.arrayContaining(["core.ts", "worker.ts"]));
  });

  test("the Pi consumers run against both supported Pi majors, installed side by side", () => {
    expect(consumers).toEqual(expect.arrayContaining(["pi.ts", "pi1.ts"]));
    const version = (name: string): unknown =>
      (JSON.parse(readFileSync(join(project, "node_modules", name, "package.json"), "utf8")) as { version?: unknown }).version;
    expect([version("@earendil-works/pi-agent-core"), version("@earendil-works/pi-ai")]).toEqual(["0.85.0", "0.85.0"]);
    expect([version("pi-agent-core-1"), version("pi-ai-1")]).toEqual(["1.6.0", "1.6.0"]);
  });

  test("type-check against the installed package under strict settings", () => {
    expect(typecheck.ok ? "" : typecheck.output).toBe("");
  });

  test("type-check with TypeScript 7 (the native compiler) too", () => {
    const version = (JSON.parse(readFileSync(join(TSC7_PACKAGE, "package.json"), "utf8")) as { version: string }).version;
    expect(version).toBe("7.0.2");
    expect(typecheck7.ok ? "" : typecheck7.output).toBe("");
  });

  test.for(consumers)("%s runs to completion and exits by itself", { timeout: 90_000 }, async (name, { skip }) => {
    expect(typecheck.ok).toBe(true);
    if (!runsOnThisNode(name)) skip(`not run on Node ${process.versions.node}: its framework needs Node >= ${NEEDS_NODE[name]?.join(".")}`);
    if (name === "queue.ts" && redisUrl === undefined) return; // findRedis() said why (and fails under TOOLGATE_REQUIRE_REDIS=1)
    const script = join(project, "out", name.replace(/\.ts$/, ".js"));
    const env = { ...process.env, ...(redisUrl === undefined ? {} : { REDIS_URL: redisUrl }) };
    const outcome = await run(process.execPath, [script], { cwd: project, timeout: 60_000, env }).then(
      () => "exit 0",
      (error: { code?: unknown; signal?: unknown; stderr?: string }) =>
        `failed (${String(error.code ?? error.signal)}): ${error.stderr ?? ""}`,
    );
    expect(outcome).toBe("exit 0");
  });
});

describe("README.md — Install: only what a user needs (toolgate/queue's peers are optional)", () => {
  /** The packages installed in a project's node_modules, scoped ones as @scope/name. */
  const installedPackages = (root: string): string[] =>
    readdirSync(join(root, "node_modules"))
      .filter((name) => !name.startsWith("."))
      .flatMap((name) => (name.startsWith("@") ? readdirSync(join(root, "node_modules", name)).map((inner) => `${name}/${inner}`) : [name]))
      .sort();

  test("the tarball depends on piscina and comlink alone; bullmq and ioredis are optional peers with the ranges we test", () => {
    expect(Object.keys(manifest.dependencies ?? {}).sort()).toEqual(["comlink", "piscina"]);
    for (const peer of QUEUE_PEERS) {
      expect(manifest.peerDependenciesMeta?.[peer]).toEqual({ optional: true });
      // The range's lower end is the version our lock file tests (the peer matrix proves both ends).
      const tested = ours.packages[`node_modules/${peer}`]?.version as string;
      expect(manifest.peerDependencies?.[peer]).toMatch(new RegExp(`^(~|>=)${tested.replaceAll(".", "\\.")}( |$)`));
    }
  });

  test("installing the tarball alone brings piscina and comlink (and what they need), no bullmq or ioredis", () => {
    const closure = new Set<string>();
    const visit = (name: string): void => {
      if (closure.has(name)) return;
      closure.add(name);
      const entry = ours.packages[`node_modules/${name}`];
      for (const dependency of Object.keys({ ...entry?.dependencies, ...entry?.optionalDependencies })) visit(dependency);
    };
    visit("piscina");
    visit("comlink");
    const packages = installedPackages(alone);
    expect(packages).toEqual(expect.arrayContaining(["comlink", "piscina", "toolgate"]));
    expect(packages.filter((name) => name !== "toolgate" && !closure.has(name))).toEqual([]);
    expect(packages).not.toContain("bullmq");
    expect(packages).not.toContain("ioredis");
  });

  test("without them, toolgate/queue imports, and creating an executor or a host names what is missing and the install command", () => {
    const install = `npm install "bullmq@${manifest.peerDependencies?.bullmq}" "ioredis@${manifest.peerDependencies?.ioredis}"`;
    const expected = {
      name: "ToolContractError",
      code: "MISSING_PEER_DEPENDENCY",
      message: `toolgate/queue needs its optional peer dependencies bullmq and ioredis: bullmq and ioredis are not installed. Add them beside toolgate: ${install}`,
    };
    expect(aloneQueue).toEqual({ executor: expected, host: expected });
  });
});
