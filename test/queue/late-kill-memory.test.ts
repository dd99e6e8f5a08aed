// src/queue/thread-facts.ts's LateKillMemory on its own: the host's memory of answered calls and
// the agent's of stopped jobs, for a thread kill announced late. Forgotten oldest first (an entry
// set again is the newest) once stale or beyond the bound, and in O(1) a step: a Map's own order
// made every step skip the entries deleted at its front.
// docs/queue.md — Attachments, progress and thread facts across machines.
import { describe, expect, test } from "vitest";
import type { CallEndEvent } from "../../src/index.js";
import { HostFactsBook, LATE_KILL_MEMORY_ENTRIES, LATE_KILL_MEMORY_MS, LateKillMemory } from "../../src/queue/thread-facts.js";

describe("LateKillMemory", () => {
  test("an entry older than the memory is forgotten with the next one set; a fresh one stays", () => {
    const memory = new LateKillMemory<{ at: number }>();
    memory.set("a", { at: 0 }, 0);
    memory.set("b", { at: 10 }, 10);
    memory.set("c", { at: LATE_KILL_MEMORY_MS + 1 }, LATE_KILL_MEMORY_MS + 1);
    expect(memory.get("a")).toBeUndefined();
    expect(memory.get("b")).toEqual({ at: 10 });
    expect(memory.get("c")).toEqual({ at: LATE_KILL_MEMORY_MS + 1 });
  });

  test("beyond the bound the oldest goes first, and an entry set again counts as the newest", () => {
    const memory = new LateKillMemory<{ at: number }>();
    for (let index = 0; index < LATE_KILL_MEMORY_ENTRIES; index += 1) memory.set(`k${index}`, { at: index }, index);
    // k0 set again: k1 is now the oldest.
    memory.set("k0", { at: LATE_KILL_MEMORY_ENTRIES }, LATE_KILL_MEMORY_ENTRIES);
    memory.set("new", { at: LATE_KILL_MEMORY_ENTRIES + 1 }, LATE_KILL_MEMORY_ENTRIES + 1);
    expect(memory.get("k1")).toBeUndefined();
    expect(memory.get("k0")).toEqual({ at: LATE_KILL_MEMORY_ENTRIES });
    expect(memory.get("k2")).toEqual({ at: 2 });
    expect(memory.get("new")).toBeDefined();
  });

  test("a deleted key frees its place, and keys set again many times behind a fresh oldest one are all remembered", () => {
    const memory = new LateKillMemory<{ at: number }>();
    memory.set("first", { at: 0 }, 0);
    memory.delete("first");
    expect(memory.get("first")).toBeUndefined();
    // A fresh oldest entry holds the sweep back while 300 keys are set again and again (the list is rebuilt meanwhile).
    memory.set("oldest", { at: 1 }, 1);
    for (let round = 0; round < 100; round += 1) {
      for (let key = 0; key < 300; key += 1) memory.set(`call-${key}`, { at: 2 + round }, 2 + round);
    }
    expect(memory.get("oldest")).toEqual({ at: 1 });
    for (let key = 0; key < 300; key += 1) expect(memory.get(`call-${key}`)).toEqual({ at: 101 });
    // Once the oldest is stale, it goes, and the rest (set later) stays.
    memory.set("late", { at: LATE_KILL_MEMORY_MS + 2 }, LATE_KILL_MEMORY_MS + 2);
    expect(memory.get("oldest")).toBeUndefined();
    expect(memory.get("call-0")).toEqual({ at: 101 });
  });

  test("at the bound, a step stays O(1): 50,000 steps past 10,000 entries take well under the old sweep's 10 µs each", () => {
    const memory = new LateKillMemory<{ at: number }>();
    for (let index = 0; index < 2 * LATE_KILL_MEMORY_ENTRIES; index += 1) memory.set(`w${index}`, { at: index }, index);
    const started = performance.now();
    for (let index = 0; index < 50_000; index += 1) memory.set(`s${index}`, { at: index }, index);
    // 50,000 steps at 10 µs would take 500 ms; this takes a few ms (an O(n) step would fail on any machine).
    expect(performance.now() - started).toBeLessThan(150);
    expect(memory.get(`s${49_999}`)).toBeDefined();
    expect(memory.get(`s${50_000 - LATE_KILL_MEMORY_ENTRIES - 1}`)).toBeUndefined();
  });
});

describe("HostFactsBook", () => {
  /** The end event of call `toolCallId`, as the host's pipeline reports it: answered in full on thread 3. */
  const ended = (toolCallId: string) =>
    ({ toolCallId, outcome: "result", queueWaitMs: 1, runMs: 2, threadKilled: false, threadId: 3 }) as unknown as CallEndEvent;

  test("a job its durable record refused is forgotten: the next job of its call id still answers with its facts", () => {
    const book = new HostFactsBook(() => {});
    const refused = book.begin("job-1", "call-1");
    book.abandon("call-1");
    const next = book.begin("job-2", "call-1");
    book.hooks.onCallEnd?.(ended("call-1"));
    // Left counted, the refused job would make call-1 "shared by several jobs": no facts for job-2.
    expect(book.end(next, "call-1")).toEqual({ waitMs: 1, runMs: 2, killed: false, threadId: 3 });
    expect(refused.facts).toBeUndefined();
  });

  test("a job that ended no longer runs: the next job of its call id answers with its facts", () => {
    const book = new HostFactsBook(() => {});
    book.end(book.begin("job-1", "call-1"), "call-1");
    const next = book.begin("job-2", "call-1");
    book.hooks.onCallEnd?.(ended("call-1"));
    expect(book.end(next, "call-1")).toEqual({ waitMs: 1, runMs: 2, killed: false, threadId: 3 });
  });

  test("two jobs of one call id running at once share it: neither is told the other's facts", () => {
    const book = new HostFactsBook(() => {});
    const first = book.begin("job-1", "call-1");
    const second = book.begin("job-2", "call-1");
    book.hooks.onCallEnd?.(ended("call-1"));
    expect(book.end(first, "call-1")).toBeUndefined();
    expect(book.end(second, "call-1")).toBeUndefined();
  });
});
