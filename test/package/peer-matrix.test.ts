// Both ends of every optional peer range, as users meet them: a project that already has its
// frameworks installs the packed tarball with plain `npm install` (no --legacy-peer-deps, no
// --force), its package.json and installed versions stay exactly as they were, and the README
// example of each framework type-checks and runs against what was installed.
//
// Four projects, each a user's app (grouped: npm judges each of toolgate's peers on its own, and
// one project per end installs in a fraction of the time of one per peer):
//   lowest            every framework peer at the lowest published version its range claims,
//                     pinned exactly, as a project that pinned an older version has it (the
//                     ERESOLVE of issue 46). Exact pins also keep npm from moving a version for
//                     reasons of the frameworks' own (today @langchain/langgraph-sdk wants a newer
//                     @langchain/core than the floor, and under a caret any install would move it);
//   langgraph-lowest  @langchain/langgraph's floor, with the newest @langchain/core it accepts and no
//                     langchain: every langchain depends on a newer LangGraph than the floor;
//   newest            every framework peer at the registry's `latest`, saved with npm's default
//                     caret as a new project has them (the silent downgrade of issue 46). Read at
//                     test time: a framework that ships past a range fails here the day it ships
//                     (`npm run check:peers` says the same without installing);
//   queue-lowest,     toolgate/queue's bullmq and ioredis at the lowest version of each range
//   queue-newest      (pinned exactly) and at the registry's `latest` (caret); the README's queue
//                     example (consumers/queue.ts) runs a host and an agent through the test's Redis;
//   otel-sdk          the current OpenTelemetry SDK (@opentelemetry/sdk-trace-base's `latest`) with
//                     the newest @opentelemetry/api it accepts, and the README example under the
//                     SDK's own tracer provider (peers/otel-sdk.mjs).
// What is not a peer of ours is chosen to fit: `langchain` (the README's LangChain example imports
// it) is the newest whose @langchain/core range accepts the project's; pi-ai is the one the
// project's pi-agent-core depends on when that is not the end's own; zod and @types/node are our
// lock file's.
//
// Installing and type-checking is Node-independent, running is not: with
// TOOLGATE_PEER_MATRIX_DIR set (.ci/run sets it to one folder per CI run) a project installed
// earlier in that folder, for the same tarball bytes, versions and sources, is reused (its
// package.json and node_modules are read again as they are on disk), and every leg runs the
// examples under its own Node. Without it, a temporary folder, removed afterwards.
//
// The registry must answer: in CI (CI=true) a registry that cannot be reached fails the matrix;
// elsewhere the tests say why and are skipped.
// README.md — Install; docs/adapters.md — Versions.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import semver from "semver";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { findRedis } from "../support/redis.js";
import { writeConsumerTsconfig } from "./peers/consumer-tsconfig.js";
import {
  declaredPeers,
  lowestIn,
  newestAccepting,
  type Packument,
  QUEUE_PEERS,
  RegistryUnreachable,
  ROOT,
  readPackuments,
  releases,
} from "./peers/registry.js";

const run = promisify(execFile);
const SLOW = 1_200_000; // npm installs of every framework and tsc over their types, on a contended 2-core machine
const CONSUMERS = join(ROOT, "test/package/consumers");
const TSC = join(ROOT, "node_modules/typescript/bin/tsc");
const IN_CI = process.env.CI !== undefined && process.env.CI !== "" && process.env.CI !== "false";

/** Every optional peer and its range: the frameworks' and the queue's (bullmq, ioredis), which have projects of their own. */
const ALL_PEERS = Object.entries(declaredPeers());
/** The framework peers: the frameworks' projects hold them all together. */
const PEERS = ALL_PEERS.filter(([name]) => !QUEUE_PEERS.includes(name));
const RANGES = Object.fromEntries(ALL_PEERS);

/** The README examples every framework project runs (Pi's depend on its transcript: PI_TOOLS_IN_SYSTEM_MESSAGES). */
const EXAMPLES = ["ai-sdk.ts", "openai-agents.ts", "mcp.ts", "langchain.ts", "langgraph.ts", "mastra.ts", "telemetry.ts"];
/**
 * From this Pi on (0.86, and every 1.x), the transcript declares tools in system messages and
 * has no systemPrompt: consumers/pi1.ts's loop (under the real package names) runs instead of
 * the README's and docs' 0.84/0.85 examples (pi-short.ts, pi.ts).
 */
const PI_TOOLS_IN_SYSTEM_MESSAGES = "0.86.0";
/** Examples that need the test's Redis (REDIS_URL): findRedis() finds it, or says why not (a failure under TOOLGATE_REQUIRE_REDIS=1). */
const NEEDS_REDIS = new Set(["queue.ts"]);
/** Examples whose framework needs a newer Node: [major, minor] at least. Run only there (the 22/24 CI legs). */
const NEEDS_NODE: Readonly<Record<string, readonly [number, number]>> = { "mastra.ts": [22, 13] };

/** One user project: what it depends on, which peers' ends it proves, how its package.json saves them, what it runs. */
interface Plan {
  readonly name: string;
  /** Which end of their ranges the subjects are at. */
  readonly end: "lowest" | "newest";
  /** The peers this project proves at that end, and their versions. */
  readonly subjects: Readonly<Record<string, string>>;
  /** Everything the user's project depends on: the subjects, and what a real project has beside them. */
  readonly dependencies: Readonly<Record<string, string>>;
  readonly save: "caret" | "exact";
  /** Top-level consumer files (consumers/, compiled), then plain scripts (peers/, run as they are). */
  readonly examples: readonly string[];
  readonly scripts: readonly string[];
}

const ours = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, { version?: string }> };
const locked = (name: string): string => {
  const version = ours.packages[`node_modules/${name}`]?.version;
  if (version === undefined) throw new Error(`${name} is not in package-lock.json`);
  return version;
};

function plans(documents: ReadonlyMap<string, Packument>): Plan[] {
  const document = (name: string): Packument => {
    const found = documents.get(name);
    if (found === undefined) throw new Error(`no registry document for ${name}`);
    return found;
  };
  const newestIn = (name: string, range: string): string => {
    const newest = semver.maxSatisfying(releases(document(name)), range);
    if (newest === null) throw new Error(`no published version of ${name} is in ${range}`);
    return newest;
  };
  const wants = (name: string, version: string, dependency: string): string | undefined => {
    const manifest = document(name).versions[version];
    return manifest?.dependencies?.[dependency] ?? manifest?.peerDependencies?.[dependency];
  };
  const fixed = { zod: locked("zod"), "@types/node": locked("@types/node") };

  /** Every framework peer at one end of its range, with what a real project has beside them. */
  const frameworks = (end: "lowest" | "newest"): Plan => {
    const at = (peer: string): string => (end === "lowest" ? lowestIn(document(peer), RANGES[peer] as string) : document(peer).latest);
    const subjects: Record<string, string> = Object.fromEntries(PEERS.map(([peer]) => [peer, at(peer)]));
    // pi-ai ships in lockstep with pi-agent-core, which depends on it: this end's pi-ai unless
    // that pi-agent-core asks for another (1.6.0 pins pi-ai 1.6.0 while 1.6.1 is out).
    const piCore = subjects["@earendil-works/pi-agent-core"] as string;
    const piAi = wants("@earendil-works/pi-agent-core", piCore, "@earendil-works/pi-ai");
    if (piAi !== undefined && !semver.satisfies(subjects["@earendil-works/pi-ai"] as string, piAi)) {
      subjects["@earendil-works/pi-ai"] = newestIn("@earendil-works/pi-ai", piAi);
    }
    const core = subjects["@langchain/core"] as string;
    const companions: Record<string, string> = {
      langchain: newestAccepting(document("langchain"), "@langchain/core", core),
      ...fixed,
    };
    // No langchain both accepts @langchain/core's floor and uses @langchain/langgraph's floor (each
    // depends on a newer LangGraph, which wants a newer core): here the newest LangGraph that core
    // accepts; LangGraph's floor has a project of its own.
    if (end === "lowest") {
      const { "@langchain/langgraph": _floor, ...rest } = subjects;
      return plan("lowest", end, rest, {
        "@langchain/langgraph": newestAccepting(document("@langchain/langgraph"), "@langchain/core", core),
        ...companions,
      });
    }
    return plan("newest", end, subjects, companions);
  };
  const plan = (
    name: string,
    end: Plan["end"],
    subjects: Record<string, string>,
    companions: Record<string, string>,
    examples?: string[],
    scripts: string[] = [],
  ): Plan => ({
    name,
    end,
    subjects,
    dependencies: { ...subjects, ...companions },
    save: end === "lowest" ? "exact" : "caret",
    examples: examples ?? [
      ...EXAMPLES,
      ...(semver.gte(subjects["@earendil-works/pi-agent-core"] as string, PI_TOOLS_IN_SYSTEM_MESSAGES)
        ? ["pi1.ts"]
        : ["pi-short.ts", "pi.ts"]),
    ],
    scripts,
  });

  /** toolgate/queue's peers at one end of their ranges: a project that runs the queue. */
  const queue = (end: "lowest" | "newest"): Plan => {
    const subjects = Object.fromEntries(
      QUEUE_PEERS.map((peer) => [peer, end === "lowest" ? lowestIn(document(peer), RANGES[peer] as string) : document(peer).latest]),
    );
    return plan(`queue-${end}`, end, subjects, { "@types/node": fixed["@types/node"] }, ["queue.ts"]);
  };

  // LangGraph's floor with the newest @langchain/core it accepts: a LangGraph user's project (no langchain).
  const langgraph = lowestIn(document("@langchain/langgraph"), RANGES["@langchain/langgraph"] as string);
  const langgraphCore = `${wants("@langchain/langgraph", langgraph, "@langchain/core") ?? "*"} ${RANGES["@langchain/core"]}`;
  // The current OpenTelemetry SDK with the newest API it accepts.
  const sdk = document("@opentelemetry/sdk-trace-base").latest;
  const api = newestIn("@opentelemetry/api", wants("@opentelemetry/sdk-trace-base", sdk, "@opentelemetry/api") ?? "*");
  return [
    frameworks("lowest"),
    plan(
      "langgraph-lowest",
      "lowest",
      { "@langchain/langgraph": langgraph },
      { "@langchain/core": newestIn("@langchain/core", langgraphCore), ...fixed },
      ["langgraph.ts"],
    ),
    frameworks("newest"),
    queue("lowest"),
    queue("newest"),
    plan(
      "otel-sdk",
      "newest",
      { "@opentelemetry/api": api },
      { "@opentelemetry/sdk-trace-base": sdk, "@types/node": fixed["@types/node"] },
      ["telemetry.ts"],
      ["otel-sdk.mjs"],
    ),
  ];
}

/** The matrix, planned from what the registry says now (at collection, so each example is a test of its own). */
const planned: { plans: Plan[] } | { unreachable: string } = await readPackuments([
  ...ALL_PEERS.map(([name]) => name),
  "langchain",
  "@opentelemetry/sdk-trace-base",
]).then(
  (documents) => ({ plans: plans(documents) }),
  (error: unknown) => {
    if (error instanceof RegistryUnreachable) return { unreachable: error.message };
    throw error;
  },
);

/** What a project's package.json asks for and what its node_modules holds, per dependency. */
interface Snapshot {
  readonly manifest: Record<string, string>;
  readonly installed: Record<string, string | null>;
}
interface Step {
  readonly ok: boolean;
  readonly output: string;
  readonly seconds: number;
}
/** A project, installed and type-checked once (per CI run, with TOOLGATE_PEER_MATRIX_DIR). */
interface Prepared {
  readonly key: string;
  readonly dir: string;
  readonly userInstall: Step;
  readonly before: Snapshot;
  readonly install: Step;
  readonly after: Snapshot;
  readonly typecheck: Step;
  readonly seconds: number;
  /** Set when an earlier leg of this CI run made the project: its Node version. */
  readonly madeUnder?: string;
}

// The projects hold about 1 GB of node_modules: in memory (tmpfs) where there is one, where they are
// written and removed in seconds; on a busy disk removing them alone took minutes.
const scratch = existsSync("/dev/shm") && statSync("/dev/shm").isDirectory() ? "/dev/shm" : tmpdir();
const shared = process.env.TOOLGATE_PEER_MATRIX_DIR || undefined;
/** The folder of the projects: made in beforeAll (nothing is made when the registry cannot be reached). */
let base: string;
const prepared = new Map<string, Prepared>();
let tarball: { file: string; sha: string };

/** Runs a command; never throws: its outcome and what it printed. */
function step(command: string, args: readonly string[], cwd: string, timeout = SLOW, env?: NodeJS.ProcessEnv): Promise<Step> {
  const started = performance.now();
  const seconds = () => Math.round((performance.now() - started) / 1000);
  return run(command, args, { cwd, timeout, maxBuffer: 64 * 1024 * 1024, ...(env === undefined ? {} : { env }) }).then(
    ({ stdout, stderr }) => ({ ok: true, output: `${stdout}${stderr}`, seconds: seconds() }),
    (error: { stdout?: string; stderr?: string; message?: string }) => ({
      ok: false,
      output: `${error.stdout ?? ""}${error.stderr ?? ""}` || String(error.message),
      seconds: seconds(),
    }),
  );
}
const notRun = (why: string): Step => ({ ok: false, output: `not run: ${why}`, seconds: 0 });

const NPM_FLAGS = ["--ignore-scripts", "--no-audit", "--no-fund"];
/**
 * `npm install args` as a user runs it (none of --legacy-peer-deps, --force): from the npm cache
 * where it can be, and from the registry again when a cached document misses a new version.
 */
async function npmInstall(dir: string, args: readonly string[]): Promise<Step> {
  const cached = await step("npm", ["install", "--prefer-offline", ...NPM_FLAGS, ...args], dir);
  return cached.ok || !/ETARGET|notarget/.test(cached.output) ? cached : step("npm", ["install", ...NPM_FLAGS, ...args], dir);
}

function snapshot(dir: string, names: readonly string[]): Snapshot {
  const manifest =
    (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { dependencies?: Record<string, string> }).dependencies ?? {};
  const installed: Record<string, string | null> = {};
  for (const name of names) {
    const path = join(dir, "node_modules", name, "package.json");
    installed[name] = existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as { version: string }).version : null;
  }
  return { manifest, installed };
}

/** An example as a project compiles it: consumers/pi1.ts imports Pi 1.x under our aliases, a user's project by its real names. */
function exampleSource(example: string): string {
  const source = readFileSync(join(CONSUMERS, example), "utf8");
  return example === "pi1.ts"
    ? source.replaceAll('"pi-agent-core-1"', '"@earendil-works/pi-agent-core"').replaceAll('"pi-ai-1"', '"@earendil-works/pi-ai"')
    : source;
}

/** The consumer files a project compiles: its examples (Pi 1.x's under the real package names) and the folders they import from or load modules from (`new URL("./tools/…", import.meta.url)`). */
function copyExamples(plan: Plan, dir: string): void {
  const target = join(dir, "consumers");
  mkdirSync(target, { recursive: true });
  for (const example of plan.examples) {
    const source = exampleSource(example);
    writeFileSync(join(target, example), source);
    for (const [, folder] of source.matchAll(/(?:from |new URL\()"\.\/([^/"]+)\//g)) {
      cpSync(join(CONSUMERS, folder as string), join(target, folder as string), { recursive: true });
    }
  }
  for (const script of plan.scripts) cpSync(join(ROOT, "test/package/peers", script), join(dir, script));
  writeConsumerTsconfig(dir);
}

/** Everything a project's outcome depends on: the tarball's bytes, the plan, the sources it compiles and runs, this file. */
function keyOf(plan: Plan): string {
  const hash = createHash("sha256").update(tarball.sha).update(JSON.stringify(plan));
  const below = (dir: string) => readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" }).map((path) => join(ROOT, dir, path));
  const files = [...below("test/package/consumers"), ...below("test/package/peers"), join(ROOT, "test/package/peer-matrix.test.ts")].filter(
    (path) => statSync(path).isFile(),
  );
  for (const file of files.sort()) hash.update(file).update(readFileSync(file));
  return hash.digest("hex");
}

async function prepare(plan: Plan): Promise<Prepared> {
  const dir = join(base, plan.name);
  const record = join(dir, "matrix-project.json");
  const key = keyOf(plan);
  if (existsSync(record)) {
    const earlier = JSON.parse(readFileSync(record, "utf8")) as Prepared;
    if (earlier.key === key) return { ...earlier, after: snapshot(dir, [...Object.keys(plan.dependencies), "toolgate"]) };
  }
  const started = performance.now();
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    `${JSON.stringify({ name: "user-app", version: "1.0.0", private: true, type: "module" }, null, 2)}\n`,
  );
  // The user's project as it was before toolgate: their frameworks, installed as they would install them.
  const specs = Object.entries(plan.dependencies).map(([name, version]) => `${name}@${version}`);
  const userInstall = await npmInstall(dir, [...(plan.save === "exact" ? ["--save-exact"] : []), ...specs]);
  const names = Object.keys(plan.dependencies);
  const before = snapshot(dir, names);
  // Then `npm install toolgate`, from the tarball.
  cpSync(tarball.file, join(dir, "toolgate.tgz"));
  const install = userInstall.ok ? await npmInstall(dir, ["./toolgate.tgz"]) : notRun("the user's own install failed");
  const after = snapshot(dir, [...names, "toolgate"]);
  copyExamples(plan, dir);
  const typecheck = install.ok ? await step(process.execPath, [TSC, "-p", dir], dir) : notRun("the install failed");
  const made: Prepared = {
    key,
    dir,
    userInstall,
    before,
    install,
    after,
    typecheck,
    seconds: Math.round((performance.now() - started) / 1000),
    madeUnder: process.version,
  };
  writeFileSync(record, JSON.stringify(made));
  const { madeUnder: _here, ...now } = made;
  return now;
}

if ("plans" in planned) {
  beforeAll(async () => {
    base = shared ?? mkdtempSync(join(scratch, "toolgate-peer-matrix-"));
    mkdirSync(base, { recursive: true });
    const packDir = mkdtempSync(join(base, "pack-"));
    try {
      const { stdout } = await run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", packDir], { cwd: ROOT });
      const [packed] = JSON.parse(stdout) as { filename: string }[];
      if (packed === undefined) throw new Error(`npm pack printed no tarball: ${stdout}`);
      const bytes = readFileSync(join(packDir, packed.filename));
      const sha = createHash("sha256").update(bytes).digest("hex");
      const file = join(base, `toolgate-${sha.slice(0, 16)}.tgz`);
      renameSync(join(packDir, packed.filename), file);
      tarball = { file, sha };
    } finally {
      rmSync(packDir, { recursive: true, force: true });
    }
    const outcomes = await Promise.all(planned.plans.map(prepare));
    for (const [index, plan] of planned.plans.entries()) {
      const outcome = outcomes[index] as Prepared;
      prepared.set(plan.name, outcome);
      const took = `${outcome.seconds} s: the user's install ${outcome.userInstall.seconds} s, toolgate's ${outcome.install.seconds} s, tsc ${outcome.typecheck.seconds} s`;
      const how =
        outcome.madeUnder === undefined ? `made in ${took}` : `reused, made earlier in ${base} under Node ${outcome.madeUnder} in ${took}`;
      const versions = Object.entries(plan.subjects).map(([name, version]) => `${name}@${version}`);
      console.log(`peer matrix, ${plan.name}: ${how}; ${versions.join(" ")}`);
    }
  }, SLOW);

  afterAll(() => {
    if (shared === undefined && base !== undefined) rmSync(base, { recursive: true, force: true });
  }, SLOW);
}

const [nodeMajor = 0, nodeMinor = 0] = process.versions.node.split(".").map(Number);

describe("README.md — Install: each optional peer at both ends of its range, beside the packed tarball", () => {
  if ("unreachable" in planned) {
    test("the npm registry answers (the matrix installs from it and reads its newest versions)", ({ skip }) => {
      if (IN_CI) throw new Error(`CI needs the npm registry for the peer matrix: ${planned.unreachable}`);
      console.warn(`peer matrix not run: ${planned.unreachable}`);
      skip(`not run: ${planned.unreachable}`);
    });
    return;
  }

  test("every optional peer has both ends in the matrix, each in a project that runs an example importing it", () => {
    for (const end of ["lowest", "newest"] as const) {
      const covered = planned.plans
        .filter((plan) => plan.end === end)
        .flatMap((plan) => {
          const sources = plan.examples.map(exampleSource).join("\n");
          // toolgate/queue imports its peers itself: the queue example imports toolgate/queue.
          return Object.keys(plan.subjects).filter(
            (name) => sources.includes(`from "${name}`) || (QUEUE_PEERS.includes(name) && sources.includes('from "toolgate/queue"')),
          );
        });
      expect([...new Set(covered)].sort()).toEqual(ALL_PEERS.map(([name]) => name).sort());
    }
  });

  describe.each(planned.plans)("$name", (plan) => {
    const outcome = (): Prepared => {
      const found = prepared.get(plan.name);
      if (found === undefined) throw new Error(`the ${plan.name} project was not prepared`);
      return found;
    };

    test(`the user's project installs (${plan.save === "exact" ? "pinned exactly" : "npm's default caret"}), then the tarball with no --legacy-peer-deps or --force`, () => {
      const { userInstall, install, before, after } = outcome();
      expect(userInstall.ok ? "" : userInstall.output).toBe("");
      expect(before.installed).toMatchObject(plan.subjects); // the project holds the end under test
      // npm's verdict (an ERESOLVE names the peer and toolgate's range), and no peer of toolgate's
      // that it overrode instead (it warns "While resolving: toolgate@…" when it does).
      expect(install.ok ? "" : install.output).toBe("");
      expect(install.output).not.toMatch(/While resolving: toolgate@/);
      expect(after.installed.toolgate).toBe((JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version);
      // And the ranges claim what npm accepted.
      const outside = Object.entries(plan.subjects).filter(([name, version]) => !semver.satisfies(version, RANGES[name] as string));
      expect(outside).toEqual([]);
    });

    test("the user's package.json and installed versions are exactly as they were", () => {
      const { before, after } = outcome();
      const { toolgate, ...manifest } = after.manifest;
      expect(toolgate).toBe("file:toolgate.tgz");
      expect(manifest).toEqual(before.manifest);
      const { toolgate: _installed, ...installed } = after.installed;
      expect(installed).toEqual(before.installed);
      // And they say what the user asked for: the caret or the exact pin of each version.
      const saved = Object.fromEntries(
        Object.entries(plan.dependencies).map(([name, version]) => [name, plan.save === "exact" ? version : `^${version}`]),
      );
      expect(before.manifest).toEqual(saved);
    });

    test("the examples type-check against what was installed", () => {
      const { typecheck } = outcome();
      expect(typecheck.ok ? "" : typecheck.output).toBe("");
    });

    test.for([...plan.examples, ...plan.scripts])(
      "%s runs to completion and exits by itself",
      { timeout: 90_000 },
      async (name, { skip }) => {
        const [major, minor] = NEEDS_NODE[name] ?? [0, 0];
        if (nodeMajor < major || (nodeMajor === major && nodeMinor < minor)) {
          skip(`not run on Node ${process.versions.node}: its framework needs Node >= ${major}.${minor}`);
        }
        let env: NodeJS.ProcessEnv | undefined;
        if (NEEDS_REDIS.has(name)) {
          const redis = await findRedis(); // throws under TOOLGATE_REQUIRE_REDIS=1 (CI) when there is none
          if ("unavailable" in redis) skip(`not run: ${redis.unavailable}`);
          else env = { ...process.env, REDIS_URL: redis.url };
        }
        const { dir, typecheck } = outcome();
        expect(typecheck.ok).toBe(true);
        const script = name.endsWith(".mjs") ? join(dir, name) : join(dir, "out", name.replace(/\.ts$/, ".js"));
        const ran = await step(process.execPath, [script], dir, 60_000, env);
        expect(ran.ok ? "exit 0" : `failed: ${ran.output}`).toBe("exit 0");
      },
    );
  });
});
