// The per-thread MessagePort, both ends over a real MessageChannel: main → worker abort, and
// the worker → main per-task messages (the channel tool progress will be built on): each
// message reaches its own task's listener, traced through the async context, and nothing is
// delivered once the task settled.
import { MessageChannel } from "node:worker_threads";
import { describe, expect, test } from "vitest";
import type { WorkerTask } from "../../dist/src/worker/protocol.js";
import { RunningTask, runInTask, sendTaskMessage, useThreadPort } from "../../dist/src/worker/task-context.js";
import { TaskMessages, ThreadPort, WorkerPort } from "../../dist/src/worker/thread-port.js";

const turn = () => new Promise((resolve) => setTimeout(resolve, 20));

function connect() {
  const { port1, port2 } = new MessageChannel();
  const aborts: [number, string][] = [];
  const workerPort = new WorkerPort(port1, {
    abort(taskId, reason) {
      aborts.push([taskId, reason]);
      return true;
    },
  });
  const messages = new TaskMessages();
  const mainPort = new ThreadPort(port2, messages);
  return { aborts, messages, mainPort, workerPort, close: () => mainPort.close() };
}

describe("rule W2 — abort relay: the thread port, in both directions", () => {
  test("main → worker: abort(taskId, reason) reaches the worker's control", async () => {
    const { aborts, mainPort, close } = connect();
    mainPort.abort(12, "timeout");
    mainPort.abort(13, "abort");
    await turn();
    expect(aborts).toEqual([
      [12, "timeout"],
      [13, "abort"],
    ]);
    close();
  });

  test("worker → main: a task's messages reach that task's listener only, in order, until it is forgotten", async () => {
    const { messages, workerPort, close } = connect();
    const seen: [string, unknown][] = [];
    messages.listen(1, (message) => seen.push(["task 1", message]));
    messages.listen(2, (message) => seen.push(["task 2", message]));
    workerPort.send(1, { step: 1 });
    workerPort.send(2, { step: "a" });
    workerPort.send(1, { step: 2 });
    workerPort.send(3, "nobody listens");
    await turn();
    messages.forget(1);
    workerPort.send(1, { step: 3 });
    await turn();
    expect(seen).toEqual([
      ["task 1", { step: 1 }],
      ["task 2", { step: "a" }],
      ["task 1", { step: 2 }],
    ]);
    close();
  });

  test("sendTaskMessage speaks for the task whose code calls it, and for no task once it settled", async () => {
    const { messages, workerPort, close } = connect();
    useThreadPort(workerPort);
    const seen: [number, unknown][] = [];
    messages.listen(21, (message) => seen.push([21, message]));
    messages.listen(22, (message) => seen.push([22, message]));
    const task = (taskId: number, name: string): WorkerTask => [taskId, 0, 0, name, `call-${name}`, 0.5, false];
    const first = new RunningTask(task(21, "tool-a"), undefined, undefined);
    const second = new RunningTask(task(22, "tool-b"), undefined, undefined);
    let late: Promise<boolean> | undefined;
    const sentInside = runInTask(first, (running) => {
      late = new Promise((resolve) => setTimeout(() => resolve(sendTaskMessage("late, from task 21")), 10));
      return sendTaskMessage({ progress: running.args });
    });
    first.settled = true; // task 21 is done; task 22 runs while 21's timer fires
    const sentBySecond = runInTask(second, () => sendTaskMessage("from task 22"));
    expect(sentInside).toBe(true);
    expect(sentBySecond).toBe(true);
    expect(await late).toBe(false);
    expect(sendTaskMessage("outside any task")).toBe(false);
    await turn();
    expect(seen).toEqual([
      [21, { progress: 0.5 }],
      [22, "from task 22"],
    ]);
    close();
  });
});
