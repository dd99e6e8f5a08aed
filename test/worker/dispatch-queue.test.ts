// The executor's own queue (docs/contract.md, rule W2 — abort relay: a call aborted while
// queued never reaches a worker; rule W5 — faults are results: heap flat under load). A queue
// that never empties must still compact (else ~3 KB per call): its memory follows the calls
// waiting, never the calls ever queued.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { WorkerToolExecutor } from "toolgate/worker";
import { describe, expect, test } from "vitest";
import { DispatchQueue } from "../../dist/src/worker/dispatch-queue.js";
import { call, fixture, neverAborted } from "../support/helpers.js";

const entry = (n: number) => ({ waiting: false, n });

describe("rule W2 — abort relay: the DispatchQueue skips cancelled calls and stays bounded", () => {
  test("FIFO, with unshift putting a call first again", () => {
    const queue = new DispatchQueue<ReturnType<typeof entry>>();
    for (let n = 0; n < 40; n += 1) queue.push(entry(n));
    const first = queue.shift();
    expect(first?.n).toBe(0);
    queue.unshift(first as ReturnType<typeof entry>);
    const order: number[] = [];
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) order.push(next.n);
    expect(order).toEqual(Array.from({ length: 40 }, (_, n) => n));
    expect(queue.size).toBe(0);
  });

  test("a queue that is never empty keeps a capacity bounded by the calls waiting", () => {
    const queue = new DispatchQueue<ReturnType<typeof entry>>();
    for (let n = 0; n < 10; n += 1) queue.push(entry(n));
    let outOfOrder = 0;
    for (let n = 10; n < 200_000; n += 1) {
      queue.push(entry(n));
      if (queue.shift()?.n !== n - 10) outOfOrder += 1;
    }
    expect(outOfOrder).toBe(0);
    expect(queue.size).toBe(10);
    expect(queue.capacity).toBeLessThanOrEqual(32);
  });

  test("cancelled calls are skipped, and compacted away once they outnumber the waiting ones", () => {
    const queue = new DispatchQueue<ReturnType<typeof entry>>();
    const entries = Array.from({ length: 1000 }, (_, n) => entry(n));
    for (const each of entries) queue.push(each);
    for (const each of entries) if (each.n % 10 !== 0) queue.cancel(each);
    expect(queue.size).toBe(100);
    expect(queue.capacity).toBeLessThanOrEqual(1024);
    queue.cancel(entries[1] as ReturnType<typeof entry>); // twice: no effect
    const order: number[] = [];
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) order.push(next.n);
    expect(order).toEqual(Array.from({ length: 100 }, (_, n) => n * 10));
    // A long-lived queue where callers abort while waiting never grows past its peak.
    for (let n = 0; n < 200_000; n += 1) {
      const waiting = entry(n);
      queue.push(waiting);
      queue.push(entry(-1));
      queue.cancel(waiting);
      queue.shift();
    }
    expect(queue.size).toBe(0);
    expect(queue.capacity).toBeLessThanOrEqual(1024);
  });
});

describe("rule W5 — faults are results: sustained load through the executor keeps the heap flat", () => {
  test("100,000 calls with the queue never empty keep the heap flat", { timeout: 120_000 }, async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const executor = await WorkerToolExecutor.create({ modules: [fixture("contract-tools")], minThreads: 1, maxThreads: 1 });
    try {
      const signal = neverAborted();
      const WINDOW = 32; // calls in flight: one in the pool, the others always waiting in the queue
      const TOTAL = 100_000 + WINDOW;
      let issued = 0;
      let before = 0;
      let after = 0;
      const lane = async (): Promise<void> => {
        while (issued < TOTAL) {
          const n = issued;
          issued += 1;
          // Measured while the load goes on (the queue is not empty here: the old queue only
          // compacted when it was).
          if (n === 20_000) {
            gc();
            before = process.memoryUsage().heapUsed;
          } else if (n === 100_000) {
            gc();
            after = process.memoryUsage().heapUsed;
          }
          const result = await executor.executeToolCall(call("echo", { n }, `c${n}`), signal);
          if (result.toolCallId !== `c${n}`) throw new Error(`call c${n} got ${result.toolCallId}`);
        }
      };
      await Promise.all(Array.from({ length: WINDOW }, lane));
      // Generous: the old queue kept every call it had ever held (about 90 MB over these 80,000 calls).
      expect(after - before).toBeLessThan(16 * 1024 * 1024);
    } finally {
      await executor.close();
    }
  });
});
