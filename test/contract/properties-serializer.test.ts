// Properties of the output serializer (docs/contract.md, rule 10 — safe serialization,
// rule 11 — work budgets, rule 12 — content cap): over generated hostile values
// (test/support/hostile-values.ts) serializeToolOutput never throws, never runs user code,
// keeps content within the cap, agrees exactly with the reference model
// (test/support/serializer-model.ts), and is deterministic.
import fc from "fast-check";
import { Limits, type SerializationOutcome, serializeToolOutput } from "toolgate";
import { afterEach, describe, expect, it } from "vitest";
import { expectBoundedContent } from "../support/assertions.js";
import { codePoints } from "../support/helpers.js";
import { anyDesc, buildFresh, RUNS, shuffledOrder, stringsOf } from "../support/hostile-values.js";
import { canon, jsonContainerDepth, jsonNodes, sortedJson } from "../support/plain-json.js";
import { expectedOutcome } from "../support/serializer-model.js";
import { hitLog, hits, resetHits } from "../support/user-code.js";

const MAX = Limits.MAX_CONTENT_CODE_POINTS;
const MARKER = Limits.TRUNCATION_MARKER;

afterEach(resetHits);

describe("rules 10–12 — safe serialization, work budgets, content cap: serializeToolOutput on arbitrary hostile values (properties)", () => {
  it("never throws, never runs user code, and keeps content within 4096 code points without splitting a pair", () => {
    fc.assert(
      fc.property(anyDesc, (d) => {
        const value = buildFresh(d);
        let outcome: SerializationOutcome;
        try {
          outcome = serializeToolOutput(value);
        } catch (error) {
          throw new Error(`serializeToolOutput threw: ${String(error)}`);
        }
        expect(hitLog).toEqual([]);
        expect(hits).toBe(0);
        if (outcome.ok) {
          expect(typeof outcome.content).toBe("string");
          expectBoundedContent(
            outcome.content,
            stringsOf(d).every((s) => s.isWellFormed()),
          );
        } else {
          expect(typeof outcome.message).toBe("string");
          expect(outcome.message.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("matches the reference model exactly: accepted or refused, and the exact content", () => {
    fc.assert(
      fc.property(anyDesc, (d) => {
        const outcome = serializeToolOutput(buildFresh(d));
        const expected = expectedOutcome(d);
        expect(outcome.ok).toBe(expected.ok);
        // Compared as JSON string literals, so an unescaped control character shows in the diff.
        if (outcome.ok && expected.ok) expect(JSON.stringify(outcome.content)).toBe(JSON.stringify(expected.content));
      }),
      { numRuns: RUNS },
    );
  });

  it("is deterministic: the same value twice, a rebuilt value, and any key insertion order give the same outcome", () => {
    fc.assert(
      fc.property(anyDesc, fc.integer(), (d, seed) => {
        const value = buildFresh(d);
        const first = serializeToolOutput(value);
        expect(serializeToolOutput(value)).toStrictEqual(first);
        expect(serializeToolOutput(buildFresh(d))).toStrictEqual(first);
        expect(serializeToolOutput(buildFresh(d, shuffledOrder(seed)))).toStrictEqual(first);
        expect(hits).toBe(0);
      }),
      { numRuns: RUNS },
    );
  });

  const jsonWithinBudgets = fc
    .oneof(fc.jsonValue({ maxDepth: 8 }), fc.jsonValue({ maxDepth: 8, stringUnit: "binary" }))
    .filter((value) => jsonNodes(value) <= Limits.MAX_NODES && jsonContainerDepth(value) <= Limits.MAX_DEPTH)
    .filter((value) => typeof value !== "string"); // a top-level string is content verbatim, not JSON

  it("renders JSON-safe values within the budgets as JSON with sorted keys", () => {
    fc.assert(
      fc.property(jsonWithinBudgets, (value) => {
        const outcome = serializeToolOutput(value);
        if (!outcome.ok) throw new Error(`refused a JSON value within budgets: ${outcome.message}`);
        const reference = canon(value); // sorted keys in UTF-16 order (JSON.stringify would put integer keys first)
        if (codePoints(reference) <= MAX) {
          expect(outcome.content).toBe(reference);
          expect(JSON.parse(outcome.content)).toStrictEqual(sortedJson(value));
        } else {
          // Long keys can push a small value past 4096 code points: a prefix of the reference.
          expect(codePoints(outcome.content)).toBe(MAX);
          expect(outcome.content.endsWith(MARKER)).toBe(true);
          expect(reference.startsWith(outcome.content.slice(0, -MARKER.length))).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
  });
});
