// The main thread's side of the control channel: one comlink proxy per live worker thread,
// used to fire the worker-side signal of a task that was aborted or timed out.
import type { BroadcastChannel } from "node:worker_threads";
import { type Remote, wrap } from "comlink";
import { type AddressedEndpoint, addressedEndpoint, openControlChannel } from "./control-channel.js";
import { MAIN_ADDRESS, type StopReason, type WorkerControl, workerAddress } from "./protocol.js";

interface WorkerLink {
  readonly link: AddressedEndpoint;
  readonly remote: Remote<WorkerControl>;
}

export class PoolControl {
  readonly #channel: BroadcastChannel;
  readonly #workers = new Map<number, WorkerLink>();

  constructor(channelName: string) {
    this.#channel = openControlChannel(channelName);
  }

  /**
   * Asks every live thread to stop `taskId` (the main thread does not know which thread
   * runs it; only that one acts). Fire and forget: a thread that is spinning or dead never
   * answers, and the caller's grace-period kill covers that case.
   */
  stop(threadIds: readonly number[], taskId: number, reason: StopReason): void {
    this.#forgetExcept(threadIds);
    for (const threadId of threadIds) {
      void this.#remoteFor(threadId).stop(taskId, reason).then(undefined, ignore);
    }
  }

  close(): void {
    this.#forgetExcept([]);
    this.#channel.close();
  }

  #remoteFor(threadId: number): Remote<WorkerControl> {
    let worker = this.#workers.get(threadId);
    if (worker === undefined) {
      const link = addressedEndpoint(this.#channel, MAIN_ADDRESS, workerAddress(threadId));
      worker = { link, remote: wrap<WorkerControl>(link.endpoint) };
      this.#workers.set(threadId, worker);
    }
    return worker.remote;
  }

  /** Drops the links of threads that are gone (replaced after a crash, or idled out). */
  #forgetExcept(threadIds: readonly number[]): void {
    for (const [threadId, worker] of this.#workers) {
      if (!threadIds.includes(threadId)) {
        worker.link.detach();
        this.#workers.delete(threadId);
      }
    }
  }
}

function ignore(): void {}
