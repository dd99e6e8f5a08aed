// Every worker thread, the moment it is created (Node's process 'worker' event). Piscina tells
// of a thread only once it is ready, and a thread that dies while it boots never is: a pool
// hears of its threads here, so it sees each one's exit whenever it comes. One process
// listener for all pools; each pool keeps only the threads its Piscina holds.
import type { Worker } from "node:worker_threads";
import { SetPrototypeAdd, SetPrototypeDelete, SetPrototypeGetSize, setValueStepper } from "../contract/primordials.js";

type Watcher = (worker: Worker) => void;

const watchers = new Set<Watcher>();

function onWorker(worker: Worker): void {
  const next = setValueStepper(watchers);
  for (let step = next(); step.done !== true; step = next()) step.value(worker);
}

/** Calls `watcher` with each worker thread created from now on; returns the way to stop. */
export function watchNewThreads(watcher: Watcher): () => void {
  if (SetPrototypeGetSize(watchers) === 0) process.on("worker", onWorker);
  SetPrototypeAdd(watchers, watcher);
  return () => {
    if (SetPrototypeDelete(watchers, watcher) && SetPrototypeGetSize(watchers) === 0) process.off("worker", onWorker);
  };
}
