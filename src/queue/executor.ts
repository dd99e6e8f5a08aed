// QueueToolExecutor: the agent side of running tools on other machines. The shared pipeline
// snapshots, looks up and validates each call here (an invalid call never reaches Redis);
// a validated call becomes one BullMQ job carrying the call's JSON arguments snapshot; a
// worker host runs it (src/queue/host.ts) and the result comes back through BullMQ's
// events, to be re-linked and frozen by the pipeline. Every way a call can end without a
// result (abort, timeout, a lost host, a lost Redis, close) settles it here, at once or
// within a bound, and marks its job so that no host ever starts it afterwards.
// docs/contract.md: rules 1–13 through the shared pipeline, rule W6 — batches; docs/queue.md — Guarantees, and what is not guaranteed.
import { randomUUID } from "node:crypto";
import type { Queue, QueueEvents } from "bullmq";
import type { Redis } from "ioredis";
import {
  type ArgumentBudgets,
  DEFAULT_ARGUMENT_BUDGETS,
  DEFAULT_ATTACHMENT_BUDGETS,
  DEFAULT_OUTPUT_BUDGETS,
  readArgumentBudgets,
  resolveBudgets,
} from "../contract/budgets.js";
import { COURSE_TOOL_EXECUTION_TIMEOUT, COURSE_TOOL_EXECUTOR_CLOSED, COURSE_TOOL_INVALID_ARGUMENT } from "../contract/constants.js";
import { cutToCodePoints } from "../contract/content.js";
import { NonRecoverableToolError, ToolContractError } from "../contract/errors.js";
import { describeFailure } from "../contract/failure.js";
import { NativePromise, ObjectFreeze, PerformanceNow } from "../contract/primordials.js";
import { registeredTools, ToolRegistry } from "../contract/registry.js";
import { type CourseToolResultMessage, errorContent } from "../contract/results.js";
import { watchAbort } from "../executor/abort-watch.js";
import { resolveHooks, type ToolExecutorHooks } from "../executor/hooks.js";
import type { PipelineSettings } from "../executor/options.js";
import { executeCall, executeCalls, type Pipeline, type RunRequest } from "../executor/pipeline.js";
import type { ToolOutcome } from "../executor/run-tool.js";
import { abortReason } from "../executor/signal.js";
import type { BatchOptions, CallOptions, ToolExecutor } from "../executor/tool-executor.js";
import { callAppRefusal } from "../worker/app-refusal.js";
import { loadToolModules, type ToolModuleSpecifier } from "../worker/tool-modules.js";
import { BULLMQ_CLOSE_MS, closeRedis, connectOrFail, openRedis, settlesWithin } from "./connection.js";
import { type JobState, readJobStates } from "./job-states.js";
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
import {
  BULL_PREFIX,
  CANCEL_MARK_TTL_MS,
  type CancelReason,
  cancelChannel,
  cancelMarkKey,
  type DecodedResult,
  decodeResult,
  encodeCancel,
  FINISHED_JOB_RETENTION,
  failedOutcome,
  type QueueJobData,
} from "./protocol.js";

/** Options of `QueueToolExecutor.create`. Give exactly one of `modules` and `registry`. */
export interface QueueToolExecutorOptions {
  /** Where Redis is: a `redis://` URL or ioredis connection options. */
  readonly connection: QueueConnection;
  /** The BullMQ queue the worker hosts consume (no ":" in it). */
  readonly queue: string;
  /** Tool modules, as for `WorkerToolExecutor` (the hosts load the same modules). */
  readonly modules?: readonly ToolModuleSpecifier[];
  /** Or the registry of the tools this agent may call (their hosts must define them too). */
  readonly registry?: ToolRegistry;
  /**
   * Default limit of a call in ms (a tool's `timeoutMs` and a call's override it), counted
   * from the moment the call is enqueued; expiry gives TOOL_EXECUTION_TIMEOUT (default: none).
   * The call's limit travels with its job: the host stops the tool at it too.
   */
  readonly timeoutMs?: number;
  /** Approval and telemetry hooks, on this (the agent's) side, as for every executor. */
  readonly hooks?: ToolExecutorHooks;
  /** Argument budgets of every call, checked here before anything is enqueued (a call's override them; a tool's own only tighten them). */
  readonly argumentBudgets?: ArgumentBudgets;
  /** How often in-flight jobs are checked in Redis for a lost host or lost data (default 500, 20..60 000). */
  readonly heartbeatMs?: number;
  /** How long `create()` tries to reach Redis (default 5000, at most 60 000). */
  readonly connectTimeoutMs?: number;
  /** Redis unreachable this long while calls are in flight fails them (default 10 000, at most 600 000). */
  readonly redisLostMs?: number;
  /** How long `close()` waits for accepted calls before failing them (default 30 000). */
  readonly closeTimeoutMs?: number;
}

interface ResolvedOptions {
  readonly connection: QueueConnection;
  readonly queue: string;
  readonly settings: PipelineSettings;
  readonly heartbeatMs: number;
  readonly connectTimeoutMs: number;
  readonly redisLostMs: number;
  readonly closeTimeoutMs: number;
}

/** One enqueued call waiting for its job to finish. */
interface PendingJob {
  readonly jobId: string;
  /** The job is in Redis (its add resolved): from then on the heartbeat watches it. */
  enqueued: boolean;
  /** Consecutive heartbeats that found no job: a restarted Redis, or lost data. */
  missingTicks: number;
  /** The host's answer. */
  answer(decoded: DecodedResult): void;
  /** This side gives up with `outcome`, and marks the job so that no host starts it. */
  giveUp(outcome: ToolOutcome): void;
}

/** Jobs with a missing hash this many heartbeats in a row are lost (one tick may race the event). */
const MISSING_TICKS = 2;
const MAX_CALL_ID_IN_JOB_ID = 64;

/**
 * The tool contract of `executeToolCall`, with `execute` and the serializer running on
 * worker hosts that consume a BullMQ queue on Redis. Create it with `QueueToolExecutor.create`;
 * `close()` it when done.
 */
export class QueueToolExecutor implements ToolExecutor {
  readonly #registry: ToolRegistry;
  readonly #pipeline: Pipeline;
  readonly #options: ResolvedOptions;
  readonly #queue: Queue;
  readonly #events: QueueEvents;
  /** Our own client: job states, cancel marks and messages (no offline queue: fails fast). */
  readonly #control: Redis;
  readonly #clients: readonly Redis[];
  /** Unique per executor, so job ids of two agents never collide. */
  readonly #jobPrefix = `tg-${randomUUID()}`;
  #jobCount = 0;
  readonly #pending = new Map<string, PendingJob>();
  /** Cancellations Redis did not take (it was unreachable): sent again once it answers. */
  readonly #unsentCancels = new Map<string, CancelReason>();
  readonly #sendingCancels = new Set<Promise<unknown>>();
  #heartbeat: NodeJS.Timeout | undefined;
  #ticking = false;
  #lastHealthyAt = 0;
  #closing: Promise<void> | undefined;
  readonly #idleWaiters: (() => void)[] = [];

  private constructor(registry: ToolRegistry, options: ResolvedOptions, queue: Queue, events: QueueEvents, clients: readonly Redis[]) {
    this.#registry = registry;
    this.#pipeline = { tools: registeredTools(registry), run: (request) => this.#run(request), settings: options.settings };
    this.#options = options;
    this.#queue = queue;
    this.#events = events;
    this.#control = clients[0] as Redis;
    this.#clients = clients;
    events.on("completed", ({ jobId, returnvalue }) => this.#pending.get(jobId)?.answer(decodeResult(returnvalue)));
    events.on("failed", ({ jobId, failedReason }) =>
      this.#pending.get(jobId)?.giveUp(failedOutcome(`the job failed on its host: ${failedReason}`)),
    );
  }

  /**
   * Loads the tools (or takes the registry), reaches Redis within `connectTimeoutMs` (a
   * ToolContractError(INVALID_ARGUMENT) naming the server when it cannot), and subscribes
   * to the queue's events before any call is enqueued.
   */
  static async create(options: QueueToolExecutorOptions): Promise<QueueToolExecutor> {
    const { resolved, registry, modules } = resolveOptions(options);
    const peers = await loadQueuePeers();
    const tools = registry?.snapshot() ?? (await loadToolModules(modules as readonly ToolModuleSpecifier[])).registry;
    const control = openRedis(resolved.connection, { enableOfflineQueue: false, commandTimeout: resolved.redisLostMs });
    await connectOrFail(control, resolved.connectTimeoutMs, resolved.connection);
    const clients = [control, openRedis(resolved.connection), openRedis(resolved.connection)];
    let queue: Queue | undefined;
    let events: QueueEvents | undefined;
    try {
      // Events are read from the newest one now: none of this executor's can be missed.
      const newest = await control.xrevrange(`${BULL_PREFIX}:${resolved.queue}:events`, "+", "-", "COUNT", 1);
      const lastEventId = newest[0]?.[0] ?? "0-0";
      queue = new peers.Queue(resolved.queue, { connection: clients[1] as Redis });
      events = new peers.QueueEvents(resolved.queue, { connection: clients[2] as Redis, lastEventId });
      queue.on("error", ignore);
      events.on("error", ignore);
      await withTimeout(Promise.all([queue.waitUntilReady(), events.waitUntilReady()]), resolved.connectTimeoutMs);
    } catch (error) {
      await Promise.allSettled([queue?.close(), events?.close()]);
      await Promise.all(clients.map(closeRedis));
      throw new ToolContractError(
        COURSE_TOOL_INVALID_ARGUMENT,
        `the queue ${resolved.queue} could not start: ${describeFailure(error).text}`,
        {
          cause: error,
        },
      );
    }
    return new QueueToolExecutor(tools, resolved, queue, events, clients);
  }

  /** A copy of the registry (registering into it adds nothing here). */
  get registry(): ToolRegistry {
    return this.#registry.snapshot();
  }

  /** The queue this executor enqueues into. */
  get queue(): string {
    return this.#options.queue;
  }

  /**
   * The in-process contract, with `execute` and the serializer on a worker host. Resolves
   * to a frozen linked result (including TOOL_EXECUTION_TIMEOUT and per-call faults: a lost
   * host, a lost Redis); rejects with a ToolContractError, `signal.reason`, or a
   * NonRecoverableToolError that the tool threw on its host. An `options.app` is refused
   * (INVALID_ARGUMENT): a live handle cannot cross machines.
   */
  async executeToolCall(call: unknown, signal: AbortSignal, options?: CallOptions): Promise<CourseToolResultMessage> {
    this.#assertOpen();
    refuseCallApp(options);
    return executeCall(this.#pipeline, call, signal, options);
  }

  /** Many calls, results in call order (the batch semantics of `ToolExecutor.executeBatch`). */
  async executeBatch(calls: readonly unknown[], signal: AbortSignal, options?: BatchOptions): Promise<CourseToolResultMessage[]> {
    this.#assertOpen();
    refuseCallApp(options);
    return executeCalls(this.#pipeline, calls, signal, options);
  }

  /**
   * Stops accepting calls; waits up to `closeTimeoutMs` for the accepted ones, fails those
   * still waiting (TOOL_EXECUTION_FAILED, their jobs marked so no host starts them), then
   * closes every connection. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#shutDown();
    return this.#closing;
  }

  async #shutDown(): Promise<void> {
    await this.#idleWithin(this.#options.closeTimeoutMs);
    for (const entry of [...this.#pending.values()]) entry.giveUp(failedOutcome("the executor closed before the host answered"));
    this.#resendCancels();
    await settlesWithin(Promise.allSettled([...this.#sendingCancels]), this.#options.redisLostMs);
    this.#stopHeartbeat();
    // BullMQ's close waits on a blocked read that a lost Redis never answers: bounded, then the clients go.
    await settlesWithin(Promise.allSettled([this.#events.close(), this.#queue.close()]), BULLMQ_CLOSE_MS);
    await Promise.all(this.#clients.map(closeRedis));
  }

  #assertOpen(): void {
    if (this.#closing !== undefined) throw new ToolContractError(COURSE_TOOL_EXECUTOR_CLOSED, "the QueueToolExecutor is closed");
  }

  /** Enqueues a validated call as one job; settles once, whichever comes first. */
  #run(request: RunRequest): Promise<ToolOutcome> {
    const { call, signal } = request;
    this.#jobCount += 1;
    const jobId = `${this.#jobPrefix}.${this.#jobCount}.${jobIdPart(call.id)}`;
    return new NativePromise<ToolOutcome>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = (): boolean => {
        if (this.#pending.get(jobId) !== entry) return false;
        this.#pending.delete(jobId);
        unwatch();
        if (timer !== undefined) clearTimeout(timer);
        if (this.#pending.size === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
        return true;
      };
      const stop = (reason: CancelReason): boolean => {
        if (!finish()) return false;
        this.#cancel(jobId, reason);
        return true;
      };
      const entry: PendingJob = {
        jobId,
        enqueued: false,
        missingTicks: 0,
        answer: (decoded) => {
          if (!finish()) return;
          if (decoded.fatal) reject(new NonRecoverableToolError(decoded.message));
          else resolve(decoded.outcome);
        },
        giveUp: (outcome) => {
          if (stop("gave-up")) resolve(outcome);
        },
      };
      const unwatch = watchAbort(signal, () => {
        if (stop("abort")) reject(abortReason(signal));
      });
      // The effective limit (call > tool > executor), from the moment the call is enqueued.
      const timeoutMs = request.timeoutMs;
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          if (stop("timeout")) resolve(timedOut(timeoutMs));
        }, timeoutMs);
        timer.unref();
      }
      this.#pending.set(jobId, entry);
      this.#startHeartbeat();
      const data: QueueJobData = {
        v: 1,
        callId: call.id,
        toolName: call.name,
        arguments: call.arguments,
        // The host stops the tool at the same limit, should this side's cancel never reach it.
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
      };
      this.#queue
        .add(call.name, data, { jobId, attempts: 1, removeOnComplete: FINISHED_JOB_RETENTION, removeOnFail: FINISHED_JOB_RETENTION })
        .then(
          () => {
            entry.enqueued = true;
          },
          (error: unknown) => entry.giveUp(failedOutcome(`the call could not be enqueued: ${describeFailure(error).text}`)),
        );
    });
  }

  /**
   * Marks the job (a host that has not started it never will) and tells the hosts to stop
   * it (the one running it aborts the tool's signal). Kept for later if Redis is unreachable.
   */
  #cancel(jobId: string, reason: CancelReason): void {
    const queue = this.#options.queue;
    const sending = this.#control
      .multi()
      .set(cancelMarkKey(queue, jobId), reason, "PX", CANCEL_MARK_TTL_MS)
      .publish(cancelChannel(queue), encodeCancel(jobId, reason))
      .exec()
      .then(
        () => undefined,
        () => {
          this.#unsentCancels.set(jobId, reason);
          this.#startHeartbeat();
        },
      )
      .finally(() => this.#sendingCancels.delete(sending));
    this.#sendingCancels.add(sending);
  }

  #resendCancels(): void {
    const unsent = [...this.#unsentCancels];
    this.#unsentCancels.clear();
    for (const [jobId, reason] of unsent) this.#cancel(jobId, reason);
  }

  #startHeartbeat(): void {
    if (this.#heartbeat !== undefined) return;
    this.#lastHealthyAt = PerformanceNow();
    this.#heartbeat = setInterval(() => void this.#tick(), this.#options.heartbeatMs);
    this.#heartbeat.unref();
  }

  #stopHeartbeat(): void {
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
  }

  /** One look at every enqueued job; fails everything in flight once Redis has been gone too long. */
  async #tick(): Promise<void> {
    if (this.#pending.size === 0 && this.#unsentCancels.size === 0) {
      this.#stopHeartbeat();
      return;
    }
    const silentMs = PerformanceNow() - this.#lastHealthyAt;
    if (silentMs > this.#options.redisLostMs) {
      const outcome = failedOutcome(
        `Redis did not answer for ${Math.round(silentMs)} ms; the tool may have run, and it will not be started after this`,
      );
      for (const entry of [...this.#pending.values()]) entry.giveUp(outcome);
    }
    if (this.#ticking) return;
    this.#ticking = true;
    try {
      const watched = [...this.#pending.values()].filter((entry) => entry.enqueued);
      const states = await readJobStates(
        this.#control,
        this.#options.queue,
        watched.map((entry) => entry.jobId),
      );
      this.#lastHealthyAt = PerformanceNow();
      this.#resendCancels();
      for (let index = 0; index < watched.length; index += 1) applyState(watched[index] as PendingJob, states[index] as JobState);
    } catch {
      // Redis did not answer: #lastHealthyAt stays where it was, and the next tick judges.
    } finally {
      this.#ticking = false;
    }
  }

  /** Resolves once nothing is pending, or after `ms`. */
  #idleWithin(ms: number): Promise<void> {
    if (this.#pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#idleWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

/** What a heartbeat's reading of one job means for its call. */
function applyState(entry: PendingJob, job: JobState): void {
  switch (job.state) {
    case "completed":
      entry.answer(decodeResult(parseJson(job.returnValue)));
      return;
    case "failed":
      entry.giveUp(failedOutcome(`the job failed on its host: ${job.failedReason}`));
      return;
    case "stalled":
      entry.giveUp(
        failedOutcome(
          "the host running the tool stopped renewing its job lock (it was killed, or cut off from Redis); the tool may have run, and it will not run again",
        ),
      );
      return;
    case "missing":
      entry.missingTicks += 1;
      if (entry.missingTicks >= MISSING_TICKS) {
        entry.giveUp(
          failedOutcome(
            "the job is gone from Redis (the server restarted or was flushed); the tool may have run, and it will not run again",
          ),
        );
      }
      return;
    default:
      entry.missingTicks = 0;
  }
}

/** A readable piece of the call id in the job id (BullMQ refuses ":" in ids). */
function jobIdPart(callId: string): string {
  return cutToCodePoints(callId, MAX_CALL_ID_IN_JOB_ID).text.replace(/[%:]/g, (char) => (char === "%" ? "%25" : "%3A"));
}

function timedOut(timeoutMs: number): ToolOutcome {
  return ObjectFreeze({
    content: errorContent(COURSE_TOOL_EXECUTION_TIMEOUT, { text: `the tool did not finish within ${timeoutMs} ms`, cut: false }),
    isError: true,
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function withTimeout<T>(pending: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    pending,
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Options that cannot cross machines, or that the hosts own: refused rather than ignored. */
const REFUSED_OPTIONS: readonly (readonly [string, string])[] = [
  [
    "app",
    "options.app cannot be sent to a worker host (a live handle cannot cross machines): export a setup() from the tool module instead; it runs in each of the host's threads",
  ],
  [
    "outputBudgets",
    "options.outputBudgets are applied where the tool runs: the QueueToolExecutor does not take them (the hosts serialize with the default output budgets)",
  ],
  [
    "attachmentBudgets",
    "options.attachmentBudgets do not apply: a QueueToolExecutor's results carry no attachments (only the text content crosses Redis)",
  ],
];

/** INVALID_ARGUMENT for a call's (or batch's) `app`: it cannot cross machines. */
function refuseCallApp(options: unknown): void {
  if (callAppRefusal(options) !== undefined) invalidOption(REFUSED_OPTIONS[0]?.[1] as string);
}

function resolveOptions(options: QueueToolExecutorOptions): {
  resolved: ResolvedOptions;
  registry: ToolRegistry | undefined;
  modules: readonly ToolModuleSpecifier[] | undefined;
} {
  const raw = readObject(options);
  const { modules, registry } = raw;
  if ((modules === undefined) === (registry === undefined)) invalidOption("give exactly one of options.modules and options.registry");
  if (modules !== undefined && (!Array.isArray(modules) || modules.length === 0)) {
    invalidOption("options.modules must be a non-empty array of tool module URLs or paths");
  }
  if (registry !== undefined && !(registry instanceof ToolRegistry)) invalidOption("options.registry must be a ToolRegistry");
  for (const [name, refusal] of REFUSED_OPTIONS) if (raw[name] !== undefined) invalidOption(refusal);
  const redisLostMs = integerOption("redisLostMs", raw.redisLostMs, 100, 600_000, 10_000);
  const settings: PipelineSettings = ObjectFreeze({
    timeoutMs: optionalDuration("timeoutMs", raw.timeoutMs, 1),
    hooks: raw.hooks === undefined ? undefined : resolveHooks(raw.hooks),
    app: undefined,
    argumentBudgets: resolveBudgets(
      DEFAULT_ARGUMENT_BUDGETS,
      raw.argumentBudgets === undefined ? undefined : readArgumentBudgets(raw.argumentBudgets, "options.argumentBudgets"),
    ),
    outputBudgets: DEFAULT_OUTPUT_BUDGETS,
    attachmentBudgets: DEFAULT_ATTACHMENT_BUDGETS,
  });
  return {
    resolved: {
      connection: readConnection(raw.connection),
      queue: readQueueName(raw.queue),
      settings,
      heartbeatMs: integerOption("heartbeatMs", raw.heartbeatMs, 20, 60_000, 500),
      connectTimeoutMs: integerOption("connectTimeoutMs", raw.connectTimeoutMs, 1, 60_000, 5000),
      redisLostMs,
      closeTimeoutMs: durationOption("closeTimeoutMs", raw.closeTimeoutMs, 0, 30_000),
    },
    registry: registry as ToolRegistry | undefined,
    modules: modules as readonly ToolModuleSpecifier[] | undefined,
  };
}

function ignore(): void {}
