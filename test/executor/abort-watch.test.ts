// watchAbort: the one shared abort listener per signal and the calls it tells (a linked list:
// a node per subscription, unlinked by its unsubscribe).
// docs/contract.md: rule 8 — abort wins (one shared listener per run signal).
import { describe, expect, test } from "vitest";
import { AbortWatch, startWatching, stopWatching, watchAbort } from "../../dist/src/executor/signal.js";

describe("rule 8 — abort wins: watchAbort tells every call still watching, once", () => {
  test("callbacks run in the order they subscribed; an unsubscribed one (first, middle or last) never runs", () => {
    const controller = new AbortController();
    const seen: string[] = [];
    const unwatch: Record<string, () => void> = {};
    for (const name of ["a", "b", "c", "d", "e"]) unwatch[name] = watchAbort(controller.signal, () => seen.push(name));
    unwatch.a?.();
    unwatch.c?.();
    unwatch.e?.();
    unwatch.c?.(); // a second unsubscribe changes nothing
    const late = watchAbort(controller.signal, () => seen.push("f"));
    controller.abort();
    controller.abort();
    expect(seen).toEqual(["b", "d", "f"]);
    late(); // after the abort: harmless
    expect(seen).toEqual(["b", "d", "f"]);
  });

  test("a signal every call stopped watching is watched again from empty", () => {
    const controller = new AbortController();
    const seen: number[] = [];
    for (let round = 0; round < 3; round += 1) watchAbort(controller.signal, () => seen.push(round))();
    watchAbort(controller.signal, () => seen.push(9));
    controller.abort();
    expect(seen).toEqual([9]);
  });

  test("every callback subscribed when the signal aborted runs, even one an earlier callback unsubscribes", () => {
    const controller = new AbortController();
    const seen: string[] = [];
    let unwatchSecond: () => void = () => {};
    watchAbort(controller.signal, () => {
      seen.push("first");
      unwatchSecond();
      watchAbort(controller.signal, () => seen.push("subscribed during the abort"));
    });
    unwatchSecond = watchAbort(controller.signal, () => seen.push("second"));
    controller.abort();
    expect(seen).toEqual(["first", "second"]);
  });

  test("signals are watched apart", () => {
    const one = new AbortController();
    const two = new AbortController();
    const seen: string[] = [];
    watchAbort(one.signal, () => seen.push("one"));
    const unwatchTwo = watchAbort(two.signal, () => seen.push("two"));
    watchAbort(two.signal, () => seen.push("two, still"));
    unwatchTwo();
    two.abort();
    expect(seen).toEqual(["two, still"]);
    one.abort();
    expect(seen).toEqual(["two, still", "one"]);
  });

  test("an abort event dispatched on a signal that has not aborted tells no one; the abort itself tells each once", () => {
    const controller = new AbortController();
    const seen: string[] = [];
    watchAbort(controller.signal, () => seen.push("callback"));
    controller.signal.dispatchEvent(new Event("abort"));
    expect(seen).toEqual([]);
    controller.abort();
    controller.signal.dispatchEvent(new Event("abort")); // after the abort: told already
    expect(seen).toEqual(["callback"]);
  });

  test("an object extending AbortWatch is linked itself, and told through onAbort", () => {
    const controller = new AbortController();
    const seen: string[] = [];
    class Call extends AbortWatch {
      constructor(readonly name: string) {
        super();
      }
      onAbort(): void {
        seen.push(this.name);
      }
    }
    const first = new Call("first");
    const second = new Call("second");
    startWatching(controller.signal, first);
    startWatching(controller.signal, second);
    watchAbort(controller.signal, () => seen.push("callback"));
    stopWatching(first);
    stopWatching(first); // a second stop changes nothing
    expect(first.list).toBeUndefined();
    controller.abort();
    expect(seen).toEqual(["second", "callback"]);
    expect(second.list).toBeUndefined(); // told, and unlinked
  });
});
