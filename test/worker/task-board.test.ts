// The task board's compare-exchange transitions (docs/contract.md, rule W3 — timeout and
// termination: the kill is bound to its task): whichever of "the worker
// finished" and "the main thread condemned it" comes first wins, exactly once, so a thread is
// terminated only while it still runs the very task its grace period was for.
import { describe, expect, test } from "vitest";
import { SLOT_DONE, SLOT_KILLED, SLOT_RUNNING, SLOT_STOPPED, TaskBoard } from "../../dist/src/worker/task-board.js";

function boards(): { main: TaskBoard; worker: TaskBoard } {
  const main = TaskBoard.create(2);
  return { main, worker: TaskBoard.attach(main.buffer) };
}

describe("rule W3 — timeout and termination: TaskBoard transitions", () => {
  test("the worker finishes first: the grace kill finds nothing to terminate", () => {
    const { main, worker } = boards();
    main.assign(1, 41);
    expect(worker.claim(1, 7)).toBe(true);
    expect(worker.release(1)).toBe(true);
    expect(main.condemn(1, 41)).toBe(0);
    expect(main.state(1)).toBe(SLOT_DONE);
  });

  test("the grace kill comes first: it names the thread, and the worker may not return", () => {
    const { main, worker } = boards();
    main.assign(0, 5);
    worker.claim(0, 9);
    expect(main.condemn(0, 5)).toBe(9);
    expect(worker.release(0)).toBe(false);
    expect(main.state(0)).toBe(SLOT_KILLED);
  });

  test("a grace timer of an older task never condemns the slot's next task", () => {
    const { main, worker } = boards();
    main.assign(0, 1);
    worker.claim(0, 3);
    worker.release(0);
    main.assign(0, 2);
    worker.claim(0, 3);
    expect(main.condemn(0, 1)).toBe(0);
    expect(main.state(0)).toBe(SLOT_RUNNING);
    expect(main.condemn(0, 2)).toBe(3);
  });

  test("a task stopped before any thread took it is never started", () => {
    const { main, worker } = boards();
    main.assign(1, 8);
    expect(main.stop(1)).toBe(true);
    expect(worker.claim(1, 4)).toBe(false);
    expect(main.state(1)).toBe(SLOT_STOPPED);
    // Stopping a running task does not stop it on the board: its signal and grace period do.
    main.assign(1, 9);
    worker.claim(1, 4);
    expect(main.stop(1)).toBe(false);
    expect(main.state(1)).toBe(SLOT_RUNNING);
  });
});
