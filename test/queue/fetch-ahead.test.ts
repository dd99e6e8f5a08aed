// src/queue/fetch-ahead.ts on its own: when the host arms a fetch slot ahead of its threads, and
// the thread slots a job taken ahead waits for (never more jobs past them than threads).
// docs/queue.md — Guarantees (a job is taken ahead of a thread only while jobs keep waiting).
import { describe, expect, test } from "vitest";
import { FetchAhead, ThreadSlots } from "../../src/queue/fetch-ahead.js";

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

function armed(threads: number) {
  const set: number[] = [];
  return { ahead: new FetchAhead(threads, (concurrency) => set.push(concurrency)), set };
}

describe("FetchAhead", () => {
  test("a main-loop fetch (a fresh token) never arms; a completion's handover after a short run arms 2 x threads; an empty fetch disarms", async () => {
    const { ahead, set } = armed(3);
    ahead.arrived("w:0");
    ahead.arrived(undefined);
    expect(set).toEqual([]);
    ahead.finished("w:0", 10);
    ahead.arrived("w:0");
    expect(set).toEqual([6]);
    expect(ahead.armed).toBe(true);
    // The token was used up: the same token again (a job BullMQ did not hand over) changes nothing.
    ahead.arrived("w:0");
    ahead.drained();
    expect(set).toEqual([6, 3]);
    ahead.drained();
    expect(set).toEqual([6, 3]);
  });

  test("a run of FETCH_WAIT_MS or more disarms, and its handover does not arm", () => {
    const { ahead, set } = armed(1);
    ahead.finished("w:1", 1);
    ahead.arrived("w:1");
    ahead.finished("w:1", 500);
    ahead.arrived("w:1");
    expect(set).toEqual([2, 1]);
  });

  test("a handover reported in the turn of an empty fetch does not arm (BullMQ may be drained); the next turn's does", async () => {
    const { ahead, set } = armed(1);
    ahead.finished("w:2", 1);
    ahead.finished("w:3", 1);
    ahead.drained();
    ahead.arrived("w:2");
    expect(set).toEqual([]);
    await nextTurn();
    ahead.arrived("w:3");
    expect(set).toEqual([2]);
  });

  test("the tokens kept are bounded (4 per thread): the oldest go first", () => {
    const { ahead, set } = armed(1);
    for (let n = 0; n < 5; n += 1) ahead.finished(`w:${n}`, 1);
    ahead.arrived("w:0");
    expect(set).toEqual([]);
    ahead.arrived("w:1");
    expect(set).toEqual([2]);
  });
});

describe("ThreadSlots", () => {
  test("never more holders than slots; waiters get a slot in order as holders give theirs back", async () => {
    const slots = new ThreadSlots(2);
    const order: string[] = [];
    const take = (name: string) =>
      Promise.resolve(slots.take(new AbortController().signal)).then((got) => {
        order.push(`${name}:${got}`);
        return got;
      });
    const [a, b] = [take("a"), take("b")];
    expect(await a).toBe(true);
    expect(await b).toBe(true);
    const c = take("c");
    const d = take("d");
    await nextTurn();
    expect(order).toEqual(["a:true", "b:true"]);
    slots.give();
    await c;
    await nextTurn();
    expect(order).toEqual(["a:true", "b:true", "c:true"]);
    slots.give();
    await d;
    slots.give();
    slots.give();
    // Both given back: two free again, no more.
    const [e, f] = [take("e"), take("f")];
    await Promise.all([e, f]);
    const g = take("g");
    await nextTurn();
    expect(order).toEqual(["a:true", "b:true", "c:true", "d:true", "e:true", "f:true"]);
    slots.give();
    expect(await g).toBe(true);
  });

  test("an abort while waiting answers false and leaves the queue (the slot goes to the next waiter); an aborted signal gets none", async () => {
    const slots = new ThreadSlots(1);
    expect(await slots.take(new AbortController().signal)).toBe(true);
    const stopped = new AbortController();
    const first = slots.take(stopped.signal);
    const second = slots.take(new AbortController().signal);
    stopped.abort();
    expect(await first).toBe(false);
    slots.give();
    expect(await second).toBe(true);
    expect(await slots.take(AbortSignal.abort())).toBe(false);
  });

  test("answers at once only when it knows: a slot free or the signal aborted; a slot given to a waiter is not taken by a later job", async () => {
    const slots = new ThreadSlots(1);
    expect(slots.take(new AbortController().signal)).toBe(true);
    expect(slots.take(AbortSignal.abort())).toBe(false);
    const waiter = slots.take(new AbortController().signal);
    expect(waiter).toBeInstanceOf(Promise);
    // The slot goes to the waiter as it is given back, before the waiter's continuation runs:
    // a job arriving in between finds none free (its answer is a promise, not true).
    slots.give();
    const later = slots.take(new AbortController().signal);
    expect(later).toBeInstanceOf(Promise);
    expect(await waiter).toBe(true);
    let laterGot: boolean | undefined;
    void (later as Promise<boolean>).then((got) => {
      laterGot = got;
    });
    await nextTurn();
    expect(laterGot).toBeUndefined();
    slots.give();
    expect(await later).toBe(true);
    // Given back with nobody waiting: free again, and answered at once.
    slots.give();
    expect(slots.take(new AbortController().signal)).toBe(true);
  });
});
