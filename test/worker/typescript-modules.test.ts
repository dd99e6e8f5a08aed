// Tool modules written in TypeScript, loaded as source in worker threads (docs/contract.md,
// rule W1 — tool modules).
// Node 20's worker threads do not inherit `--import tsx` (tsx registers itself on the main
// thread only there), so the `loader` option registers it in each thread before the modules.
import { WorkerToolExecutor } from "toolgate/worker";
import { describe, expect, test } from "vitest";
import { call, fixture, neverAborted, settle } from "../support/helpers.js";

const TYPED_TOOLS = new URL("../fixtures/typescript/typed-tools.ts", import.meta.url);
const ERASABLE_TOOLS = new URL("../fixtures/typescript/erasable-tools.ts", import.meta.url);
const TSX_LOADER = fixture("tsx-loader");

describe("rule W1 — tool modules: TypeScript tool modules in worker threads", () => {
  test("with the loader, a .ts module runs in a worker thread", async () => {
    const executor = await WorkerToolExecutor.create({ modules: [TYPED_TOOLS], loader: TSX_LOADER, maxThreads: 1 });
    try {
      const result = await executor.executeToolCall(call("toFahrenheit", { celsius: 100 }), neverAborted());
      expect(result).toMatchObject({ toolName: "toFahrenheit", content: "212 F", isError: false });
    } finally {
      await executor.close();
    }
  });

  async function refusal(options: Parameters<typeof WorkerToolExecutor.create>[0]): Promise<{ code: string; message: string }> {
    const outcome = await settle(WorkerToolExecutor.create(options));
    if (outcome.ok) await outcome.value.close();
    expect(outcome.ok).toBe(false);
    return (outcome as { reason: { code: string; message: string } }).reason;
  }

  test("without it, a worker thread cannot import the module: create() names the module and the reason", async () => {
    const error = await refusal({ modules: [TYPED_TOOLS], maxThreads: 1 });
    expect(error.code).toBe("INVALID_TOOL_MODULE");
    expect(error.message).toContain("tool module typed-tools.ts could not be loaded");
    // Node 22.18+ strips erasable types by itself, but not this module's enum: it still fails
    // to load, with another reason. Where Node has no type stripping, the reason is exact.
    if (!builtInTypeStripping()) expect(error.message).toContain('Unknown file extension ".ts"');
  });

  // The CI matrix runs this on Node 20 (no type stripping) and on Node 22.23 and 24 (stripping by default).
  test("with no loader, an erasable-only .ts module runs where Node strips types (22.18+, 24) and is refused on Node 20", async () => {
    if (builtInTypeStripping()) {
      const executor = await WorkerToolExecutor.create({ modules: [ERASABLE_TOOLS], maxThreads: 1 });
      try {
        const result = await executor.executeToolCall(call("toKelvin", { celsius: 100 }), neverAborted());
        expect(result).toMatchObject({ toolName: "toKelvin", content: "373.15 K", isError: false });
      } finally {
        await executor.close();
      }
    } else {
      const error = await refusal({ modules: [ERASABLE_TOOLS], maxThreads: 1 });
      expect(error.code).toBe("INVALID_TOOL_MODULE");
      expect(error.message).toContain("tool module erasable-tools.ts could not be loaded");
      expect(error.message).toContain('Unknown file extension ".ts"');
    }
  });

  test("the suite knows which Node strips types: none on 20, by default from 22.18 (and on 24)", () => {
    const [major, minor] = process.versions.node.split(".").map(Number) as [number, number];
    expect(builtInTypeStripping()).toBe(major > 22 || (major === 22 && minor >= 18));
  });

  test("a loader that cannot be imported fails the modules, naming the loader", async () => {
    const error = await refusal({ modules: [TYPED_TOOLS], loader: new URL("./no-such-loader.mjs", TSX_LOADER), maxThreads: 1 });
    expect(error.code).toBe("INVALID_TOOL_MODULE");
    expect(error.message).toContain("the loader no-such-loader.mjs could not be loaded");
  });
});

/** Node's own TypeScript support (22.6+ behind a flag, 22.18+ by default): `process.features.typescript`. */
function builtInTypeStripping(): boolean {
  const features = process.features as { typescript?: unknown };
  return features.typescript !== undefined && features.typescript !== false;
}
