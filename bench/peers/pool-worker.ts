// Piscina's and tinypool's worker: both call the module's default export with the task.
import { type PeerTask, runPeerTask } from "./task.js";

export default function run(task: PeerTask): unknown {
  return runPeerTask(task);
}
