// Serializer edges (docs/contract.md, rule 10 — safe serialization, rule 12 — content cap):
// the key order at every object size (small objects and large ones may be sorted by
// different code paths), the O(1) refusal of huge arrays, and the cut next to a surrogate pair.
import { executeToolCall, Limits, serializeToolOutput, ToolRegistry } from "toolgate";
import { describe, expect, test } from "vitest";
import { call, neverAborted } from "../support/helpers.js";

describe("rule 10 — safe serialization: keys sort by UTF-16 code units at every object size", () => {
  test.each([5, 16, 17, 40])("an object with %i keys renders its keys in code-unit order", (count) => {
    // Mixed case, digits, punctuation and non-ASCII: code-unit order differs from locale order.
    const alphabet = ["b", "B", "a", "A", "_", "Z", "é", "e", "10", "9", "~", "ß", "Ä", "z", "-", "😀", "ｚ", "0"];
    const keys = Array.from(
      { length: count },
      (_, index) => `${alphabet[index % alphabet.length]}${Math.floor(index / alphabet.length) || ""}`,
    );
    const value = Object.fromEntries(keys.map((key, index) => [key, index]));
    const expected = `{${[...keys]
      .sort()
      .map((key) => `${JSON.stringify(key)}:${value[key]}`)
      .join(",")}}`;
    const outcome = serializeToolOutput(value);
    expect(outcome).toEqual({ ok: true, content: expected });
  });
});

describe("rule 10 — safe serialization: arrays are walked by index within the budget, never by listing their keys", () => {
  test("a four-million-element array is refused in (near) constant time", () => {
    // Listing 4e6 keys takes seconds; the budget check refuses the array before reading any member.
    const huge = new Array(4_000_000).fill(0);
    const started = performance.now();
    const outcome = serializeToolOutput({ huge });
    const elapsed = performance.now() - started;
    expect(outcome).toEqual({
      ok: false,
      message: `output contains more than ${Limits.MAX_COLLECTION_VISITS} collection members at $.huge`,
    });
    expect(elapsed).toBeLessThan(250); // generous: the refusal itself takes microseconds
  });
});

describe("rule 12 — content cap: a surrogate pair is never split, wherever it sits relative to the cut", () => {
  // The cut keeps 4096 - 24 (marker) = 4072 code points; offsets around that index put the
  // first pair's high surrogate on the last unit that is kept.
  test.each([4069, 4070, 4071, 4072, 4073])("ASCII then emoji from UTF-16 index %i", (offset) => {
    const outcome = serializeToolOutput("a".repeat(offset) + "😀".repeat(100));
    expect(outcome.ok).toBe(true);
    const content = (outcome as { content: string }).content;
    expect(content.isWellFormed()).toBe(true);
    expect([...content].length).toBe(4096);
    expect(content.endsWith(Limits.TRUNCATION_MARKER)).toBe(true);
  });

  test("the echoed name in TOOL_NOT_FOUND is cut on a code-point boundary too", async () => {
    const name = `${"n".repeat(127)}😀tail`;
    const result = await executeToolCall(new ToolRegistry(), call(name), neverAborted());
    expect(result.content).not.toMatch(/\\ud[89ab]/i); // no escaped lone surrogate in the JSON
    expect(JSON.parse(result.content).error.message).toContain(`${"n".repeat(127)}😀`);
  });
});

// Issue 12, item 7: the value the serializer cannot render is named through describeValue.
describe("a value that cannot be serialized is named with its article", () => {
  test.each([
    ["a function", () => 1, "a function cannot be serialized"],
    ["a symbol", Symbol("s"), "a symbol cannot be serialized"],
    ["a Proxy of a function", new Proxy(() => 1, {}), "a Proxy cannot be serialized"],
  ])("%s", (_label, value, message) => {
    expect(serializeToolOutput(value)).toEqual({ ok: false, message });
  });
});
