// A worker host: consumes a toolgate queue and runs each job in a local WorkerToolExecutor,
// so the host half of a call is the worker executor's whole contract (its own snapshot and
// validation of the JSON arguments, `execute` and the serializer in a thread, a spinning
// tool's thread terminated after the grace period) and the host keeps serving. Jobs are
// taken one per thread; a job the agent has given up on is never started; a cancel
// message over Redis pub/sub aborts the signal of the job's running tool.
// docs/contract.md: rules W1–W5 on the host, through WorkerToolExecutor; docs/queue.md — Topology.
import { availableParallelism } from "node:os";
import type { Job } from "bullmq";
import type { Redis } from "ioredis";
import { COURSE_TOOL_EXECUTION_FAILED } from "../contract/constants.js";
import { isNonRecoverableToolError } from "../contract/errors.js";
import { describeFailure, readDataProperty } from "../contract/failure.js";
import type { ToolRegistry } from "../contract/registry.js";
import { errorContent } from "../contract/results.js";
import { WorkerToolExecutor } from "../worker/executor.js";
import type { ToolModuleSpecifier } from "../worker/tool-modules.js";
import { closeRedis, connectOrFail, openRedis, settlesWithin } from "./connection.js";
import {
  durationOption,
  integerOption,
  invalidOption,
  optionalDuration,
  type QueueConnection,
  readConnection,
  readObject,
  readQueueName,
} from "./options.js";
import { loadQueuePeers } from "./peers.js";
import { type CancelReason, cancelChannel, cancelMarkKey, decodeCancel, type QueueJobData, type QueueJobResult } from "./protocol.js";

/** Options of `runToolWorkerHost`. */
export interface ToolWorkerHostOptions {
  /** Where Redis is: a `redis://` URL or ioredis connection options. */
  readonly connection: QueueConnection;
  /** The queue to consume (the agents' `QueueToolExecutor` queue). */
  readonly queue: string;
  /** Tool modules this host runs (ES modules default-exporting tool definitions). */
  readonly modules: readonly ToolModuleSpecifier[];
  /** Worker threads, and jobs taken at once (default `os.availableParallelism()`, at most 256). */
  readonly threads?: number;
  /**
   * This host's default limit of a call in ms (TOOL_EXECUTION_TIMEOUT; default: none). A
   * tool's own `timeoutMs` overrides it, and so does the limit a job carries (the agent's:
   * call > tool > agent executor), as a call's would.
   */
  readonly timeoutMs?: number;
  /** After an abort or timeout, how long a tool may run on before its thread is terminated (default 1000). */
  readonly abortGraceMs?: number;
  /**
   * Lock of a running job in ms, renewed at half of it. A host killed mid-job is noticed
   * once its lock expires (default 30 000, 500..600 000).
   */
  readonly lockDurationMs?: number;
  /** How long startup tries to reach Redis (default 5000, at most 60 000). */
  readonly connectTimeoutMs?: number;
  /** How long `close()` lets running jobs finish before it stops them (default 30 000). */
  readonly closeTimeoutMs?: number;
  /** Told of BullMQ and Redis errors the host survives (a lost connection, a failed lock renewal). */
  readonly onError?: (error: unknown) => void;
}

/** A running worker host. */
export interface ToolWorkerHost {
  readonly queue: string;
  /** A copy of the registry the host's executor built from the modules. */
  readonly registry: ToolRegistry;
  /**
   * Stops taking jobs and lets the running ones finish; after `closeTimeoutMs` stops them
   * (their tools' signals abort, spinning threads are terminated); then closes the threads
   * and connections. Idempotent.
   */
  close(): Promise<void>;
}

interface ResolvedHostOptions {
  readonly connection: QueueConnection;
  readonly queue: string;
  readonly modules: readonly ToolModuleSpecifier[];
  readonly threads: number;
  readonly timeoutMs: number | undefined;
  readonly abortGraceMs: number;
  readonly lockDurationMs: number;
  readonly connectTimeoutMs: number;
  readonly closeTimeoutMs: number;
  readonly onError: (error: unknown) => void;
}

const CANCELLED: QueueJobResult = { kind: "cancelled" };
/** How often the cancel marks of running jobs are read (a fallback for lost cancel messages). */
const CANCEL_POLL_MS = 1000;
/** How long a closing host waits for Redis to record the jobs it stopped. */
const STOPPED_JOBS_RECORD_MS = 2000;

/**
 * Starts a worker host: reaches Redis (a ToolContractError naming the server when it
 * cannot), starts the WorkerToolExecutor over `modules` (a ToolContractError for a bad
 * module), subscribes to cancellations, then consumes the queue.
 */
export async function runToolWorkerHost(options: ToolWorkerHostOptions): Promise<ToolWorkerHost> {
  const resolved = resolveHostOptions(options);
  const { Worker } = await loadQueuePeers();
  const control = openRedis(resolved.connection, { enableOfflineQueue: false, commandTimeout: resolved.lockDurationMs });
  await connectOrFail(control, resolved.connectTimeoutMs, resolved.connection);
  const subscriber = openRedis(resolved.connection);
  const workerClient = openRedis(resolved.connection);
  const clients: Redis[] = [control, subscriber, workerClient];
  let executor: WorkerToolExecutor;
  try {
    executor = await WorkerToolExecutor.create({
      modules: resolved.modules,
      minThreads: 1,
      maxThreads: resolved.threads,
      abortGraceMs: resolved.abortGraceMs,
      ...(resolved.timeoutMs === undefined ? {} : { timeoutMs: resolved.timeoutMs }),
    });
  } catch (error) {
    await Promise.all(clients.map(closeRedis));
    throw error;
  }

  /** The signals of the jobs running here, by job id. */
  const running = new Map<string, AbortController>();
  subscriber.on("message", (_channel: string, message: string) => {
    const cancel = decodeCancel(message);
    if (cancel !== undefined) running.get(cancel.jobId)?.abort(stopReason(cancel.reason));
  });
  await subscriber.connect();
  await subscriber.subscribe(cancelChannel(resolved.queue));
  // Pub/sub drops messages while a connection is down: the marks are read again while jobs run.
  const markPoll = setInterval(() => void abortMarked(control, resolved.queue, running), CANCEL_POLL_MS);
  markPoll.unref();

  const runJob = async (job: Job, _token: string | undefined, bullSignal?: AbortSignal): Promise<QueueJobResult> => {
    const jobId = job.id as string;
    const controller = new AbortController();
    const onBullAbort = (): void => controller.abort(stopReason("abort"));
    bullSignal?.addEventListener("abort", onBullAbort, { once: true });
    // Registered before the mark is read: a cancel published after the read finds it here.
    running.set(jobId, controller);
    try {
      if ((await control.get(cancelMarkKey(resolved.queue, jobId))) !== null) return CANCELLED;
      const data = job.data as Partial<QueueJobData> | null;
      const call = { type: "toolCall", id: data?.callId, name: data?.toolName, arguments: data?.arguments };
      // The agent's limit for the call: the host's pipeline applies it as the call's own (a
      // malformed one is refused with the job, as a malformed call is).
      const timeoutMs = data?.timeoutMs;
      const message = await executor.executeToolCall(call, controller.signal, timeoutMs === undefined ? undefined : { timeoutMs });
      return { kind: "result", content: message.content, isError: message.isError };
    } catch (error) {
      return encodeFailure(error, controller.signal);
    } finally {
      running.delete(jobId);
      bullSignal?.removeEventListener("abort", onBullAbort);
    }
  };

  const worker = new Worker(resolved.queue, runJob, {
    connection: workerClient,
    concurrency: resolved.threads,
    lockDuration: resolved.lockDurationMs,
    stalledInterval: resolved.lockDurationMs,
    // A stalled job (its host died) fails instead of running again: tools have side effects.
    maxStalledCount: 0,
  });
  worker.on("error", resolved.onError);
  try {
    await worker.waitUntilReady();
  } catch (error) {
    await worker.close(true);
    clearInterval(markPoll);
    await executor.close();
    await Promise.all(clients.map(closeRedis));
    throw error;
  }

  let closing: Promise<void> | undefined;
  return {
    queue: resolved.queue,
    get registry() {
      return executor.registry;
    },
    close() {
      closing ??= (async () => {
        const graceful = worker.close();
        if (!(await settlesWithin(graceful, resolved.closeTimeoutMs))) {
          for (const controller of running.values()) controller.abort(stopReason("gave-up"));
          // The stopped jobs answer at once; recording that needs Redis, which may be gone.
          await settlesWithin(graceful, resolved.abortGraceMs + STOPPED_JOBS_RECORD_MS);
        }
        clearInterval(markPoll);
        await executor.close();
        await Promise.all(clients.map(closeRedis));
      })();
      return closing;
    },
  };
}

/** Aborts every running job whose cancel mark is set; Redis errors wait for the next poll. */
async function abortMarked(control: Redis, queue: string, running: Map<string, AbortController>): Promise<void> {
  if (running.size === 0) return;
  const jobIds = [...running.keys()];
  let marks: (string | null)[];
  try {
    marks = await control.mget(jobIds.map((jobId) => cancelMarkKey(queue, jobId)));
  } catch {
    return;
  }
  for (let index = 0; index < jobIds.length; index += 1) {
    const reason = marks[index];
    if (reason === "abort" || reason === "timeout" || reason === "gave-up") running.get(jobIds[index] as string)?.abort(stopReason(reason));
  }
}

/** What the tool's signal carries when the agent stops a job. */
function stopReason(reason: CancelReason): DOMException {
  return reason === "timeout"
    ? new DOMException("The tool call timed out", "TimeoutError")
    : new DOMException("The tool call was cancelled by the agent", "AbortError");
}

/** A rejection of the host's executor: the stop, a NonRecoverableToolError, or a malformed job. */
function encodeFailure(error: unknown, signal: AbortSignal): QueueJobResult {
  if (signal.aborted) return CANCELLED;
  if (isNonRecoverableToolError(error)) {
    const message = readDataProperty(error, "message");
    return { kind: "fatal", message: typeof message === "string" ? message : "" };
  }
  // A ToolContractError: the job's data was not a well-formed call (not written by an agent).
  const failure = describeFailure(error);
  return {
    kind: "result",
    content: errorContent(COURSE_TOOL_EXECUTION_FAILED, { text: `the host refused the job: ${failure.text}`, cut: failure.cut }),
    isError: true,
  };
}

function resolveHostOptions(options: ToolWorkerHostOptions): ResolvedHostOptions {
  const raw = readObject(options);
  const modules = raw.modules;
  if (!Array.isArray(modules) || modules.length === 0)
    invalidOption("options.modules must be a non-empty array of tool module URLs or paths");
  const onError = raw.onError;
  if (onError !== undefined && typeof onError !== "function") invalidOption("options.onError must be a function");
  return {
    connection: readConnection(raw.connection),
    queue: readQueueName(raw.queue),
    modules: modules as readonly ToolModuleSpecifier[],
    threads: integerOption("threads", raw.threads, 1, 256, availableParallelism()),
    timeoutMs: optionalDuration("timeoutMs", raw.timeoutMs, 1),
    abortGraceMs: integerOption("abortGraceMs", raw.abortGraceMs, 0, 600_000, 1000),
    lockDurationMs: integerOption("lockDurationMs", raw.lockDurationMs, 500, 600_000, 30_000),
    connectTimeoutMs: integerOption("connectTimeoutMs", raw.connectTimeoutMs, 1, 60_000, 5000),
    closeTimeoutMs: durationOption("closeTimeoutMs", raw.closeTimeoutMs, 0, 30_000),
    onError: (onError as ((error: unknown) => void) | undefined) ?? ignore,
  };
}

function ignore(): void {}
