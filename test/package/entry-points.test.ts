// What importing each entry point loads, observed, not read from the source: a child `node`
// records every module the ESM loader resolves (test/fixtures/record-resolutions.mjs) while it
// imports the entry by its package name, as a user's program does. The core loads no framework,
// schema library, worker pool or queue; each adapter loads its own framework and no other one.
// What a framework itself brings (zod under the AI SDK, say) is the framework's business: the
// check is on what toolgate's own modules import, and, for the entries whose frameworks bring
// none, on everything loaded.
import { execFile } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, test } from "vitest";
import { scratchDir } from "../support/helpers.js";

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const REGISTER = fileURLToPath(new URL("../fixtures/register-resolutions.mjs", import.meta.url));
const OWN = new URL("dist/", new URL(`file://${ROOT}`)).href;

/** Every framework an entry may load, by package name (the Pi 1.x aliases included). */
const FRAMEWORKS = [
  "ai",
  "@openai/agents",
  "zod",
  "valibot",
  "typebox",
  "@modelcontextprotocol/sdk",
  "@earendil-works/pi-agent-core",
  "@earendil-works/pi-ai",
  "@earendil-works/pi-schema",
  "pi-agent-core-1",
  "pi-ai-1",
  "pi-schema-1",
  "piscina",
  "comlink",
  "bullmq",
  "ioredis",
  "@langchain/core",
  "@langchain/langgraph",
  "langchain",
  "@mastra/core",
];

/**
 * Each entry, the frameworks its own modules import, and whether that is all it loads (false
 * where the framework brings others of the list: the AI SDK and the OpenAI Agents SDK load zod,
 * the MCP SDK, LangChain and Mastra too).
 */
const ENTRIES: readonly (readonly [entry: string, own: readonly string[], onlyThese: boolean])[] = [
  ["toolgate", [], true],
  ["toolgate/standard-schema", [], true],
  ["toolgate/typebox", ["typebox"], true],
  ["toolgate/pi", ["typebox"], true],
  ["toolgate/worker", ["comlink", "piscina"], true],
  // bullmq and ioredis are optional peers, imported when an executor or a host is created (src/queue/peers.ts).
  ["toolgate/queue", ["comlink", "piscina"], true],
  // ioredis is an optional peer, imported when a Redis store is first used (src/durable/redis-store.ts).
  ["toolgate/durable", [], true],
  ["toolgate/ai-sdk", ["ai"], false],
  ["toolgate/mcp", ["@modelcontextprotocol/sdk"], false],
  ["toolgate/openai-agents", ["@openai/agents"], false],
  ["toolgate/langchain", ["@langchain/core", "@langchain/langgraph"], false],
  ["toolgate/mastra", ["@mastra/core"], false],
];

const scratch = scratchDir();
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The package a resolved URL lies in (by its node_modules folder), or undefined for our own files and built-ins. */
function packageOf(url: string): string | undefined {
  const at = url.lastIndexOf("/node_modules/");
  if (at < 0) return undefined;
  const [first, second] = url.slice(at + "/node_modules/".length).split("/");
  return first?.startsWith("@") ? `${first}/${second}` : first;
}

const observed = new Map<string, Promise<[string, string][]>>();

/** What a child `node` resolves while it imports `entry`: [url, parent url] pairs (one child per entry). */
function resolutions(entry: string): Promise<[string, string][]> {
  let pending = observed.get(entry);
  if (pending === undefined) {
    pending = observe(entry);
    observed.set(entry, pending);
  }
  return pending;
}

async function observe(entry: string): Promise<[string, string][]> {
  const out = join(scratch, `${entry.replace(/\W/g, "-")}.jsonl`);
  rmSync(out, { force: true });
  await run(process.execPath, ["--import", REGISTER, "--input-type=module", "-e", `await import(${JSON.stringify(entry)});`], {
    cwd: ROOT,
    env: { ...process.env, TOOLGATE_RESOLUTIONS: out },
    timeout: 60_000,
  });
  return readFileSync(out, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as [string, string]);
}

const frameworksIn = (urls: readonly string[]): string[] =>
  [...new Set(urls.map(packageOf).filter((name): name is string => name !== undefined && FRAMEWORKS.includes(name)))].sort();

describe("what importing each entry point loads (observed in a child process)", () => {
  test.each(ENTRIES)(
    "%s: toolgate's own modules import exactly the frameworks %j",
    async (entry, own) => {
      const resolved = await resolutions(entry);
      // The recorder saw the entry itself resolve into our build (the observation works).
      expect(resolved.some(([url]) => url.startsWith(OWN))).toBe(true);
      const fromOurs = resolved.filter(([, parent]) => parent.startsWith(OWN)).map(([url]) => url);
      expect(frameworksIn(fromOurs)).toEqual([...own].sort());
    },
    90_000,
  );

  test.each(ENTRIES.filter(([, , onlyThese]) => onlyThese))(
    "%s loads no framework of the list but %j, not even through another package",
    async (entry, own) => {
      const resolved = await resolutions(entry);
      expect(frameworksIn(resolved.map(([url]) => url))).toEqual([...own].sort());
    },
    90_000,
  );
});
