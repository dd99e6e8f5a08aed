// The Piscina worker entry: runs a validated call's tool and the serializer, and returns
// an explicitly encoded outcome. Nothing here may throw at load time (Piscina would stop
// replacing workers); every failure of a call is encoded as that call's outcome.
import { types } from "node:util";
import { threadId, workerData } from "node:worker_threads";
import { expose } from "comlink";
import { COURSE_TOOL_EXECUTION_FAILED, COURSE_TOOL_MAX_STRING_CODE_POINTS } from "../src/contract/constants.js";
import { cutToCodePoints } from "../src/contract/content.js";
import type { CourseTool } from "../src/contract/definition.js";
import { isNonRecoverableToolError } from "../src/contract/errors.js";
import { describeFailure, readDataProperty } from "../src/contract/failure.js";
import { errorContent } from "../src/contract/results.js";
import { runTool, type ToolOutcome } from "../src/executor/run-tool.js";
import { addressedEndpoint, openControlChannel } from "../src/worker/control-channel.js";
import {
  MAIN_ADDRESS,
  type StopReason,
  type ToolWorkerData,
  type WorkerControl,
  type WorkerOutcome,
  type WorkerTask,
  type WorkerWarmup,
  workerAddress,
} from "../src/worker/protocol.js";
import { TaskBoard } from "../src/worker/task-board.js";
import { importToolModule, registryOfModule } from "../src/worker/tool-modules.js";

const isPromise = types.isPromise;

/** Tasks running on this thread, by id, so the main thread can fire their signals. */
const running = new Map<number, AbortController>();

const control: WorkerControl = {
  stop(taskId: number, reason: StopReason): boolean {
    const controller = running.get(taskId);
    if (controller === undefined) return false;
    const message = reason === "timeout" ? "The tool call timed out" : "The tool call was aborted";
    controller.abort(new DOMException(message, reason === "timeout" ? "TimeoutError" : "AbortError"));
    return true;
  },
};

const { controlChannel, modules: moduleUrls, board: boardMemory } = workerData as ToolWorkerData;
const board = TaskBoard.attach(boardMemory);

try {
  expose(control, addressedEndpoint(openControlChannel(controlChannel), workerAddress(threadId), MAIN_ADDRESS).endpoint);
} catch {
  // Without the channel, aborts still end in the grace-period kill; the thread stays usable.
}

/** Tool modules of this thread, by index: loading (or failed: kept, as Node's loader keeps it)... */
const loading = new Map<number, Promise<Map<string, CourseTool>>>();
/** ...and loaded, for the common case to skip an await. */
const loaded = new Map<number, Map<string, CourseTool>>();

function toolsOf(module: number): Promise<Map<string, CourseTool>> {
  let tools = loading.get(module);
  if (tools === undefined) {
    const url = moduleUrls[module] as string;
    tools = importToolModule(url).then((definitions) => {
      const registry = registryOfModule(url, definitions);
      const byName = new Map(registry.names().map((name) => [name, registry.get(name) as CourseTool]));
      loaded.set(module, byName);
      return byName;
    });
    loading.set(module, tools);
  }
  return tools;
}

// Import every tool module before this thread reports ready (Piscina awaits the entry
// module), so no call pays for module loading. A failure is kept for the calls to report.
await Promise.allSettled(moduleUrls.map((_url, index) => toolsOf(index)));

/**
 * Runs one task. Synchronous when the tool returns a plain value (Piscina awaits either way,
 * and every skipped await is a microtask less on each call's round trip).
 */
export default function runToolTask(task: WorkerTask | WorkerWarmup): WorkerOutcome | Promise<WorkerOutcome> {
  if (task.kind === "warmup") return WARM;
  const tools = loaded.get(task.module);
  if (tools === undefined) {
    // Only a module that failed to load gets here (every module is imported before ready).
    return toolsOf(task.module).then(
      () => runToolTask(task),
      (error: unknown) => failed(describeFailure(error).text),
    );
  }
  if (!board.claim(task.slot, threadId)) return ABORTED; // stopped while it waited for this thread
  const tool = tools.get(task.toolName);
  if (tool === undefined) return failed(`tool "${task.toolName}" is not defined by ${moduleUrls[task.module]} in the worker thread`);
  const controller = new AbortController();
  running.set(task.taskId, controller);
  let outcome: ReturnType<typeof runTool>;
  try {
    outcome = runTool(tool, task.args, Object.freeze({ signal: controller.signal, toolCallId: task.toolCallId }));
  } catch (error) {
    running.delete(task.taskId);
    return encodeFailure(error, controller.signal);
  }
  if (!isPromise(outcome)) {
    running.delete(task.taskId);
    return encodeOutcome(outcome as ToolOutcome);
  }
  return (outcome as Promise<ToolOutcome>).then(
    (settled) => {
      running.delete(task.taskId);
      return encodeOutcome(settled);
    },
    (error: unknown) => {
      running.delete(task.taskId);
      return encodeFailure(error, controller.signal);
    },
  );
}

const WARM: WorkerOutcome = { kind: "warm" };
const ABORTED: WorkerOutcome = { kind: "aborted" };

function encodeOutcome(outcome: ToolOutcome): WorkerOutcome {
  return { kind: "result", content: outcome.content, isError: outcome.isError };
}

/** A rejection of runTool: the abort, a NonRecoverableToolError, or (defensively) anything else. */
function encodeFailure(error: unknown, signal: AbortSignal): WorkerOutcome {
  if (signal.aborted) return ABORTED;
  if (isNonRecoverableToolError(error)) {
    const message = readDataProperty(error, "message");
    const text = typeof message === "string" ? message : "";
    return { kind: "fatal", message: cutToCodePoints(text, COURSE_TOOL_MAX_STRING_CODE_POINTS).text };
  }
  return failed(describeFailure(error).text);
}

function failed(text: string): WorkerOutcome {
  return { kind: "result", content: errorContent(COURSE_TOOL_EXECUTION_FAILED, { text, cut: false }), isError: true };
}
