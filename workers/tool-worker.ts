// The Piscina worker entry: runs a validated call's tool and the serializer, and returns
// an explicitly encoded outcome. Nothing here may throw at load time (Piscina would stop
// replacing workers); every failure of a call is encoded as that call's outcome.
import { threadId, workerData } from "node:worker_threads";
import { expose } from "comlink";
import { COURSE_TOOL_EXECUTION_FAILED, COURSE_TOOL_MAX_STRING_CODE_POINTS } from "../src/constants.js";
import { cutToCodePoints } from "../src/content.js";
import { addressedEndpoint, openControlChannel } from "../src/control-channel.js";
import type { CourseTool } from "../src/definition.js";
import { isNonRecoverableToolError } from "../src/errors.js";
import { describeFailure, readDataProperty } from "../src/failure.js";
import { errorContent } from "../src/results.js";
import { runTool } from "../src/run-tool.js";
import { importToolModule, registryOfModule } from "../src/tool-modules.js";
import {
  MAIN_ADDRESS,
  type StopReason,
  type ToolWorkerData,
  type WorkerControl,
  type WorkerOutcome,
  type WorkerTask,
  type WorkerWarmup,
  workerAddress,
} from "../src/worker-protocol.js";

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

const { controlChannel, modules: moduleUrls } = workerData as ToolWorkerData;

try {
  expose(control, addressedEndpoint(openControlChannel(controlChannel), workerAddress(threadId), MAIN_ADDRESS).endpoint);
} catch {
  // Without the channel, aborts still end in the grace-period kill; the thread stays usable.
}

/** Tool modules loaded on this thread, by index (a failed load stays failed, as in Node's loader). */
const modules = new Map<number, Promise<Map<string, CourseTool>>>();

function toolsOf(module: number): Promise<Map<string, CourseTool>> {
  let tools = modules.get(module);
  if (tools === undefined) {
    const url = moduleUrls[module] as string;
    tools = importToolModule(url).then((definitions) => {
      const registry = registryOfModule(url, definitions);
      return new Map(registry.names().map((name) => [name, registry.get(name) as CourseTool]));
    });
    modules.set(module, tools);
  }
  return tools;
}

// Import every tool module before this thread reports ready (Piscina awaits the entry
// module), so no call pays for module loading. A failure is kept for the calls to report.
await Promise.allSettled(moduleUrls.map((_url, index) => toolsOf(index)));

export default async function runToolTask(task: WorkerTask | WorkerWarmup): Promise<WorkerOutcome> {
  if (task.kind === "warmup") return { kind: "warm" };
  const controller = new AbortController();
  running.set(task.taskId, controller);
  try {
    const tool = (await toolsOf(task.module)).get(task.toolName);
    if (tool === undefined) {
      return failed(`tool "${task.toolName}" is not defined by ${moduleUrls[task.module]} in the worker thread`);
    }
    const context = Object.freeze({ signal: controller.signal, toolCallId: task.toolCallId });
    const outcome = await runTool(tool, task.args, context);
    return { kind: "result", content: outcome.content, isError: outcome.isError };
  } catch (error) {
    if (controller.signal.aborted) return { kind: "aborted" };
    if (isNonRecoverableToolError(error)) {
      const message = readDataProperty(error, "message");
      const text = typeof message === "string" ? message : "";
      return { kind: "fatal", message: cutToCodePoints(text, COURSE_TOOL_MAX_STRING_CODE_POINTS).text };
    }
    return failed(describeFailure(error).text);
  } finally {
    running.delete(task.taskId);
  }
}

function failed(text: string): WorkerOutcome {
  return { kind: "result", content: errorContent(COURSE_TOOL_EXECUTION_FAILED, { text, cut: false }), isError: true };
}
