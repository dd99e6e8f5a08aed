// QueueToolExecutor: the agent side of running tools on other machines. The shared pipeline
// snapshots, looks up and validates each call here (an invalid call never reaches Redis);
// a validated call becomes one BullMQ job carrying the call's JSON arguments snapshot; a
// worker host runs it (src/queue/host.ts); an event on the queue's stream says it finished,
// and its result is read from the job's own hash (never from the event, which anyone can
// write), to be re-linked and frozen by the pipeline. Every way a call can end without a
// result (abort, timeout, a lost host, a lost Redis, close) settles it here, at once or
// within a bound, and marks its job so that no host starts it afterwards (agent-lease.ts says
// in which order those marks and the agent's lease are written, start-check.ts how hosts read them).
// docs/contract.md: rules 1–13 through the shared pipeline, rule W6 — batches; docs/queue.md — Guarantees, and what is not guaranteed.
import { randomUUID } from "node:crypto";
import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import {
  type ArgumentBudgets,
  type AttachmentBudgets,
  attachmentBudgetsFor,
  DEFAULT_ARGUMENT_BUDGETS,
  DEFAULT_ATTACHMENT_BUDGETS,
  DEFAULT_OUTPUT_BUDGETS,
  outputBudgetsFor,
  type ResolvedAttachmentBudgets,
  readArgumentBudgets,
  readAttachmentBudgets,
  resolveBudgets,
} from "../contract/budgets.js";
import { ContractErrorCode, ToolErrorCode } from "../contract/constants.js";
import { NonRecoverableToolError, ToolContractError } from "../contract/errors.js";
import { describeValue } from "../contract/grammar.js";
import { ArrayIsArray, isProxy, NativePromise, ObjectFreeze, PerformanceNow } from "../contract/primordials.js";
import { adoptAttachments, errorContent, type ToolResultMessage } from "../contract/results.js";
import { checkTimeoutMs } from "../contract/timeout.js";
import { registeredTools, ToolRegistry } from "../contract/tools.js";
import { describeFailure } from "../contract/untrusted.js";
import { integerOr, invalidArgument, readOptions, readOwnOption, validateObject } from "../contract/validators.js";
import { type DurableCallRecords, DurableEngine, recordsOf } from "../durable/store.js";
import { ExecutionLost } from "../executor/durable-call.js";
import { type RunFacts, resolveHooks, type ToolExecutorHooks } from "../executor/hooks.js";
import {
  executeCall,
  executeCalls,
  HOOKS_ELSEWHERE,
  InFlight,
  type Pipeline,
  type PipelineSettings,
  type RunRequest,
} from "../executor/pipeline.js";
import type { ToolOutcome } from "../executor/run-tool.js";
import { abortReason, watchAbort } from "../executor/signal.js";
import type { BatchOptions, CallOptions, ToolExecutor } from "../executor/tool-executor.js";
import { recordArgumentBudgets } from "../executor/tool-executor.js";
import { readTracingOptions, type TracingOptions } from "../executor/tracing-options.js";
import { callAppRefusal } from "../worker/app-refusal.js";
import { loadToolModules, type ToolModuleSpecifier } from "../worker/tool-modules.js";
import { AgentLease } from "./agent-lease.js";
import { BULLMQ_CLOSE_MS, closeRedis, connectOrFail, openRedis, settlesWithin } from "./connection.js";
import {
  checkQueueEvictionPolicy,
  QueueAgentDurable,
  type QueueDurableOptions,
  type QueueDurableSettings,
  readQueueDurableOptions,
} from "./durable.js";
import { EventReader, type RidingRead } from "./event-reader.js";
import { type FinishedReading, finishedRead, finishedReading, readFinishedJobs, readJobStates } from "./job-states.js";
import { jobIdFor, type QueueKeys, queueKeys } from "./keys.js";
import { durationOption, isClusterConnection, type QueueConnection, readConnection, readPrefix, readQueueName } from "./options.js";
import { loadQueuePeers } from "./peers.js";
import { checkPermissions } from "./permissions.js";
import { openRemoteProgress } from "./progress.js";
import { type CancelReason, FINISHED_JOB_RETENTION, failedOutcome, type QueueJobData } from "./protocol.js";
import { decodeProgress, decodeResult, type HostFacts, type JobState, type ResultLimits } from "./redis-data.js";
import { StoppedJobs, THREAD_KILLED_EVENT } from "./thread-facts.js";
import { activeTraceContext } from "./trace-context.js";

/** Options of `QueueToolExecutor.create`. Give exactly one of `modules` and `registry`. */
export interface QueueToolExecutorOptions {
  /** Where Redis is: a `redis://` URL or ioredis connection options. */
  readonly connection: QueueConnection;
  /** The BullMQ queue the worker hosts consume (no ":" in it). */
  readonly queue: string;
  /**
   * The first part of every Redis name of the queue, BullMQ's `prefix` (default "bull"); on a
   * Redis Cluster it must be hash-tagged ("{tools}"). Agents and hosts of a queue give the same.
   */
  readonly prefix?: string;
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
  /** What the agent's spans record, as for every executor (docs/operations.md — Tracing). */
  readonly tracing?: TracingOptions;
  /** Argument budgets of every call, checked here before anything is enqueued (a call's override them; a tool's own only tighten them). */
  readonly argumentBudgets?: ArgumentBudgets;
  /**
   * Attachment budgets of every result (a tool's own override them): they travel with the job,
   * the host bounds the result by them, and this side checks them again before publishing.
   */
  readonly attachmentBudgets?: AttachmentBudgets;
  /** How often in-flight jobs are checked in Redis for a lost host or lost data (default 500, 20..60 000). */
  readonly heartbeatMs?: number;
  /** How long `create()` tries to reach Redis (default 5000, at most 60 000). */
  readonly connectTimeoutMs?: number;
  /**
   * Redis unreachable this long while calls are in flight fails them (default 10 000, at most
   * 600 000). It is also how long the agent's lease lasts: hosts start its jobs only while it
   * has reached Redis within this time.
   */
  readonly redisLostMs?: number;
  /** How long `close()` waits for accepted calls before failing them (default 30 000). */
  readonly closeTimeoutMs?: number;
  /**
   * Settings of durable calls (a call's `durable: { runId }`), whose records live in this
   * queue's Redis: none are needed. Given, the server's eviction policy is checked by
   * `create()` (else at the first durable call). docs/durable.md — On the queue.
   */
  readonly durable?: QueueDurableOptions;
  /**
   * A call whose job no host has taken this long after it was enqueued ends TOOL_EXECUTION_TIMEOUT
   * "no worker host took the call …", its job removed so that it never starts (default 300 000,
   * 100..2^31 - 1): with no host, or none that takes jobs, a call without a time limit ends all the same.
   */
  readonly startTimeoutMs?: number;
}

interface ResolvedOptions {
  readonly connection: QueueConnection;
  readonly queue: string;
  readonly prefix: string;
  readonly settings: PipelineSettings;
  readonly heartbeatMs: number;
  readonly connectTimeoutMs: number;
  readonly redisLostMs: number;
  readonly closeTimeoutMs: number;
  readonly startTimeoutMs: number;
  /** The executor's attachment budgets as jobs carry them: absent when they are the defaults. */
  readonly sentAttachmentBudgets: ResolvedAttachmentBudgets | undefined;
  readonly durable: QueueDurableSettings;
  /** `durable` was given: its eviction check is create()'s. */
  readonly durableGiven: boolean;
}

/** One enqueued call waiting for its job to finish. */
interface PendingJob {
  readonly jobId: string;
  /** When the call was enqueued: Redis's silence is counted for a call from then at the earliest. */
  readonly since: number;
  /** The job's add was sent (the lease was fresh): a cancel is needed from then on. */
  addSent: boolean;
  /** The job is in Redis (its add resolved): from then on the heartbeat watches it. */
  enqueued: boolean;
  /** Consecutive heartbeats that found no job: a restarted Redis, or lost data. */
  missingTicks: number;
  /** A host's thread kill of this job was announced before its result was read. */
  killHeard: boolean;
  /** Its `active` event came (a host took it): its confirmation may ride behind the events read. */
  activeSeen: boolean;
  /** A durable call's job: its confirmation also reads whether its host's outcome is the recorded one (HOST_RECORDED_FIELD). */
  readonly durable: boolean;
  /** Its job's hash says the host's outcome is the recorded one (read with the result, before answer). */
  hostRecorded: boolean;
  /** Its confirmation's HMGET arguments, made at the first confirmation (the job's key is built once a job, not once a read). */
  read: readonly string[] | undefined;
  /** Its confirmation riding behind the events reads, made at the first of them. */
  riding: RidingRead | undefined;
  /** The host's answer, as read from the job's hash (its raw text, still untrusted). */
  answer(text: string): void;
  /** A progress event's data (untrusted), for a call whose caller listens. */
  progress(data: unknown): void;
  /** This side gives up with `outcome`, and marks the job so that no host starts it. */
  giveUp(outcome: ToolOutcome): void;
  /** The job ended without a result (it stalled, failed, or went missing): as giveUp, except that a durable call's record decides what it gets. */
  lost(outcome: ToolOutcome): void;
  /** No host took the job within startTimeoutMs: TOOL_EXECUTION_TIMEOUT, and the job is removed. */
  startTimedOut(): void;
}

/** Jobs with a missing hash this many heartbeats in a row are lost (one tick may race the event). */
const MISSING_TICKS = 2;

/** What `create` connected, handed to the executor once: the queue, the events reader's client and where it starts, every Redis client. */
interface Connected {
  readonly queue: Queue;
  readonly eventsClient: Redis;
  readonly lastEventId: string;
  readonly clients: readonly Redis[];
}

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
  readonly #keys: QueueKeys;
  readonly #events: EventReader;
  /** Our own client: job states, cancel marks and messages, the lease (no offline queue: fails fast). */
  readonly #control: Redis;
  readonly #clients: readonly Redis[];
  /** Unique per executor: it starts every job id of this agent (so two agents' never collide) and names its lease. */
  readonly #agentId = `tg-${randomUUID()}`;
  #jobCount = 0;
  readonly #pending = new Map<string, PendingJob>();
  /** The cancels of the jobs this side stops, and the lease hosts check before they start a job. */
  readonly #lease: AgentLease;
  /** Jobs whose finishing event came, to be confirmed from their hashes in one read. */
  readonly #toConfirm = new Set<string>();
  #confirmScheduled = false;
  /** Adds not yet answered, by job id: a cancel waits for its job's add. */
  readonly #adding = new Map<string, Promise<unknown>>();
  #heartbeat: NodeJS.Timeout | undefined;
  #ticking = false;
  #lastHealthyAt = 0;
  /** Calls and batches accepted and not yet settled: close() waits for them (within closeTimeoutMs). */
  readonly #accepted = new InFlight();
  #closing: Promise<void> | undefined;
  /** close() has given up waiting: a call reaching the runner now is answered, never enqueued. */
  #enqueueClosed = false;
  /** Jobs this side stopped, whose host may still terminate the thread: their `record`, for a late kill. */
  readonly #stopped = new StoppedJobs();
  /** Durable calls' records, in this queue's Redis. */
  readonly #durable: QueueAgentDurable;
  /** An operator's read and forget of them (`durableCalls`). */
  readonly #durableCalls: DurableCallRecords;

  private constructor(registry: ToolRegistry, options: ResolvedOptions, connected: Connected) {
    const { queue, eventsClient, lastEventId, clients } = connected;
    this.#registry = registry;
    this.#keys = queueKeys(options.queue, options.prefix);
    this.#control = clients[0] as Redis;
    // The queue's connection (clients[1]) adds the jobs: a durable call's claim may go out on it right before its job.
    this.#durable = new QueueAgentDurable(
      this.#control,
      this.#keys,
      options.durable,
      options.connectTimeoutMs,
      () => this.#nextJobId("durable"),
      clients[1] as Redis,
    );
    const durableEngine = new DurableEngine(this.#durable);
    this.#durableCalls = recordsOf(durableEngine, "durableCalls");
    this.#pipeline = {
      tools: registeredTools(registry),
      run: (request) => this.#run(request),
      settings: ObjectFreeze({ ...options.settings, durable: durableEngine }),
    };
    recordArgumentBudgets(this, options.settings.argumentBudgets);
    this.#options = options;
    this.#queue = queue;
    this.#clients = clients;
    this.#lease = new AgentLease({
      client: this.#control,
      keys: this.#keys,
      agentId: this.#agentId,
      leaseMs: options.redisLostMs,
      answered: () => {
        this.#lastHealthyAt = PerformanceNow();
      },
      stranded: () => this.#startHeartbeat(),
    });
    // An event only says where to look: the result is read from the job's hash (a forged
    // `completed` event for a job still running finds no result there, and is ignored).
    // Progress and a host's late thread kill are hints too: each is checked before it is used.
    this.#events = new EventReader(
      eventsClient,
      this.#control,
      this.#keys.events,
      lastEventId,
      (event, jobId, data) => {
        if (event === "completed" || event === "failed") {
          if (this.#pending.has(jobId)) this.#confirm(jobId);
        } else if (event === "active") {
          const entry = this.#pending.get(jobId);
          if (entry !== undefined) entry.activeSeen = true;
        } else if (event === "progress") {
          if (data !== undefined) this.#pending.get(jobId)?.progress(decodeProgress(data));
        } else if (event === THREAD_KILLED_EVENT) {
          const entry = this.#pending.get(jobId);
          if (entry !== undefined) entry.killHeard = true;
          else this.#stopped.killed(jobId);
        }
      },
      () => this.#ridingConfirmation(),
    );
    this.#events.start();
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
    await checkPermissions(control, queueKeys(resolved.queue, resolved.prefix), resolved.connection, resolved.connectTimeoutMs);
    if (resolved.durableGiven && !resolved.durable.assumeNoEviction) {
      try {
        await checkQueueEvictionPolicy(control, resolved.connectTimeoutMs);
      } catch (error) {
        await closeRedis(control);
        throw error;
      }
    }
    const eventsClient = openRedis(resolved.connection);
    const clients = [control, openRedis(resolved.connection), eventsClient];
    let queue: Queue | undefined;
    let lastEventId: string;
    try {
      // Events are read from the newest one now: none of this executor's can be missed.
      lastEventId = await EventReader.newestId(control, queueKeys(resolved.queue, resolved.prefix).events);
      queue = new peers.Queue(resolved.queue, { connection: clients[1] as Redis, prefix: resolved.prefix });
      queue.on("error", ignore);
      await withTimeout(Promise.all([queue.waitUntilReady(), eventsClient.connect()]), resolved.connectTimeoutMs);
    } catch (error) {
      if (queue !== undefined) await settlesWithin(queue.close(), BULLMQ_CLOSE_MS);
      await Promise.all(clients.map(closeRedis));
      throw new ToolContractError(
        ContractErrorCode.INVALID_ARGUMENT,
        `the queue ${resolved.queue} could not start: ${describeFailure(error).text}`,
        {
          cause: error,
        },
      );
    }
    return new QueueToolExecutor(tools, resolved, ObjectFreeze({ queue, eventsClient, lastEventId, clients }));
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
  async executeToolCall(call: unknown, signal: AbortSignal, options?: CallOptions): Promise<ToolResultMessage> {
    this.#assertOpen();
    refuseCallApp(options);
    return this.#accepted.track(executeCall(this.#pipeline, call, signal, options));
  }

  /** Many calls, results in call order (the batch semantics of `ToolExecutor.executeBatch`). */
  async executeBatch(calls: readonly unknown[], signal: AbortSignal, options?: BatchOptions): Promise<ToolResultMessage[]> {
    this.#assertOpen();
    refuseCallApp(options);
    return this.#accepted.track(executeCalls(this.#pipeline, calls, signal, options));
  }

  /**
   * Durable calls' records in this queue's Redis, for an operator: `read({ runId, callId })`
   * and `forget({ runId, callId })` (the next call with that key runs), as a store's
   * (docs/durable.md — Operators). They use this executor's connection: after `close()` they reject.
   */
  get durableCalls(): DurableCallRecords {
    return this.#durableCalls;
  }

  /**
   * Stops accepting calls; waits up to `closeTimeoutMs` for every accepted call and batch
   * (batch members not yet dispatched and calls awaiting `beforeExecute` included: they are
   * still enqueued meanwhile), then fails what is still waiting (TOOL_EXECUTION_FAILED, their
   * jobs marked so no host starts them; a call that reaches the runner later is answered so at
   * once, never enqueued), then closes every connection, each step bounded. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#shutDown();
    return this.#closing;
  }

  async #shutDown(): Promise<void> {
    await settlesWithin(this.#accepted.allSettled(), this.#options.closeTimeoutMs);
    this.#enqueueClosed = true;
    for (const entry of [...this.#pending.values()]) entry.giveUp(failedOutcome("the executor closed before the host answered"));
    this.#lease.flush();
    await settlesWithin(this.#lease.settled(), this.#options.redisLostMs);
    this.#stopHeartbeat();
    this.#events.stop();
    // BullMQ's close waits for Redis, which a lost or partitioned link never answers: bounded, then the clients go.
    await settlesWithin(this.#queue.close(), BULLMQ_CLOSE_MS);
    await Promise.all(this.#clients.map(closeRedis));
  }

  #assertOpen(): void {
    if (this.#closing !== undefined) throw new ToolContractError(ContractErrorCode.EXECUTOR_CLOSED, "the QueueToolExecutor is closed");
  }

  /** Enqueues a validated call as one job; settles once, whichever comes first. */
  #run(request: RunRequest): Promise<ToolOutcome> {
    const { call, signal } = request;
    // close() stopped waiting: this call (a batch member, or one whose approval came late) is never enqueued.
    if (this.#enqueueClosed) return NativePromise.resolve(failedOutcome("the executor closed before the call could be enqueued"));
    const limits = resultLimits(request);
    // A durable call's job is the one its claim names (docs/durable.md — On the queue).
    const durable = request.durable;
    const jobId = durable === undefined ? this.#nextJobId(call.id) : durable.token;
    const startedAt = PerformanceNow();
    const remote = request.onProgress === undefined ? undefined : openRemoteProgress(request.onProgress, call.id, call.name, signal);
    return new NativePromise<ToolOutcome>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = (): boolean => {
        if (this.#pending.get(jobId) !== entry) return false;
        this.#pending.delete(jobId);
        remote?.close();
        unwatch();
        if (timer !== undefined) clearTimeout(timer);
        return true;
      };
      const stop = (reason: CancelReason): boolean => {
        if (!finish()) return false;
        // A job never added needs no cancel: its add, waiting for the lease, is never sent now.
        if (entry.addSent) this.#lease.cancel(jobId, reason, this.#adding.get(jobId));
        this.#stopped.remember(jobId, request.record);
        return true;
      };
      const entry: PendingJob = {
        jobId,
        since: PerformanceNow(),
        addSent: false,
        enqueued: false,
        missingTicks: 0,
        killHeard: false,
        activeSeen: false,
        durable: durable !== undefined,
        hostRecorded: false,
        read: undefined,
        riding: undefined,
        answer: (text) => {
          if (!finish()) return;
          const decoded = decodeResult(text, limits);
          // Not started (its claim was given up, or is another job's): the record decides.
          if (durable !== undefined && decoded.notStarted === true) {
            reject(new ExecutionLost("the host did not start the durable call's job"));
            return;
          }
          if (durable !== undefined && (decoded.recorded === true || entry.hostRecorded)) this.#durable.recordedByHost(jobId);
          if (decoded.facts !== undefined) request.record(agentFacts(decoded.facts, PerformanceNow() - startedAt));
          if (decoded.fatal) reject(new NonRecoverableToolError(decoded.message));
          else resolve(withinAttachmentBudgets(decoded.outcome, request));
          // The host stopped the call itself (its time limit, its close()): its thread may be terminated after this answer.
          if (decoded.stopped) {
            this.#stopped.remember(jobId, request.record);
            if (entry.killHeard) this.#stopped.killed(jobId);
          }
        },
        progress: (data) => remote?.deliver(data),
        giveUp: (outcome) => {
          if (stop("gave-up")) resolve(outcome);
        },
        lost: (outcome) => {
          if (durable === undefined) entry.giveUp(outcome);
          else if (stop("gave-up")) reject(new ExecutionLost("the durable call's job ended without a result"));
        },
        // A timeout: should a host take the job as the cancel goes out, its tool is stopped as at a call's limit.
        startTimedOut: () => {
          if (stop("timeout")) resolve(notStartedInTime(this.#options.startTimeoutMs, this.#options.queue));
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
      // Fields set only when present, in the order the job's JSON has always had them (five
      // object spreads, mostly of empty objects, went through V8's copying builtins every call).
      const data: { -readonly [key in keyof QueueJobData]: QueueJobData[key] } = {
        v: 1,
        callId: call.id,
        toolName: call.name,
        arguments: call.arguments,
      };
      // The host stops the tool at the same limit, should this side's cancel never reach it.
      if (timeoutMs !== undefined) data.timeoutMs = timeoutMs;
      if (remote !== undefined) data.progress = true;
      if (this.#options.sentAttachmentBudgets !== undefined) data.attachmentBudgets = this.#options.sentAttachmentBudgets;
      if (durable !== undefined) data.durable = this.#durable.jobDurability(durable.runId);
      const trace = activeTraceContext();
      if (trace.traceparent !== undefined) data.traceparent = trace.traceparent;
      if (trace.tracestate !== undefined) data.tracestate = trace.tracestate;
      // Added only while the agent's lease is fresh (hosts refuse jobs of an agent whose lease expired),
      // and never once the call has settled meanwhile.
      const add = (): Promise<unknown> => {
        if (this.#pending.get(jobId) !== entry) throw new Error("the call settled before its job was added");
        entry.addSent = true;
        return this.#queue.add(call.name, data, {
          jobId,
          attempts: 1,
          removeOnComplete: FINISHED_JOB_RETENTION,
          removeOnFail: FINISHED_JOB_RETENTION,
        });
      };
      // A plain call's job goes at once while the lease is fresh (no promise and no turn before it); a
      // durable call's keeps its path through fresh() (durable.ts orders its claim and its job on this connection).
      const adding = durable === undefined && this.#lease.isFresh() ? add() : this.#lease.fresh().then(add);
      this.#adding.set(jobId, adding);
      adding.then(
        () => {
          this.#adding.delete(jobId);
          entry.enqueued = true;
        },
        (error: unknown) => {
          this.#adding.delete(jobId);
          entry.giveUp(failedOutcome(`the call could not be enqueued: ${describeFailure(error).text}`));
        },
      );
      // A claim sent with its job (durable.ts: claim): one that was not made ends the run as not
      // started, and its job is cancelled (no host would start it: the record does not name it).
      const early = durable === undefined ? undefined : this.#durable.earlyClaim(durable.key, jobId);
      if (early !== undefined) {
        const notMade = (): void => {
          if (stop("gave-up")) reject(new ExecutionLost("the durable call's claim was not made: its job is not started"));
        };
        early.then((made) => {
          if (!made) notMade();
        }, notMade);
      }
    });
  }

  /** A new job id of this agent. */
  #nextJobId(callId: string): string {
    this.#jobCount += 1;
    return jobIdFor(this.#agentId, this.#jobCount, callId);
  }

  #startHeartbeat(): void {
    if (this.#heartbeat !== undefined) return;
    this.#lastHealthyAt = PerformanceNow();
    this.#heartbeat = setInterval(() => void this.#tick(), this.#options.heartbeatMs);
    this.#heartbeat.unref();
    this.#lease.start();
  }

  #stopHeartbeat(): void {
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
    this.#lease.stop();
  }

  /**
   * One look at every enqueued job; fails a call in flight once Redis has been silent for
   * `redisLostMs` of that call's own life (silence from before a call existed is not its).
   */
  async #tick(): Promise<void> {
    if (this.#pending.size === 0 && this.#lease.unsent === 0) {
      this.#stopHeartbeat();
      return;
    }
    const now = PerformanceNow();
    for (const entry of [...this.#pending.values()]) {
      const silentMs = now - Math.max(this.#lastHealthyAt, entry.since);
      if (silentMs > this.#options.redisLostMs) {
        entry.giveUp(
          failedOutcome(
            `Redis did not answer for ${Math.round(silentMs)} ms; the tool may have run, and it will not be started after this`,
          ),
        );
      }
    }
    if (this.#ticking) return;
    this.#ticking = true;
    try {
      const watched = [...this.#pending.values()].filter((entry) => entry.enqueued);
      const states = await readJobStates(
        this.#control,
        this.#keys,
        watched.map((entry) => entry.jobId),
      );
      this.#lastHealthyAt = PerformanceNow();
      for (let index = 0; index < watched.length; index += 1) {
        const job = states[index] as JobState;
        const entry = watched[index] as PendingJob;
        // Still in the wait list (no host took it: a taken job has its start time or its lock).
        if (job.state === "waiting" && this.#lastHealthyAt - entry.since >= this.#options.startTimeoutMs) {
          entry.startTimedOut();
          continue;
        }
        // A finished job whose event never came: the event reader may have lost its place in the stream.
        if (job.state === "completed" || job.state === "failed") this.#events.checkPlace();
        applyState(entry, job);
      }
    } catch {
      // Redis did not answer: #lastHealthyAt stays where it was, and the next tick judges.
    } finally {
      this.#ticking = false;
    }
  }

  /**
   * With exactly one call in flight whose job a host has taken, its confirmation rides behind
   * the next events read (event-reader.ts): the read that wakes with its finishing event
   * brings its hash too, a round trip sooner. Only a hash that says it finished is acted on (a
   * wake-up by any other event finds it unfinished, and the next read carries it again); with
   * several calls in flight the usual confirmation (#confirm) reads them together.
   */
  #ridingConfirmation(): RidingRead | undefined {
    if (this.#pending.size !== 1) return undefined;
    const entry: PendingJob | undefined = this.#pending.values().next().value;
    if (entry === undefined || !entry.activeSeen) return undefined;
    entry.riding ??= {
      hmget: this.#finishedReadOf(entry),
      answer: (reply) => {
        const { job, hostRecorded } = finishedReading(reply, entry);
        if (this.#pending.get(entry.jobId) !== entry || (job.state !== "completed" && job.state !== "failed")) return;
        if (hostRecorded) entry.hostRecorded = true;
        applyState(entry, job);
      },
    };
    return entry.riding;
  }

  /** A pending job's confirmation read, built once. */
  #finishedReadOf(entry: PendingJob): readonly string[] {
    entry.read ??= finishedRead(this.#keys, entry);
    return entry.read;
  }

  /**
   * An event said `jobId` finished: its state is read from the job's hash (the jobs of one
   * turn of the event loop in one request, an HMGET each) and only a finished state is acted
   * on; anything else, or a failed read, is left to the heartbeat.
   */
  #confirm(jobId: string): void {
    this.#toConfirm.add(jobId);
    if (this.#confirmScheduled) return;
    this.#confirmScheduled = true;
    setImmediate(() => {
      this.#confirmScheduled = false;
      const jobIds = [...this.#toConfirm];
      this.#toConfirm.clear();
      // A durable job's mark (HOST_RECORDED_FIELD) is read in its HMGET: one read serves it.
      const jobs = jobIds.map((jobId) => {
        const entry = this.#pending.get(jobId);
        return entry === undefined ? { jobId, durable: false } : { jobId, durable: entry.durable, read: this.#finishedReadOf(entry) };
      });
      readFinishedJobs(this.#control, this.#keys, jobs).then((readings) => {
        for (let index = 0; index < jobIds.length; index += 1) {
          const entry = this.#pending.get(jobIds[index] as string);
          const { job, hostRecorded } = readings[index] as FinishedReading;
          if (entry === undefined || (job.state !== "completed" && job.state !== "failed")) continue;
          if (hostRecorded) entry.hostRecorded = true;
          applyState(entry, job);
        }
      }, ignore);
    });
  }
}

/** What a heartbeat's reading of one job means for its call. */
function applyState(entry: PendingJob, job: JobState): void {
  switch (job.state) {
    case "completed":
      entry.answer(job.returnValue);
      return;
    case "failed":
      entry.lost(failedOutcome(`the job failed on its host: ${job.failedReason}`));
      return;
    case "stalled":
      entry.lost(
        failedOutcome(
          "the host running the tool stopped renewing its job lock (it was killed, or cut off from Redis); the tool may have run, and it will not run again",
        ),
      );
      return;
    case "not-a-job":
      entry.lost(failedOutcome("the job's key in Redis holds something that is not a job (another client wrote it)"));
      return;
    case "missing":
      entry.missingTicks += 1;
      if (entry.missingTicks >= MISSING_TICKS) {
        entry.lost(
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

/**
 * What bounds the call's result as this side reads it: the content budget the host serialized
 * under (the agent holds the definition: the tool's own, else the default) and the call's
 * attachment budgets (the tool's own over this executor's).
 */
function resultLimits(request: RunRequest): ResultLimits {
  const attachments = attachmentBudgetsFor(request.tool.attachmentBudgets, request.attachmentBudgets);
  return {
    maxContentCodePoints: outputBudgetsFor(request.tool.budgets, DEFAULT_OUTPUT_BUDGETS).maxContentCodePoints,
    maxAttachmentBytes: attachments.maxAttachmentBytes,
    maxAttachments: attachments.maxAttachments,
  };
}

/**
 * A host's outcome against the call's attachment budgets (the tool's own over this
 * executor's): attachments over them are not a result this side accepts.
 */
function withinAttachmentBudgets(outcome: ToolOutcome, request: RunRequest): ToolOutcome {
  const attachments = outcome.attachments;
  if (attachments === undefined) return outcome;
  const adopted = adoptAttachments(attachments, attachmentBudgetsFor(request.tool.attachmentBudgets, request.attachmentBudgets));
  if (typeof adopted === "string") return failedOutcome(`the host's attachments are refused: ${adopted}`);
  return ObjectFreeze({ content: outcome.content, isError: outcome.isError, attachments: adopted });
}

/**
 * The host's facts as this side's: the run is the host's, the wait everything else (the
 * time in Redis, waiting for a host and for its thread, and the way back), so that
 * `onCallEnd`'s `runMs` is the tool's time on its host.
 */
function agentFacts(facts: HostFacts, elapsedMs: number): RunFacts {
  return {
    queueWaitMs: elapsedMs > facts.runMs ? elapsedMs - facts.runMs : 0,
    ...(facts.threadId === undefined ? {} : { threadId: facts.threadId }),
    ...(facts.killed ? { threadKilled: true } : {}),
  };
}

/** A call whose job no host took within startTimeoutMs. */
function notStartedInTime(startTimeoutMs: number, queue: string): ToolOutcome {
  return ObjectFreeze({
    content: errorContent(ToolErrorCode.EXECUTION_TIMEOUT, {
      text: `no worker host took the call within ${startTimeoutMs} ms (startTimeoutMs): is a host running on the queue ${queue}, and taking jobs? The tool did not start, and it will not start after this`,
      cut: false,
    }),
    isError: true,
  });
}

function timedOut(timeoutMs: number): ToolOutcome {
  return ObjectFreeze({
    content: errorContent(ToolErrorCode.EXECUTION_TIMEOUT, { text: `the tool did not finish within ${timeoutMs} ms`, cut: false }),
    isError: true,
  });
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
];

/** INVALID_ARGUMENT for a call's (or batch's) `app`: it cannot cross machines. */
function refuseCallApp(options: unknown): void {
  if (callAppRefusal(options) !== undefined) invalidArgument(REFUSED_OPTIONS[0]?.[1] as string);
}

/** The QueueToolExecutor's options: the shared ones it takes, and its own. */
const QUEUE_OPTION_KEYS: readonly string[] = ObjectFreeze([
  "connection",
  "queue",
  "prefix",
  "modules",
  "registry",
  "timeoutMs",
  "hooks",
  "tracing",
  "argumentBudgets",
  "heartbeatMs",
  "connectTimeoutMs",
  "redisLostMs",
  "closeTimeoutMs",
  "durable",
  "startTimeoutMs",
  // refused, each with its reason (REFUSED_OPTIONS)
  "app",
  "outputBudgets",
  "attachmentBudgets",
]);

function resolveOptions(options: QueueToolExecutorOptions): {
  resolved: ResolvedOptions;
  registry: ToolRegistry | undefined;
  modules: readonly ToolModuleSpecifier[] | undefined;
} {
  validateObject(options, "options");
  // The refused ones first: each says why it cannot apply here, which says more than "unknown".
  for (const [name, refusal] of REFUSED_OPTIONS) if (readOwnOption(options, name, "options") !== undefined) invalidArgument(refusal);
  const raw = readOptions(options, "options", QUEUE_OPTION_KEYS, HOOKS_ELSEWHERE);
  const { modules, registry } = raw;
  if ((modules === undefined) === (registry === undefined)) invalidArgument("give exactly one of options.modules and options.registry");
  if (modules !== undefined && (!ArrayIsArray(modules) || isProxy(modules) || modules.length === 0)) {
    invalidArgument(`options.modules must be a non-empty array of tool module URLs or paths (got ${describeValue(modules)})`);
  }
  if (registry !== undefined && !(registry instanceof ToolRegistry)) {
    invalidArgument(`options.registry must be a ToolRegistry (got ${describeValue(registry)})`);
  }
  const connection = readConnection(raw.connection);
  const redisLostMs = integerOr(raw.redisLostMs, "options.redisLostMs", { min: 100, max: 600_000, fallback: 10_000 });
  const settings: PipelineSettings = ObjectFreeze({
    timeoutMs:
      raw.timeoutMs === undefined ? undefined : checkTimeoutMs(raw.timeoutMs, "options.timeoutMs", ContractErrorCode.INVALID_ARGUMENT),
    hooks: raw.hooks === undefined ? undefined : resolveHooks(raw.hooks),
    tracing: readTracingOptions(raw.tracing),
    app: undefined,
    argumentBudgets: resolveBudgets(
      DEFAULT_ARGUMENT_BUDGETS,
      raw.argumentBudgets === undefined ? undefined : readArgumentBudgets(raw.argumentBudgets, "options.argumentBudgets"),
    ),
    outputBudgets: DEFAULT_OUTPUT_BUDGETS,
    attachmentBudgets: resolveBudgets(
      DEFAULT_ATTACHMENT_BUDGETS,
      raw.attachmentBudgets === undefined ? undefined : readAttachmentBudgets(raw.attachmentBudgets, "options.attachmentBudgets"),
    ),
  });
  return {
    resolved: {
      connection,
      queue: readQueueName(raw.queue),
      prefix: readPrefix(raw.prefix, connection),
      settings,
      heartbeatMs: integerOr(raw.heartbeatMs, "options.heartbeatMs", { min: 20, max: 60_000, fallback: 500 }),
      connectTimeoutMs: integerOr(raw.connectTimeoutMs, "options.connectTimeoutMs", { min: 1, max: 60_000, fallback: 5000 }),
      redisLostMs,
      closeTimeoutMs: durationOption("closeTimeoutMs", raw.closeTimeoutMs, 0, 30_000),
      startTimeoutMs: durationOption("startTimeoutMs", raw.startTimeoutMs, 100, 300_000),
      sentAttachmentBudgets: settings.attachmentBudgets === DEFAULT_ATTACHMENT_BUDGETS ? undefined : settings.attachmentBudgets,
      durable: readQueueDurableOptions(raw.durable, isClusterConnection(connection)),
      durableGiven: raw.durable !== undefined,
    },
    registry: registry as ToolRegistry | undefined,
    modules: modules as readonly ToolModuleSpecifier[] | undefined,
  };
}

function ignore(): void {}
