// The Piscina worker entry: runs a validated call's tool and the serializer, and returns an
// explicitly encoded outcome (attachments' bytes moved, not copied). At start it hands its
// thread port to the main thread, imports the loader if there is one, loads the tool modules
// (each within moduleLoadTimeoutMs, then its setup() within setupTimeoutMs) and reports how that went. Nothing here may
// throw at load time (Piscina would stop replacing workers); every failure of a call is
// encoded as that call's outcome, and a fault no running task caused retires the thread.
// docs/contract.md: rule W1 — tool modules, rule W2 — abort relay, rule W5 — faults are results (and rules 7–12 through runTool).
import { MessageChannel, parentPort, threadId, workerData } from "node:worker_threads";
import {
  COURSE_TOOL_EXECUTION_FAILED,
  COURSE_TOOL_MAX_STRING_CODE_POINTS,
  COURSE_TOOL_OUTPUT_SERIALIZATION_FAILED,
} from "../src/contract/constants.js";
import { isNonRecoverableToolError } from "../src/contract/errors.js";
import {
  isPromise,
  MapPrototypeDelete,
  MapPrototypeGet,
  MapPrototypeSet,
  NativePromise,
  ObjectHasOwn,
  PromisePrototypeThen,
} from "../src/contract/primordials.js";
import { errorContent } from "../src/contract/results.js";
import { cutToCodePoints } from "../src/contract/serialize.js";
import type { CourseTool } from "../src/contract/tools.js";
import { describeFailure, readDataProperty } from "../src/contract/untrusted.js";
import { runTool, type ToolOutcome } from "../src/executor/run-tool.js";
import { moveAttachments } from "../src/worker/attachment-move.js";
import type {
  ThreadHello,
  ThreadLoaded,
  ToolWorkerData,
  WireAttachment,
  WorkerOutcome,
  WorkerReply,
  WorkerTask,
  WorkerWarmup,
} from "../src/worker/protocol.js";
import { TaskBoard } from "../src/worker/task-board.js";
import { RunningTask, runInTask, tracedTask, useThreadPort } from "../src/worker/task-context.js";
import { WorkerPort } from "../src/worker/thread-port.js";
import { importLoader, loadModuleInWorker, unusableModule, type WorkerModule } from "../src/worker/thread-setup.js";
import { moduleFileName } from "../src/worker/tool-modules.js";

const {
  modules: moduleUrls,
  board: boardMemory,
  moduleLoadTimeoutMs,
  setupTimeoutMs,
  loader,
  outputBudgets,
  attachmentBudgets,
} = workerData as ToolWorkerData;

/** runTool within the executor's output and attachment budgets (a tool's own override them), with the task's signal made on first read. */
function runWithinBudgets(tool: CourseTool, args: unknown, task: RunningTask): ToolOutcome | Promise<ToolOutcome> {
  return runTool(tool, args, task.context, outputBudgets, task, attachmentBudgets);
}
const board = TaskBoard.attach(boardMemory);

/** Tasks this thread has started and not finished, by id (the abort RPC looks them up). */
const running = new Map<number, RunningTask>();
/** The task whose outcome Piscina is waiting for (at most one: one task per thread). */
let active: RunningTask | undefined;
/** A fault this thread's running task did not cause: finish the task, then let the thread go. */
let retiring = false;

// The thread port, made once, before anything can fail: the main thread's abort reaches us
// even while the modules load.
const channel = new MessageChannel();
useThreadPort(
  new WorkerPort(channel.port1, {
    abort(taskId, reason) {
      const task = MapPrototypeGet(running, taskId);
      if (task === undefined) return false;
      task.abort(reason);
      return true;
    },
  }),
);
parentPort?.postMessage({ toolgateThreadPort: true, threadId, port: channel.port2 } satisfies ThreadHello, [channel.port2]);

// A fault traced to the running task (or not traceable at all while it runs) is that task's;
// one traced to a finished task, or between tasks, is not: the running task gets its own
// outcome and the thread is replaced after it. Either way the thread does not die mid-call.
function onFault(error: unknown): void {
  retiring = true;
  const owner = tracedTask();
  if (active !== undefined && (owner === undefined || owner === active)) active.fault?.(error);
}
process.on("uncaughtException", onFault);
process.on("unhandledRejection", onFault);

// The loader first (it makes the modules importable), then all modules at once, each within
// its own time. Awaiting a native promise looks no `then` up, so a tool module that plants one
// on a prototype cannot take its result over.
const loaderFailure = loader === undefined ? undefined : await importLoader(loader, moduleLoadTimeoutMs);
const loading: (WorkerModule | Promise<WorkerModule>)[] = [];
for (let index = 0; index < moduleUrls.length; index += 1) {
  loading[index] =
    loaderFailure !== undefined && !loaderFailure.ok
      ? unusableModule(loaderFailure.failure, false)
      : loadModuleInWorker(moduleUrls[index] as string, threadId, moduleLoadTimeoutMs, setupTimeoutMs);
}
const loaded: WorkerModule[] = [];
const failures: (string | undefined)[] = [];
for (let index = 0; index < loading.length; index += 1) {
  const module = await (loading[index] as WorkerModule | Promise<WorkerModule>);
  loaded[index] = module;
  failures[index] = module.ok ? undefined : module.failure;
}
parentPort?.postMessage({ toolgateThreadLoaded: true, threadId, failures } satisfies ThreadLoaded);

/**
 * Runs one task. Synchronous when the tool returns a plain value (Piscina awaits either way,
 * and every skipped await is a microtask less on each call's round trip).
 */
export default function runToolTask(task: WorkerTask | WorkerWarmup): WorkerReply | Promise<WorkerReply> {
  if (task.kind === "warmup") return new Reply("warm", "", false, "", retiring);
  if (retiring) return new Reply("refused", "", false, "", true); // not claimed: the main thread runs it elsewhere
  // Stopped while it waited for this thread: never started.
  if (!board.claim(task.slot, threadId)) return new Reply("stopped", "", false, "", retiring);
  const module = loaded[task.module] as WorkerModule;
  if (!module.ok) {
    if (module.replaceThread) retiring = true; // its setup may work on a new thread
    return finish(undefined, task, failed(module.failure));
  }
  const tool = MapPrototypeGet(module.tools, task.toolName);
  if (tool === undefined) {
    const file = moduleFileName(moduleUrls[task.module] as string);
    return finish(undefined, task, failed(`tool "${task.toolName}" is not defined by ${file} in the worker thread`));
  }
  const record = new RunningTask(task.taskId, task.toolCallId, task.toolName, module.app, task.progress);
  MapPrototypeSet(running, task.taskId, record);
  active = record;
  let outcome: ToolOutcome | Promise<ToolOutcome>;
  try {
    outcome = runInTask(record, runWithinBudgets, tool, task.args, record);
  } catch (error) {
    return finish(record, task, encodeFailure(error, record));
  }
  if (!isPromise(outcome)) return finish(record, task, encodeOutcome(outcome as ToolOutcome));
  const pending = outcome as Promise<ToolOutcome>;
  const decided = new NativePromise<Reply>((resolve) => {
    record.fault = (error) =>
      resolve(failed(`the tool caused an uncaught exception or unhandled rejection: ${describeFailure(error).text}`));
    void PromisePrototypeThen(
      pending,
      (settled) => resolve(encodeOutcome(settled as ToolOutcome)),
      (error: unknown) => resolve(encodeFailure(error, record)),
    );
  });
  return PromisePrototypeThen(decided, (reply) => finish(record, task, reply as Reply)) as Promise<WorkerReply>;
}

/**
 * The task's outcome is decided: nothing more is sent for it, and the board moves to DONE.
 * When the main thread condemned the task first, this thread is being terminated: it must
 * not return (and so never takes another call).
 */
function finish(record: RunningTask | undefined, task: WorkerTask, reply: Reply): WorkerReply | Promise<WorkerReply> {
  if (record !== undefined) {
    record.settle();
    MapPrototypeDelete(running, task.taskId);
    if (active === record) active = undefined;
  }
  if (!board.release(task.slot)) board.awaitTermination(task.slot);
  reply.retire = retiring;
  const transfer = ReplyWithAttachments.transferOf(reply);
  // A plain success goes back as its bare content (WorkerReply in protocol.ts).
  if (transfer === undefined) return reply.kind === "result" && !reply.isError && !retiring ? reply.content : reply;
  const transferred = new Transferred(reply, transfer);
  if (markMovable !== undefined) return markMovable(transferred) as unknown as WorkerReply;
  // Loaded on the first reply with attachments, not at thread start: piscina's main module
  // costs every new thread tens of milliseconds, and most threads never send an attachment.
  return PromisePrototypeThen(import("piscina"), (piscina) => {
    const move = piscina.move as unknown as (value: Transferred) => unknown; // our keys are its registered symbols
    markMovable = move;
    return move(transferred) as unknown as WorkerReply;
  }) as Promise<WorkerReply>;
}

/** Piscina's `move()`, once loaded: marks a value whose transfer list Piscina is to use. */
let markMovable: ((value: Transferred) => unknown) | undefined;
// Piscina's transferable protocol keys (registered symbols, so they need no import).
const TRANSFERABLE = Symbol.for("Piscina.transferable");
const VALUE = Symbol.for("Piscina.valueOf");

/**
 * What goes back to the main thread. A class, so the own `then` (undefined) survives the
 * structured clone: a `then` a tool planted on Object.prototype never adopts the reply, here
 * or on the main thread.
 */
class Reply implements WorkerOutcome {
  // biome-ignore lint/suspicious/noThenProperty: see above.
  readonly then = undefined;
  constructor(
    readonly kind: WorkerOutcome["kind"],
    readonly content: string,
    readonly isError: boolean,
    readonly message: string,
    public retire: boolean,
  ) {}
  /** Own even when there are none, so the main thread reads it without a prototype lookup. */
  attachments: readonly WireAttachment[] | undefined = undefined;
}

/** A result whose attachments' buffers go in the transfer list (a private field: never cloned). */
class ReplyWithAttachments extends Reply {
  readonly #transfer: readonly ArrayBuffer[];
  constructor(content: string, attachments: readonly WireAttachment[], transfer: readonly ArrayBuffer[]) {
    super("result", content, false, "", false);
    this.attachments = attachments;
    this.#transfer = transfer;
  }
  static transferOf(reply: Reply): readonly ArrayBuffer[] | undefined {
    return #transfer in reply ? reply.#transfer : undefined;
  }
}

/** Piscina's transferable protocol: it posts the value with these buffers in the transfer list. */
class Transferred {
  // biome-ignore lint/suspicious/noThenProperty: Piscina awaits what a task returns: a planted `then` must not adopt it.
  readonly then = undefined;
  constructor(
    readonly reply: Reply,
    readonly buffers: readonly ArrayBuffer[],
  ) {}
  get [TRANSFERABLE](): readonly ArrayBuffer[] {
    return this.buffers;
  }
  get [VALUE](): Reply {
    return this.reply;
  }
}

function encodeOutcome(outcome: ToolOutcome): Reply {
  // Own only: an `attachments` a tool planted on Object.prototype is not the outcome's.
  if (!ObjectHasOwn(outcome, "attachments")) return new Reply("result", outcome.content, outcome.isError, "", false);
  const moved = moveAttachments(outcome.attachments as NonNullable<ToolOutcome["attachments"]>);
  if (typeof moved === "string") {
    return new Reply("result", errorContent(COURSE_TOOL_OUTPUT_SERIALIZATION_FAILED, { text: moved, cut: false }), true, "", false);
  }
  return new ReplyWithAttachments(outcome.content, moved.list, moved.buffers);
}

/** A rejection of runTool: the abort, a NonRecoverableToolError, or (defensively) anything else. */
function encodeFailure(error: unknown, task: RunningTask): Reply {
  if (task.aborted) return new Reply("stopped", "", false, "", false);
  if (isNonRecoverableToolError(error)) {
    const message = readDataProperty(error, "message");
    const text = typeof message === "string" ? message : "";
    return new Reply("fatal", "", false, cutToCodePoints(text, COURSE_TOOL_MAX_STRING_CODE_POINTS).text, false);
  }
  return failed(describeFailure(error).text);
}

function failed(text: string): Reply {
  return new Reply("result", errorContent(COURSE_TOOL_EXECUTION_FAILED, { text, cut: false }), true, "", false);
}
