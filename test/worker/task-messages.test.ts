// The worker → main per-task channel end to end, through a real pool thread and its port:
// a tool's messages reach its own task's listener; a late message of a finished task is
// refused in the worker and reaches no one on the main thread.
import { describe, expect, test } from "vitest";
import { DEFAULT_ATTACHMENT_BUDGETS, DEFAULT_OUTPUT_BUDGETS } from "../../dist/src/contract/budgets.js";
import { resolveOptions } from "../../dist/src/worker/options.js";
import type { WorkerTask } from "../../dist/src/worker/protocol.js";
import { TaskBoard } from "../../dist/src/worker/task-board.js";
import { WorkerPool } from "../../dist/src/worker/worker-pool.js";
import { fixture } from "../support/helpers.js";

const MODULE = fixture("worker-messages").href;
const turn = () => new Promise((resolve) => setTimeout(resolve, 30));

describe("docs/worker.md — Worker → main: per-task messages, over a real pool thread and its port", () => {
  test("a running tool's messages reach its task's listener, in order; nothing comes after it finished", async () => {
    const board = TaskBoard.create(1);
    const pool = new WorkerPool({
      options: resolveOptions({ modules: [MODULE], minThreads: 1, maxThreads: 1 }),
      modules: { urls: [MODULE], hasSetup: false },
      board,
      outputBudgets: DEFAULT_OUTPUT_BUDGETS,
      attachmentBudgets: DEFAULT_ATTACHMENT_BUDGETS,
    });
    try {
      await pool.started;
      const seen: [number, unknown][] = [];
      pool.messages.listen(7, (message) => seen.push([7, message]));
      pool.messages.listen(8, (message) => seen.push([8, message]));
      const task = (taskId: number, toolName: string, args: Record<string, unknown>) => {
        board.assign(0, taskId);
        const work: WorkerTask = [taskId, 0, 0, toolName, `call-${taskId}`, args, false];
        return pool.run(work);
      };
      const reported = await task(7, "reports", { steps: 3 });
      // A plain success comes back as its bare content (WorkerReply).
      expect(reported).toBe("reported");
      // Task 8 runs on the same thread while task 7's late timer fires.
      const late = await task(8, "lateSendAccepted", {});
      expect(JSON.parse(late as string)).toEqual({ lateSendAccepted: false });
      await turn();
      expect(seen).toEqual([
        [7, { step: 1 }],
        [7, { step: 2 }],
        [7, { step: 3 }],
      ]);
    } finally {
      await pool.destroy();
    }
  });
});
