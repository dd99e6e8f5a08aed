// Properties of the call snapshot (docs/contract.md, rule 4 — call snapshot, rule 13 — frozen,
// linked results): for arbitrary values and generated hostile calls
// (test/support/hostile-calls.ts), executeToolCall resolves to a frozen linked result exactly
// when the call is well-formed, rejects with INVALID_TOOL_CALL otherwise, and runs no user
// code either way.
import fc from "fast-check";
import { defineTool, executeToolCall, serializeToolOutput, ToolRegistry } from "toolgate";
import { afterEach, describe, expect, it } from "vitest";
import { expectInvalidCall, expectLinkedResult } from "../support/assertions.js";
import { settle } from "../support/helpers.js";
import {
  anythingValue,
  argsValue,
  buildCall,
  callDesc,
  defect,
  expectValidCall,
  jsonArgsDescs,
  REGISTERED,
  snapshotable,
  withDefect,
} from "../support/hostile-calls.js";
import { build, RUNS } from "../support/hostile-values.js";
import { hitLog, hits, resetHits } from "../support/user-code.js";

afterEach(resetHits);

/** The four tools the generated calls name (REGISTERED in test/support/hostile-calls.ts). */
function makeRegistry(): ToolRegistry {
  return new ToolRegistry([
    defineTool({
      name: "echo",
      description: "returns its arguments",
      validate: (args: unknown) => ({ ok: true as const, value: args }),
      execute: (args: unknown) => args,
    }),
    defineTool({
      name: "picky",
      description: "refuses every argument",
      validate: (args: unknown) => ({ ok: false as const, error: { refused: args } }),
      execute: () => {
        throw new Error("picky must never execute");
      },
    }),
    defineTool({
      name: "boom",
      description: "throws",
      validate: (args: unknown) => ({ ok: true as const, value: args }),
      execute: () => {
        throw new TypeError("boom");
      },
    }),
    defineTool({
      name: "later",
      description: "resolves asynchronously",
      validate: (args: unknown) => ({ ok: true as const, value: args }),
      execute: async (args: unknown) => {
        await null;
        return { later: args };
      },
    }),
  ]);
}

/** Arrays and own enumerable string-keyed members copied into plain objects (for well-formed arguments). */
function plainCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plainCopy);
  if (value === null || typeof value !== "object") return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const member = plainCopy((value as Record<string, unknown>)[key]);
    Object.defineProperty(copy, key, { value: member, writable: true, enumerable: true, configurable: true });
  }
  return copy;
}

describe("rule 4 — call snapshot, rule 13 — frozen, linked results: executeToolCall on arbitrary call-like inputs (properties)", () => {
  it("arbitrary values: a linked frozen result or INVALID_TOOL_CALL, nothing else", async () => {
    const registry = makeRegistry();
    await fc.assert(
      fc.asyncProperty(anythingValue, async (input) => {
        const settled = await settle(executeToolCall(registry, input, new AbortController().signal));
        if (settled.ok) {
          const record = input as Record<string, unknown>;
          expectLinkedResult(settled.value, record.id, record.name);
        } else {
          expectInvalidCall(settled.reason);
        }
        // Without an own "type" data property equal to "toolCall" it cannot be a call.
        const type = typeof input === "object" && input !== null ? Object.getOwnPropertyDescriptor(input, "type") : undefined;
        if (type?.value !== "toolCall") expect(settled.ok).toBe(false);
      }),
      { numRuns: RUNS },
    );
  });

  it("generated calls (accessors, Proxies, non-JSON and sparse arguments): resolve exactly when well-formed, no user code runs", async () => {
    const registry = makeRegistry();
    await fc.assert(
      fc.asyncProperty(callDesc, async (c) => {
        const call = buildCall(c);
        resetHits();
        const settled = await settle(executeToolCall(registry, call, new AbortController().signal));
        expect(hitLog).toEqual([]);
        expect(hits).toBe(0);
        const valid = expectValidCall(c);
        if (!settled.ok) {
          expectInvalidCall(settled.reason);
          expect(valid).toBe(false);
          return;
        }
        expect(valid).toBe(true);
        const result = settled.value;
        expectLinkedResult(result, c.id.v, c.name.v);
        const name = c.name.v as string;
        const args = plainCopy(argsValue(c.args)); // a fresh plain copy of the (valid) arguments
        if (name === "echo") {
          const direct = serializeToolOutput(args);
          expect(result.isError).toBe(!direct.ok);
          if (direct.ok) expect(result.content).toBe(direct.content);
          else expect(result.content.startsWith('{"error":{"code":"TOOL_OUTPUT_SERIALIZATION_FAILED"')).toBe(true);
        } else if (name === "picky") {
          expect(result.isError).toBe(true);
          expect(result.content.startsWith('{"error":{"code":"TOOL_ARGUMENTS_INVALID"')).toBe(true);
        } else if (name === "boom") {
          expect(result.isError).toBe(true);
          expect(result.content).toBe('{"error":{"code":"TOOL_EXECUTION_FAILED","message":"TypeError: boom"}}');
        } else if (name === "later") {
          const direct = serializeToolOutput({ later: args });
          expect(result.isError).toBe(!direct.ok);
          if (direct.ok) expect(result.content).toBe(direct.content);
        } else {
          expect(result.isError).toBe(true);
          expect(result.content.startsWith('{"error":{"code":"TOOL_NOT_FOUND"')).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("one defect anywhere in otherwise JSON arguments (accessor, hole, non-enumerable, non-JSON value, cycle...) gives INVALID_TOOL_CALL", async () => {
    const registry = makeRegistry();
    await fc.assert(
      fc.asyncProperty(jsonArgsDescs.object, fc.nat(), defect, fc.constantFrom(...REGISTERED), async (base, pick, flaw, name) => {
        const args = withDefect(base, pick, flaw);
        expect(snapshotable(args, 0)).toBe(false); // the generator really made a malformed call
        const call = { type: "toolCall", id: "call-1", name, arguments: build(args, []) };
        resetHits();
        const settled = await settle(executeToolCall(registry, call, new AbortController().signal));
        expect(hitLog).toEqual([]);
        expect(settled.ok).toBe(false);
        if (!settled.ok) expectInvalidCall(settled.reason);
      }),
      { numRuns: RUNS },
    );
  });
});
