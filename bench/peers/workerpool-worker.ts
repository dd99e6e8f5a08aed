// workerpool's worker: registers the task function by name.
import workerpool from "workerpool";
import { runPeerTask } from "./task.js";

workerpool.worker({ run: runPeerTask });
