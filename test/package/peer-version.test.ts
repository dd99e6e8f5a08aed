// The adapters' own check of their frameworks' versions (src/adapters/peer-version.ts): the
// ranges are package.json's, they are read as npm reads them, and each adapter's first call
// refuses a framework outside its range with a ToolContractError naming the version, where it
// was found, and the range, before it touches the framework at all.
//
// The adapters run from a copy of the built package in a temporary node_modules, beside fake
// frameworks: one package.json with the version under test and, for every name the compiled
// adapters import from it, a function that throws "touched" when called. A refusal therefore
// comes from the check, and an accepted version is seen to reach the framework.
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import semver from "semver";
import { afterAll, describe, expect, test } from "vitest";
import { ADAPTER_PEER_RANGES, type AdapterPeer, findInstalledPeer, satisfies, versionProblem } from "../../src/adapters/peer-version.js";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};

describe("docs/adapters.md — Versions: the adapters' ranges", () => {
  test("are package.json's optional peer ranges, for every framework an adapter imports", () => {
    const peers = Object.keys(ADAPTER_PEER_RANGES) as AdapterPeer[];
    expect(Object.fromEntries(peers.map((peer) => [peer, manifest.peerDependencies[peer]]))).toEqual(ADAPTER_PEER_RANGES);
    expect(peers.filter((peer) => manifest.peerDependenciesMeta[peer]?.optional !== true)).toEqual([]);
    const imported = new Set(Object.keys(frameworkImports()).map(packageName));
    // typebox is the validator's (toolgate/typebox), not a framework an adapter hands tools to.
    expect([...imported].filter((name) => name !== "typebox" && !(name in ADAPTER_PEER_RANGES))).toEqual([]);
  });

  test("are read as npm's semver reads them, for every version around their bounds", () => {
    const ranges = [...Object.values(ADAPTER_PEER_RANGES), "~1.2.3", ">1.2.3", "1.2.3", "^0.0.3", "^0.2.3 || >=3.0.0 <3.1.0"];
    const disagreements: string[] = [];
    for (const range of ranges) {
      for (const version of versionsAround(range)) {
        if (satisfies(version, range) !== semver.satisfies(version, range)) disagreements.push(`${version} in ${range}`);
      }
    }
    expect(disagreements).toEqual([]);
    // The grid reaches both sides of every bound (so the agreement above means something).
    expect(ranges.map((range) => versionsAround(range).filter((version) => semver.satisfies(version, range)).length > 0)).not.toContain(
      false,
    );
    expect(ranges.map((range) => versionsAround(range).filter((version) => !semver.satisfies(version, range)).length > 0)).not.toContain(
      false,
    );
  });

  test("a prerelease, a version with build metadata, and text that is no version", () => {
    expect(satisfies("7.1.0-beta.1", "^7.0.32")).toBe(false);
    expect(satisfies("7.0.40+build.5", "^7.0.32")).toBe(true);
    expect(["7", "7.0", "v7.0.40", "07.0.40", "7.0.40 ", "", "latest"].filter((text) => satisfies(text, "^7.0.32"))).toEqual([]);
  });

  test("versionProblem names the version, where it was found, the range and the command; an unreadable version is one", () => {
    const at = "/app/node_modules/ai/package.json";
    expect(versionProblem("ai", { manifest: at, version: "7.0.185" })).toBeNull();
    expect(versionProblem("ai", undefined)).toBeNull();
    expect(versionProblem("ai", { manifest: at, version: "6.0.0" })).toBe(
      `toolgate supports ai ^7.0.32, but ai 6.0.0 is installed (${at}). Install a version in that range beside toolgate: npm install "ai@^7.0.32"`,
    );
    expect(versionProblem("ai", { manifest: at, version: undefined })).toBe(
      `toolgate supports ai ^7.0.32, but the version of the ai installed at ${at} cannot be read. Install a version in that range beside toolgate: npm install "ai@^7.0.32"`,
    );
  });

  test("findInstalledPeer finds what Node's resolution finds: the nearest node_modules, never node_modules/node_modules", () => {
    const root = mkdtempSync(join(tmpdir(), "toolgate-peer-find-"));
    try {
      const adapters = join(root, "node_modules/toolgate/dist/src/adapters");
      mkdirSync(adapters, { recursive: true });
      writePackage(join(root, "node_modules/ai"), { name: "ai", version: "6.0.0" });
      expect(findInstalledPeer("ai", adapters)).toEqual({ manifest: join(root, "node_modules/ai/package.json"), version: "6.0.0" });
      writePackage(join(root, "node_modules/node_modules/ai"), { name: "ai", version: "7.0.40" }); // Node never looks here
      expect(findInstalledPeer("ai", adapters)?.version).toBe("6.0.0");
      writePackage(join(root, "node_modules/toolgate/node_modules/ai"), { name: "ai", version: "7.0.50" }); // toolgate's own copy wins
      expect(findInstalledPeer("ai", adapters)?.version).toBe("7.0.50");
      writeFileSync(join(root, "node_modules/toolgate/node_modules/ai/package.json"), "{ not json");
      expect(findInstalledPeer("ai", adapters)).toEqual({
        manifest: join(root, "node_modules/toolgate/node_modules/ai/package.json"),
        version: undefined,
      });
      expect(findInstalledPeer("@mastra/core", adapters)).toBeUndefined();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

/** What each test layout installs beside the copy of toolgate: a version per fake framework (absent: not installed). */
type Layout = Partial<Record<string, string>>;

/** Each adapter's entry point and its first call (on `entry`, the imported module), with an empty registry. */
const CALLS = {
  toAiSdkTools: ["toolgate/ai-sdk", "entry.toAiSdkTools(registry)"],
  toOpenAiAgentsTools: ["toolgate/openai-agents", "entry.toOpenAiAgentsTools(registry)"],
  createMcpServer: ["toolgate/mcp", 'entry.createMcpServer(registry, { name: "s", version: "1.0.0" })'],
  toLangChainTools: ["toolgate/langchain", "entry.toLangChainTools(registry)"],
  toMastraTools: ["toolgate/mastra", "entry.toMastraTools(registry)"],
  toPiAgentTools: ["toolgate/pi", "entry.toPiAgentTools(registry)"],
} as const;
type Api = keyof typeof CALLS;

const work = mkdtempSync(join(tmpdir(), "toolgate-peer-versions-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("docs/adapters.md — Versions: outside the range, each adapter's first call refuses the framework", () => {
  const BELOW: Layout = {
    ai: "7.0.31",
    "@openai/agents": "0.15.0",
    "@modelcontextprotocol/sdk": "1.25.3",
    "@langchain/core": "1.2.12",
    "@langchain/langgraph": "1.7.3",
    "@mastra/core": "1.56.0",
    "@earendil-works/pi-agent-core": "0.83.0",
    "@earendil-works/pi-ai": "0.84.0",
    typebox: "1.0.0",
  };
  const ABOVE: Layout = {
    ai: "8.0.0",
    "@openai/agents": "0.21.0",
    "@modelcontextprotocol/sdk": "2.0.0",
    "@langchain/core": "1.4.0",
    "@langchain/langgraph": "2.0.0",
    "@mastra/core": "2.0.0",
    "@earendil-works/pi-agent-core": "1.6.0",
    "@earendil-works/pi-ai": "2.0.0",
    typebox: "1.0.0",
  };

  test.for([
    ["below", BELOW],
    ["above", ABOVE],
  ] as const)("every framework %s its range: a ToolContractError naming the version, where, and the range", async ([name, layout]) => {
    const { root, outcomes } = await runLayout(name, layout);
    const refused = (api: Api, peer: AdapterPeer) => ({
      name: "ToolContractError",
      code: "MISSING_PEER_DEPENDENCY",
      message: `${api}: toolgate supports ${peer} ${ADAPTER_PEER_RANGES[peer]}, but ${peer} ${layout[peer]} is installed (${join(root, "node_modules", peer, "package.json")}). Install a version in that range beside toolgate: npm install "${peer}@${ADAPTER_PEER_RANGES[peer]}"`,
    });
    expect(outcomes).toEqual({
      toAiSdkTools: refused("toAiSdkTools", "ai"),
      toOpenAiAgentsTools: refused("toOpenAiAgentsTools", "@openai/agents"),
      createMcpServer: refused("createMcpServer", "@modelcontextprotocol/sdk"),
      // below: @langchain/core is the one out of range; above: @langchain/langgraph.
      toLangChainTools: refused("toLangChainTools", name === "below" ? "@langchain/core" : "@langchain/langgraph"),
      toMastraTools: refused("toMastraTools", "@mastra/core"),
      // below: pi-agent-core is out of range; above: pi-ai.
      toPiAgentTools: refused("toPiAgentTools", name === "below" ? "@earendil-works/pi-agent-core" : "@earendil-works/pi-ai"),
    });
  });

  test("each range's ends are accepted: every call passes the check and reaches its framework (or needs none)", async () => {
    const { outcomes } = await runLayout("ends", {
      ai: "7.0.32",
      "@openai/agents": "0.20.99",
      "@modelcontextprotocol/sdk": "1.26.0",
      "@langchain/core": "1.99.0",
      "@langchain/langgraph": "1.0.0",
      "@mastra/core": "1.57.0",
      "@earendil-works/pi-agent-core": "0.84.0",
      "@earendil-works/pi-ai": "1.99.99",
      typebox: "1.0.0",
    });
    // An empty registry: the adapters with nothing to convert return an empty set; the MCP
    // adapter makes its Server, which is the fake's, and is seen to touch it.
    expect(outcomes).toEqual({
      toAiSdkTools: "created",
      toOpenAiAgentsTools: "created",
      createMcpServer: { name: "Error", message: "the fake @modelcontextprotocol/sdk was touched: Server" },
      toLangChainTools: "created",
      toMastraTools: "created",
      toPiAgentTools: "created",
    });
  });

  test("a prerelease and an unreadable version are refused; a framework that is not installed is not judged", async () => {
    const { root, outcomes } = await runLayout("odd", {
      ai: "7.1.0-beta.1",
      "@openai/agents": "unreadable",
      "@modelcontextprotocol/sdk": "1.32.2",
      "@langchain/core": "1.4.0",
      "@langchain/langgraph": "1.7.3",
      "@mastra/core": "1.71.0",
      typebox: "1.0.0",
    });
    const install = (peer: AdapterPeer) =>
      `Install a version in that range beside toolgate: npm install "${peer}@${ADAPTER_PEER_RANGES[peer]}"`;
    expect(outcomes).toMatchObject({
      toAiSdkTools: {
        code: "MISSING_PEER_DEPENDENCY",
        message: `toAiSdkTools: toolgate supports ai ^7.0.32, but ai 7.1.0-beta.1 is installed (${join(root, "node_modules/ai/package.json")}). ${install("ai")}`,
      },
      toOpenAiAgentsTools: {
        code: "MISSING_PEER_DEPENDENCY",
        message: `toOpenAiAgentsTools: toolgate supports @openai/agents >=0.16.0 <0.21.0, but the version of the @openai/agents installed at ${join(root, "node_modules/@openai/agents/package.json")} cannot be read. ${install("@openai/agents")}`,
      },
      toPiAgentTools: "created", // no Pi in node_modules (an alias, a bundle): nothing to judge, and toolgate/pi imports none of it
    });
  });

  test("the outcome is read once per process: a package replaced after the first call changes nothing", async () => {
    const root = join(work, "once");
    makeLayout(root, { ai: "6.0.0", typebox: "1.0.0" });
    const script = `${prelude()}
      const { toAiSdkTools } = await import("toolgate/ai-sdk");
      const first = outcome(() => toAiSdkTools(registry));
      writeFileSync(${JSON.stringify(join(root, "node_modules/ai/package.json"))}, JSON.stringify({ name: "ai", version: "7.0.40" }));
      console.log(JSON.stringify([first, outcome(() => toAiSdkTools(registry))]));`;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: root });
    const [first, second] = JSON.parse(stdout) as [{ code?: string }, { code?: string }];
    expect(first.code).toBe("MISSING_PEER_DEPENDENCY");
    expect(second).toEqual(first);
  });
});

/** Each bare specifier the compiled adapters import, with the names they import from it. */
function frameworkImports(): Record<string, string[]> {
  const imports: Record<string, string[]> = {};
  const dir = join(ROOT, "dist/src/adapters");
  for (const file of readdirSync(dir).filter((name) => name.endsWith(".js"))) {
    const text = readFileSync(join(dir, file), "utf8");
    for (const match of text.matchAll(/^import\s*\{([^}]*)\}\s*from\s*"([^".][^"]*)";/gm)) {
      const specifier = match[2] as string;
      if (specifier.startsWith("node:")) continue;
      const names = (match[1] as string)
        .split(",")
        .map((part) => part.trim().split(/\s+as\s+/)[0] as string)
        .filter((part) => part !== "");
      imports[specifier] = [...new Set([...(imports[specifier] ?? []), ...names])];
    }
  }
  return imports;
}

/** `@scope/name/sub/path` → `@scope/name`; `name/sub` → `name`. */
function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? `${parts[0]}/${parts[1]}` : (parts[0] as string);
}

function writePackage(dir: string, contents: object | string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), typeof contents === "string" ? contents : JSON.stringify(contents));
}

/**
 * A project at `root` with toolgate (package.json and the built dist/src) in its node_modules
 * and a fake of each package `layout` names, at that version ("unreadable": a package.json
 * whose version is missing), exporting every name the adapters import from it (Pi: none).
 */
function makeLayout(root: string, layout: Layout): void {
  const toolgate = join(root, "node_modules/toolgate");
  mkdirSync(toolgate, { recursive: true });
  cpSync(join(ROOT, "package.json"), join(toolgate, "package.json"));
  cpSync(join(ROOT, "dist/src"), join(toolgate, "dist/src"), { recursive: true });
  const byPackage = new Map<string, Map<string, string[]>>();
  for (const [specifier, names] of Object.entries(frameworkImports())) {
    const name = packageName(specifier);
    const subpath = `.${specifier.slice(name.length)}`;
    byPackage.set(name, (byPackage.get(name) ?? new Map()).set(subpath, names));
  }
  for (const [name, version] of Object.entries(layout)) {
    if (version === undefined) continue;
    const dir = join(root, "node_modules", name);
    const exports: Record<string, string> = {};
    for (const [subpath, names] of byPackage.get(name) ?? []) {
      const file = `./fake${subpath === "." ? "/index" : subpath.slice(1).replace(/\.js$/, "")}.js`;
      exports[subpath] = file;
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      const body = names.map(
        (exported) => `export function ${exported}() { throw new Error("the fake ${name} was touched: ${exported}"); }`,
      );
      writeFileSync(join(dir, file), `${body.join("\n")}\n`);
    }
    writePackage(dir, version === "unreadable" ? { name, type: "module", exports } : { name, version, type: "module", exports });
  }
}

/** The start of every child's script: a registry, and an outcome reader that never throws. */
function prelude(): string {
  return `import { writeFileSync } from "node:fs";
    import { ToolRegistry } from "toolgate";
    const registry = new ToolRegistry([]);
    const outcome = (make, entry) => {
      try {
        make(entry);
        return "created";
      } catch (error) {
        return error.code === undefined ? { name: error.name, message: error.message } : { name: error.name, code: error.code, message: error.message };
      }
    };`;
}

/** Makes the layout, then calls every adapter once in a fresh Node process (each peer is read once per process). */
async function runLayout(name: string, layout: Layout): Promise<{ root: string; outcomes: Record<Api, unknown> }> {
  const root = join(work, name);
  makeLayout(root, layout);
  const calls = Object.entries(CALLS).map(
    ([api, [entry, call]]) => `${JSON.stringify(api)}: outcome((entry) => ${call}, await import(${JSON.stringify(entry)}))`,
  );
  const script = `${prelude()}\nconsole.log(JSON.stringify({ ${calls.join(",\n")} }));`;
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: root });
  return { root, outcomes: JSON.parse(stdout) as Record<Api, unknown> };
}

/** Versions on both sides of every bound in `range`, and prereleases of the bounds themselves. */
function versionsAround(range: string): string[] {
  const versions = new Set<string>();
  for (const [, major, minor, patch] of range.matchAll(/(\d+)\.(\d+)\.(\d+)/g)) {
    const [a, b, c] = [Number(major), Number(minor), Number(patch)];
    for (const [x, y, z] of [
      [a, b, c],
      [a, b, c + 1],
      [a, b + 1, 0],
      [a + 1, 0, 0],
      [a, b, Math.max(c - 1, 0)],
      [a, Math.max(b - 1, 0), 99],
      [Math.max(a - 1, 0), 99, 99],
    ] as const) {
      versions.add(`${x}.${y}.${z}`);
      versions.add(`${x}.${y}.${z}-rc.1`);
    }
  }
  return [...versions];
}
