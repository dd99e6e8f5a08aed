// The floor: a bare node:worker_threads thread answering on one MessagePort (no pool, no queue).
import { type MessagePort, workerData } from "node:worker_threads";
import { type PeerTask, runPeerTask } from "./task.js";

const port = (workerData as { port: MessagePort }).port;
port.on("message", (message: { id: number; task: PeerTask }) => {
  port.postMessage({ id: message.id, result: runPeerTask(message.task) });
});
