// The task function of the pool's threads (workers/piscina-entry.cts hands it to the pool): runs a validated call's tool and the serializer, and returns an
// explicitly encoded outcome (attachments' bytes moved, not copied). At start it hands its
// thread port to the main thread, imports the loader if there is one, loads the tool modules
// (each within moduleLoadTimeoutMs, then its setup() within setupTimeoutMs) and reports how that went. Nothing here may
// throw at load time (Piscina would stop replacing workers); every failure of a call is
// encoded as that call's outcome, and a fault no running task caused retires the thread.
// docs/contract.md: rule W1 — tool modules, rule W2 — abort relay, rule W5 — faults are results (and rules 7–12 through runTool).
import { MessageChannel, parentPort, threadId, workerData } from "node:worker_threads";
import { Limits, ToolErrorCode } from "../src/contract/constants.js";
import { isNonRecoverableToolError } from "../src/contract/errors.js";
import {
  ArrayIsArray,
  isPromise,
  MapPrototypeGet,
  NativePromise,
  ObjectFreeze,
  ObjectHasOwn,
  PromisePrototypeThen,
} from "../src/contract/primordials.js";
import { errorContent } from "../src/contract/results.js";
import { cutToCodePoints } from "../src/contract/serialize.js";
import type { Tool } from "../src/contract/tools.js";
import { describeFailure, readDataProperty } from "../src/contract/untrusted.js";
import { type RunSettings, runTool, type ToolOutcome } from "../src/executor/run-tool.js";
import { moveAttachments } from "../src/worker/attachment-move.js";
import {
  TASK_MODULE,
  TASK_SLOT,
  TASK_TOOL_NAME,
  type ThreadHello,
  type ThreadLoaded,
  type ToolWorkerData,
  type WireAttachment,
  type WorkerOutcome,
  type WorkerReply,
  type WorkerTask,
  type WorkerWarmup,
} from "../src/worker/protocol.js";
import { TaskBoard } from "../src/worker/task-board.js";
import { RunningTask, runInTask, taskSignalIfMade, tracedTask, useThreadPort } from "../src/worker/task-context.js";
import { TaskTurns } from "../src/worker/task-turns.js";
import { WorkerPort } from "../src/worker/thread-port.js";
import { importLoader, loadModuleInWorker, WorkerModule } from "../src/worker/thread-setup.js";
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

/** The executor's output and attachment budgets (a tool's own override them), and each task's signal made on first read: one per thread. */
const runSettings: RunSettings = ObjectFreeze({ outputBudgets, attachmentBudgets, signalIfMade: taskSignalIfMade });

function runWithinBudgets(task: RunningTask): ToolOutcome | Promise<ToolOutcome> {
  return runTool(task.tool as Tool, task.args, task.context, runSettings);
}
const board = TaskBoard.attach(boardMemory);

/**
 * The task this thread has started and not finished (at most one: one task per thread), which
 * the abort RPC looks up by id: a task still running after its call settled stays here.
 */
let active: RunningTask | undefined;
/** One task at a time, the next once the reply before it has left. */
const turns = new TaskTurns();
/** A fault this thread's running task did not cause: finish the task, then let the thread go. */
let retiring = false;

// The thread port, made once, before anything can fail: the main thread's abort reaches us
// even while the modules load.
const channel = new MessageChannel();
useThreadPort(
  new WorkerPort(channel.port1, {
    abort(taskId, reason) {
      const task = active;
      if (task === undefined || task.taskId !== taskId) return false;
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
      ? WorkerModule.unusable(loaderFailure.failure, false)
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
 * Runs one task, once the thread's turn is free: a task that came while another runs (a call
 * queued behind a busy thread) starts once the reply before it has left (task-turns.ts).
 * Synchronous when the turn is free and the tool returns a plain value (Piscina awaits either
 * way, and every skipped await is a microtask less on each call's round trip).
 */
export default function runToolTask(task: WorkerTask | WorkerWarmup): WorkerReply | Promise<WorkerReply> {
  if (!ArrayIsArray(task)) return Reply.warm(retiring); // a call's task is a tuple (protocol.ts)
  const work = task as WorkerTask;
  let reply: WorkerReply | Promise<WorkerReply>;
  if (turns.taken) reply = PromisePrototypeThen(turns.wait(), () => runInTurn(work)) as Promise<WorkerReply>;
  else {
    turns.take();
    try {
      reply = runInTurn(work);
    } catch (error) {
      turns.passAfter(undefined);
      throw error;
    }
  }
  turns.passAfter(reply);
  return reply;
}

function runInTurn(work: WorkerTask): WorkerReply | Promise<WorkerReply> {
  if (retiring) return Reply.refused(); // not claimed: the main thread runs it elsewhere
  const slot = work[TASK_SLOT];
  // Stopped while it waited for this thread: never started.
  if (!board.claim(slot, threadId)) return Reply.stopped(retiring);
  const module = loaded[work[TASK_MODULE]] as WorkerModule;
  if (!module.ok) {
    if (module.replaceThread) retiring = true; // its setup may work on a new thread
    return finish(undefined, slot, failed(module.failure));
  }
  const tool = MapPrototypeGet(module.tools, work[TASK_TOOL_NAME]);
  if (tool === undefined) {
    const file = moduleFileName(moduleUrls[work[TASK_MODULE]] as string);
    return finish(undefined, slot, failed(`tool "${work[TASK_TOOL_NAME]}" is not defined by ${file} in the worker thread`));
  }
  const record = new RunningTask(work, tool, module.app);
  active = record;
  let outcome: ToolOutcome | Promise<ToolOutcome>;
  try {
    outcome = runInTask(record, runWithinBudgets);
  } catch (error) {
    return finish(record, slot, encodeFailure(error, record));
  }
  if (!isPromise(outcome)) return finishWith(record, slot, outcome as ToolOutcome);
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
  return PromisePrototypeThen(decided, (reply) => finish(record, slot, reply as Reply)) as Promise<WorkerReply>;
}

/**
 * The tool's outcome, as it came back synchronously. The commonest (a success without
 * attachments, from a thread that is not retiring) goes back as its bare content, with no
 * reply record made for it (WorkerReply in protocol.ts).
 */
function finishWith(record: RunningTask, slot: number, outcome: ToolOutcome): WorkerReply | Promise<WorkerReply> {
  // Own only: an `attachments` a tool planted on Object.prototype is not the outcome's.
  if (outcome.isError || ObjectHasOwn(outcome, "attachments")) return finish(record, slot, encodeOutcome(outcome));
  end(record, slot);
  return retiring ? send(Reply.result(outcome.content, false)) : outcome.content;
}

/** The task's outcome is decided: sends `reply` (see end()). */
function finish(record: RunningTask | undefined, slot: number, reply: Reply): WorkerReply | Promise<WorkerReply> {
  end(record, slot);
  return send(reply);
}

/**
 * The task's outcome is decided: nothing more is sent for it, and the board moves to DONE.
 * When the main thread condemned the task first, this thread is being terminated: it must
 * not return (and so never takes another call).
 */
function end(record: RunningTask | undefined, slot: number): void {
  if (record !== undefined) {
    record.settle();
    if (active === record) active = undefined;
  }
  if (!board.release(slot)) board.awaitTermination(slot);
}

/** A decided reply as it leaves, with whether this thread is to be replaced. */
function send(reply: Reply): WorkerReply | Promise<WorkerReply> {
  reply.retire = retiring;
  const transfer = ReplyWithAttachments.transferOf(reply);
  // A plain success goes back as its bare content (WorkerReply in protocol.ts).
  if (transfer === undefined) return reply.kind === "result" && !reply.isError && !retiring ? reply.content : reply;
  return sendWithTransfer(reply, transfer);
}

/** How the pool's thread entry has a reply posted with its buffers moved, not copied (useTransfer). */
export type TransferSender = (reply: WorkerOutcome, transfer: readonly ArrayBuffer[]) => WorkerReply | Promise<WorkerReply>;

/** Until the entry says how, a reply's buffers are copied: still the very same reply. */
let sendWithTransfer: TransferSender = (reply) => reply;

/** The pool's thread entry (workers/piscina-entry.cts) says, once, how its pool moves a reply's buffers. */
export function useTransfer(sender: TransferSender): void {
  sendWithTransfer = sender;
}

/**
 * What goes back to the main thread. A class, so the own `then` (undefined) survives the
 * structured clone: a `then` a tool planted on Object.prototype never adopts the reply, here
 * or on the main thread. Made by its named factories (one per kind).
 */
class Reply implements WorkerOutcome {
  // biome-ignore lint/suspicious/noThenProperty: see above.
  readonly then = undefined;
  /** Set by finish(), as the reply leaves: whether this thread is to be replaced. */
  retire = false;
  /** Own even when there are none, so the main thread reads it without a prototype lookup. */
  attachments: readonly WireAttachment[] | undefined = undefined;
  protected constructor(
    readonly kind: WorkerOutcome["kind"],
    readonly content: string,
    readonly isError: boolean,
    readonly message: string,
  ) {}
  /** The tool's bounded output (or an error result of the contract). */
  static result(content: string, isError: boolean): Reply {
    return new Reply("result", content, isError, "");
  }
  /** A NonRecoverableToolError's message (bounded). */
  static fatal(message: string): Reply {
    return new Reply("fatal", "", false, message);
  }
  /** The task's abort won before its tool ran or finished. */
  static stopped(retire: boolean): Reply {
    return Reply.#withRetire(new Reply("stopped", "", false, ""), retire);
  }
  /** This thread is retiring and did not start the task: the main thread runs it elsewhere. */
  static refused(): Reply {
    return Reply.#withRetire(new Reply("refused", "", false, ""), true);
  }
  /** A warm-up's answer (it ran nothing). */
  static warm(retire: boolean): Reply {
    return Reply.#withRetire(new Reply("warm", "", false, ""), retire);
  }
  static #withRetire(reply: Reply, retire: boolean): Reply {
    reply.retire = retire;
    return reply;
  }
}

/** A result whose attachments' buffers go in the transfer list (a private field: never cloned). */
class ReplyWithAttachments extends Reply {
  readonly #transfer: readonly ArrayBuffer[];
  constructor(content: string, attachments: readonly WireAttachment[], transfer: readonly ArrayBuffer[]) {
    super("result", content, false, "");
    this.attachments = attachments;
    this.#transfer = transfer;
  }
  static transferOf(reply: Reply): readonly ArrayBuffer[] | undefined {
    return #transfer in reply ? reply.#transfer : undefined;
  }
}

function encodeOutcome(outcome: ToolOutcome): Reply {
  // Own only: an `attachments` a tool planted on Object.prototype is not the outcome's.
  if (!ObjectHasOwn(outcome, "attachments")) return Reply.result(outcome.content, outcome.isError);
  const moved = moveAttachments(outcome.attachments as NonNullable<ToolOutcome["attachments"]>);
  if (typeof moved === "string") {
    return Reply.result(errorContent(ToolErrorCode.OUTPUT_SERIALIZATION_FAILED, { text: moved, cut: false }), true);
  }
  return new ReplyWithAttachments(outcome.content, moved.list, moved.buffers);
}

/** A rejection of runTool: the abort, a NonRecoverableToolError, or (defensively) anything else. */
function encodeFailure(error: unknown, task: RunningTask): Reply {
  if (task.aborted) return Reply.stopped(false);
  if (isNonRecoverableToolError(error)) {
    const message = readDataProperty(error, "message");
    const text = typeof message === "string" ? message : "";
    return Reply.fatal(cutToCodePoints(text, Limits.MAX_STRING_CODE_POINTS).text);
  }
  return failed(describeFailure(error).text);
}

function failed(text: string): Reply {
  return Reply.result(errorContent(ToolErrorCode.EXECUTION_FAILED, { text, cut: false }), true);
}
