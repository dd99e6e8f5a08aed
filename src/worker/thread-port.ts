// One persistent MessagePort per pool thread, with comlink on both ends. The worker makes the
// channel as it starts and hands one end to the main thread once (`ThreadHello`, over
// Piscina's `parentPort` messages); nothing is created per call, and the port is unref'd so
// it never keeps a process or a thread alive.
//
//   main → worker  `abort(taskId, reason)`: fires the signal the running tool sees. Not over
//                  the pool's own port: Piscina reads that only for tasks, and it carries no
//                  call; a comlink call, whose reply (was the task running here) nobody
//                  awaits: a spinning or dead thread never answers, the grace kill covers it.
//   worker → main  `taskMessage(taskId, message)`: a message for one task (progress, later),
//                  delivered to that task's listener; nothing is delivered once it settled.
//                  Its own message, not part of the task's reply: it comes while the tool runs.
// docs/contract.md: rule W2 — abort relay.
import type { MessagePort } from "node:worker_threads";
import { type Endpoint, expose, type Remote, wrap } from "comlink";
import { MapPrototypeDelete, MapPrototypeGet, MapPrototypeSet, PromisePrototypeThen } from "../contract/primordials.js";
import type { StopReason } from "./protocol.js";

/** What a worker exposes to the main thread. */
export interface WorkerControl {
  /** Fires the worker-side signal of `taskId`; true when this thread was running it. */
  abort(taskId: number, reason: StopReason): boolean;
}

/** What the main thread exposes to a worker. */
export interface MainControl {
  /** A message for task `taskId` (dropped when the task has no listener: settled, or nobody listens). */
  taskMessage(taskId: number, message: unknown): void;
}

/** Receives the messages a worker sends for one task, in order. */
export type TaskMessageListener = (message: unknown) => void;

/** The main thread's listeners, by task id, shared by every thread's port. */
export class TaskMessages {
  readonly #listeners = new Map<number, TaskMessageListener>();

  /** Listens to task `taskId` until `forget(taskId)` (the dispatch calls it when the task settles). */
  listen(taskId: number, listener: TaskMessageListener): void {
    MapPrototypeSet(this.#listeners, taskId, listener);
  }

  forget(taskId: number): void {
    MapPrototypeDelete(this.#listeners, taskId);
  }

  deliver(taskId: number, message: unknown): void {
    const listener = MapPrototypeGet(this.#listeners, taskId);
    if (listener !== undefined) listener(message);
  }
}

/** The main thread's end of one thread's port. */
export class ThreadPort {
  readonly #port: MessagePort;
  readonly #worker: Remote<WorkerControl>;

  constructor(port: MessagePort, messages: TaskMessages) {
    this.#port = port;
    const control: MainControl = {
      taskMessage: (taskId, message) => {
        if (typeof taskId === "number") messages.deliver(taskId, message);
      },
    };
    expose(control, asEndpoint(port));
    this.#worker = wrap<WorkerControl>(asEndpoint(port));
    port.unref();
  }

  /**
   * Asks the thread to fire the signal of `taskId`. Fire and forget: a spinning or dead thread
   * never answers, and the grace-period kill covers it.
   */
  abort(taskId: number, reason: StopReason): void {
    void PromisePrototypeThen(this.#worker.abort(taskId, reason) as Promise<boolean>, undefined, ignore);
  }

  close(): void {
    this.#port.close();
  }
}

/** The worker's end: exposes `control`, and sends task messages to the main thread. */
export class WorkerPort {
  readonly #main: Remote<MainControl>;

  constructor(port: MessagePort, control: WorkerControl) {
    expose(control, asEndpoint(port));
    this.#main = wrap<MainControl>(asEndpoint(port));
    port.unref();
  }

  /** Sends `message` for task `taskId` (the caller checks the task has not settled). */
  send(taskId: number, message: unknown): void {
    void PromisePrototypeThen(this.#main.taskMessage(taskId, message) as Promise<void>, undefined, ignore);
  }
}

/**
 * comlink's Endpoint over the port's Node-style listeners (`port.on("message", data => …)`),
 * never its EventTarget face. A Node MessagePort builds a MessageEvent only for EventTarget
 * listeners, and since Node 22.3 that class comes from undici, loaded on the first such event
 * in each thread: some 85 internal modules (http, tls, crypto, http2, zlib, web streams),
 * 40–300 ms of synchronous work. The first message a pool thread gets is usually an abort, so
 * the tool saw its signal only after that load, often after its grace period had ended and its
 * thread was killed. Node-style listeners get the message's data alone: nothing is loaded.
 * comlink reads only `data` from an event, and adds its two listeners here, once per port.
 */
function asEndpoint(port: MessagePort): Endpoint {
  const relays = new Map<unknown, (data: unknown) => void>();
  return {
    postMessage: (message: unknown, transfer?: Parameters<Endpoint["postMessage"]>[1]) => port.postMessage(message, transfer as never),
    addEventListener: (_type: string, listener: unknown) => {
      const relay = (data: unknown): void => (listener as (event: { data: unknown }) => void)({ data });
      MapPrototypeSet(relays, listener, relay);
      port.on("message", relay);
    },
    removeEventListener: (_type: string, listener: unknown) => {
      const relay = MapPrototypeGet(relays, listener);
      if (relay === undefined) return;
      MapPrototypeDelete(relays, listener);
      port.off("message", relay);
    },
    start: () => port.start(),
  };
}

function ignore(): void {}
