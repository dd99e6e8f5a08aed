// A worker host: consumes a toolgate queue and runs each job in a local WorkerToolExecutor,
// so the host half of a call is the worker executor's whole contract (its own snapshot and
// validation of the JSON arguments, `execute` and the serializer in a thread, a spinning
// tool's thread terminated after the grace period) and the host keeps serving. A host takes
// as many jobs as it has threads (a finished job's completion brings the next one in the same
// round trip), and one more per thread only while completions keep bringing jobs
// (fetch-ahead.ts): a job taken ahead waits on the host for a thread; a job whose fetch or wait
// for a thread took long (a stalled connection) is
// confirmed against Redis before it starts (start-check.ts), so a job the agent has given up
// on is not started; a cancel message over Redis pub/sub aborts the signal of the job's running tool.
// docs/contract.md: rules W1–W5 on the host, through WorkerToolExecutor; docs/queue.md — Topology.
import type { Server } from "node:http";
import { availableParallelism } from "node:os";
import type { Job } from "bullmq";
import type { Redis } from "ioredis";
import {
  type AttachmentBudgets,
  attachmentBudgetsFor,
  DEFAULT_ATTACHMENT_BUDGETS,
  type ResolvedAttachmentBudgets,
  readAttachmentBudgets,
  resolveBudgets,
} from "../contract/budgets.js";
import { ContractErrorCode, Limits, ToolErrorCode } from "../contract/constants.js";
import { isNonRecoverableToolError } from "../contract/errors.js";
import { describeValue } from "../contract/grammar.js";
import { ArrayIsArray, isProxy } from "../contract/primordials.js";
import { errorContent, type ToolResultMessage } from "../contract/results.js";
import { cutToCodePoints } from "../contract/serialize.js";
import { checkTimeoutMs } from "../contract/timeout.js";
import type { ToolRegistry } from "../contract/tools.js";
import { describeFailure, readDataProperty } from "../contract/untrusted.js";
import { integerOr, invalidArgument, readOptions, validateFunction } from "../contract/validators.js";
import { DurableEngine, storeOf } from "../durable/store.js";
import { threadBootFailures, WorkerToolExecutor } from "../worker/executor.js";
import { MAX_THREADS } from "../worker/options.js";
import type { ToolModuleSpecifier } from "../worker/tool-modules.js";
import { closeRedis, connectOrFail, openRedis, settlesWithin } from "./connection.js";
import { QueueHostDurable, readJobDurability } from "./durable.js";
import { FetchAhead, ThreadSlots } from "./fetch-ahead.js";
import { FetchWatchdog } from "./fetch-watchdog.js";
import { closeServer, HostMetrics } from "./host-metrics.js";
import { type QueueKeys, queueKeys, readJobId } from "./keys.js";
import { durationOption, type QueueConnection, readConnection, readPrefix, readQueueName } from "./options.js";
import { loadQueuePeers } from "./peers.js";
import { checkPermissions } from "./permissions.js";
import { relayToJob } from "./progress.js";
import type { CancelReason, NotStartedReason, QueueJobResult } from "./protocol.js";
import { decodeCancel, decodeJobData, readCancelReason } from "./redis-data.js";
import { attachmentsOverBudget, carriedOf, encodeAttachments } from "./result-codec.js";
import { FETCH_WAIT_MS, StartCheck } from "./start-check.js";
import { announceThreadKilled, HostFactsBook } from "./thread-facts.js";
import { withinJobTrace } from "./trace-context.js";

/** Options of `runToolWorkerHost`. */
export interface ToolWorkerHostOptions {
  /** Where Redis is: a `redis://` URL or ioredis connection options. */
  readonly connection: QueueConnection;
  /** The queue to consume (the agents' `QueueToolExecutor` queue). */
  readonly queue: string;
  /** The queue's Redis prefix, as its agents give it (default "bull"; hash-tagged on a Redis Cluster: "{tools}"). */
  readonly prefix?: string;
  /** Tool modules this host runs (ES modules default-exporting tool definitions). */
  readonly modules: readonly ToolModuleSpecifier[];
  /**
   * Worker threads (default `os.availableParallelism()`, at most 256: MAX_THREADS). The host takes as
   * many jobs at once (twice as many while completions keep bringing jobs: fetch-ahead.ts); the
   * others wait in Redis, where an agent's cancel removes them.
   */
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
  /** Told of BullMQ and Redis errors the host survives (a lost connection, a failed lock renewal, a stall its fetch watchdog found). */
  readonly onError?: (error: unknown) => void;
  /**
   * Serve GET /metrics (Prometheus text), /healthz and /readyz on this TCP port, all interfaces
   * (0: a free port, see `ToolWorkerHost.metricsPort`; default: no server). docs/queue.md — Watching a host (metrics and health).
   */
  readonly metricsPort?: number;
  /**
   * A host with a thread free that takes no job this long while jobs wait in its queue, or whose
   * check of its queue Redis does not answer this long, counts itself stuck: /readyz says so, and
   * it makes its connections again (default 15 000, 1000..600 000). docs/queue.md — Watching a host.
   */
  readonly fetchStallMs?: number;
}

/** A running worker host. */
export interface ToolWorkerHost {
  readonly queue: string;
  /** A copy of the registry the host's executor built from the modules. */
  readonly registry: ToolRegistry;
  /** The port /metrics, /healthz and /readyz are served on, when `metricsPort` was given. */
  readonly metricsPort: number | undefined;
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
  readonly prefix: string;
  readonly modules: readonly ToolModuleSpecifier[];
  readonly threads: number;
  readonly timeoutMs: number | undefined;
  readonly abortGraceMs: number;
  readonly lockDurationMs: number;
  readonly connectTimeoutMs: number;
  readonly closeTimeoutMs: number;
  readonly onError: (error: unknown) => void;
  readonly metricsPort: number | undefined;
  readonly fetchStallMs: number;
}

const CANCELLED: QueueJobResult = { kind: "cancelled" };
const ATTACHMENT_LIMITS = { maxAttachments: Limits.ATTACHMENTS_LIMIT, maxAttachmentBytes: Limits.ATTACHMENT_BYTES_LIMIT };
/** How often the cancel marks of running jobs are read (a fallback for lost cancel messages). */
const CANCEL_POLL_MS = 1000;
/** How long, and how many, cancel messages of jobs not running here are kept. */
const EARLY_CANCEL_MS = 60_000;
const EARLY_CANCELS_KEPT = 10_000;
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
  const keys = queueKeys(resolved.queue, resolved.prefix);
  const control = openRedis(resolved.connection, { enableOfflineQueue: false, commandTimeout: resolved.lockDurationMs });
  await connectOrFail(control, resolved.connectTimeoutMs, resolved.connection);
  await checkPermissions(control, keys, resolved.connection, resolved.connectTimeoutMs);
  const subscriber = openRedis(resolved.connection);
  const workerClient = openRedis(resolved.connection);
  const clients: Redis[] = [control, subscriber, workerClient];
  let executor: WorkerToolExecutor;
  const facts = new HostFactsBook((jobId) => announceThreadKilled(control, keys, jobId));
  let closing: Promise<void> | undefined;
  const metrics =
    resolved.metricsPort === undefined
      ? undefined
      : new HostMetrics({
          threads: resolved.threads,
          // A taken job waits for a thread (fetched ahead: fetch-ahead.ts) and its start check.
          threadsBusy: () => running.size - starting,
          jobsWaitingForThread: () => starting,
          threadBootFailures: () => threadBootFailures(executor),
          ready: () => closing === undefined && clients.every((client) => client.status === "ready"),
          stalled: () => watchdog.problem,
        });
  for (const client of clients) client.on("reconnecting", () => metrics?.redisReconnecting());
  // Durable jobs run as durable calls of the host's executor, whose record is the job's own claim (durable.ts).
  const durableJobs = new QueueHostDurable(control, keys, workerClient);
  try {
    executor = await WorkerToolExecutor.create({
      durable: { store: storeOf(new DurableEngine(durableJobs)) },
      modules: resolved.modules,
      hooks: metrics === undefined ? facts.hooks : metrics.hooksOver(facts.hooks),
      // The job's budgets bound each result (encodeResult): the pool's own admit anything a budget may.
      attachmentBudgets: ATTACHMENT_LIMITS,
      minThreads: 1,
      maxThreads: resolved.threads,
      abortGraceMs: resolved.abortGraceMs,
      ...(resolved.timeoutMs === undefined ? {} : { timeoutMs: resolved.timeoutMs }),
    });
  } catch (error) {
    await Promise.all(clients.map(closeRedis));
    throw error;
  }

  /** The host's tools, for their own attachment budgets. */
  const tools = executor.registry;
  /** The signals of the jobs running here, by job id. */
  const running = new Map<string, AbortController>();
  /**
   * Controllers of plain jobs that ended without an abort, for the next jobs: on Node 20 a new
   * signal and the pipeline's listener on it cost a job about 12 µs of the main thread, an
   * AbortSignal watched before costs nothing (executor/signal.ts keeps one listener per signal).
   * At most one per job running at once.
   */
  const idleControllers: AbortController[] = [];
  /** Of those, the jobs not yet past their wait for a thread and their start check (the metrics' jobs waiting for a thread). */
  let starting = 0;
  /** Woken when the last running job ends (close() waits for that, not for BullMQ's bookkeeping). */
  const idleWaiters: (() => void)[] = [];
  const whenIdle = (): Promise<void> =>
    running.size === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(() => resolve()));
  /** Cancels of jobs not (yet) running here: one this host has taken may not have reached runJob. */
  const early = new EarlyCancels();
  subscriber.on("message", (_channel: string, message: string) => {
    const cancel = decodeCancel(message);
    if (cancel === undefined) return;
    const controller = running.get(cancel.jobId);
    if (controller !== undefined) controller.abort(stopReason(cancel.reason));
    else early.add(cancel.jobId, cancel.reason);
  });
  await subscriber.connect();
  await subscriber.subscribe(keys.cancelChannel);
  // Pub/sub drops messages while a connection is down: the marks are read again while jobs run.
  const markPoll = setInterval(() => void abortMarked(control, keys, running), CANCEL_POLL_MS);
  markPoll.unref();
  const startCheck = new StartCheck(control, keys);
  const threadSlots = new ThreadSlots(resolved.threads);
  const fetchAhead = new FetchAhead(resolved.threads, (concurrency) => {
    worker.concurrency = concurrency;
  });
  // Whatever this host knew of leases is from before a connection was made again (start-check.ts).
  for (const client of [control, workerClient]) client.on("ready", () => startCheck.reconnected());

  // Two parameters, not BullMQ's third (a signal): for a processor that takes one BullMQ makes an
  // AbortController per job, aborted only by worker.cancelJob/cancelAllJobs, which this host never
  // calls (cancels come on its own channel, above): per-job work on the critical path for nothing.
  const runJob = async (job: Job, token: string | undefined): Promise<QueueJobResult> => {
    watchdog.taken();
    /** When this job took a thread (undefined: it did not). */
    let tookThreadAt: number | undefined;
    const jobId = readJobId(job.id);
    if (jobId === undefined) return notStarted("no-agent");
    const controller = idleControllers.pop() ?? new AbortController();
    // Registered before anything waits: a cancel message from now on aborts it.
    running.set(jobId, controller);
    let book: ReturnType<HostFactsBook["begin"]> | undefined;
    const data = decodeJobData(job.data);
    /** A durable job's key, once announced to durableJobs: its record says whether the tool may start. */
    let durableKey: string | undefined;
    /** How the durable call ended here ("refused": the record did not let the job start; the agent hears "not started"). */
    const durableEnd = (): "refused" | "recorded" | undefined =>
      durableKey === undefined ? undefined : durableJobs.done(durableKey, jobId);
    try {
      const reason = early.take(jobId);
      if (reason !== undefined) controller.abort(stopReason(reason));
      // The fetch may have come back late, and a job fetched ahead waits here for a thread: its
      // start check is made once it holds one (it waited: confirmed against Redis).
      const fetchedAt = typeof job.processedOn === "number" ? job.processedOn : 0;
      starting += 1;
      let refusal: NotStartedReason | undefined;
      try {
        // Both answer at once on the common path (a thread free, no reading needed): awaited only when they wait.
        const slot = threadSlots.take(controller.signal);
        if (slot === true || (slot !== false && (await slot))) tookThreadAt = performance.now();
        const checked = startCheck.check({
          id: jobId,
          token,
          waited: Date.now() - fetchedAt >= FETCH_WAIT_MS,
          signal: controller.signal,
        });
        refusal = typeof checked === "object" ? await checked : checked;
      } finally {
        starting -= 1;
      }
      if (refusal !== undefined) return notStarted(refusal);
      const durability = readJobDurability(data.durable);
      if (typeof durability === "string") return refusedJob(durability);
      if (durability !== undefined) {
        if (data.callId === undefined) return refusedJob("a durable job needs a call id");
        durableKey = durableJobs.expect(jobId, data.callId, durability);
        if (durableKey === undefined) return notStarted("durable");
      }
      const budgets = jobAttachmentBudgets(data.attachmentBudgets, tools.get(String(data.call.name))?.attachmentBudgets);
      // The agent's limit for the call: the host's pipeline applies it as the call's own (a
      // malformed one is refused with the job, as a malformed call is).
      const timeoutMs = data.timeoutMs;
      // None to give (the common job): the pipeline then reads no options object.
      const options =
        timeoutMs === undefined && !data.progress && durability === undefined
          ? undefined
          : {
              ...(timeoutMs === undefined ? {} : { timeoutMs }),
              ...(data.progress ? { onProgress: relayToJob(job) } : {}),
              ...(durability === undefined ? {} : { durable: { runId: durability.runId } }),
            };
      if (data.callId !== undefined) book = facts.begin(jobId, data.callId);
      const message = await withinJobTrace(job.data, () => executor.executeToolCall(data.call, controller.signal, options));
      const ended = durableEnd();
      if (ended === "refused") return refusedByRecord(data.callId);
      return withFacts(recordedIf(ended, encodeMessage(message, budgets)), book, data.callId);
    } catch (error) {
      const ended = durableEnd();
      if (ended === "refused") return refusedByRecord(data.callId);
      return withFacts(recordedIf(ended, encodeFailure(error, controller.signal)), book, data.callId);
    } finally {
      durableEnd();
      if (tookThreadAt !== undefined) threadSlots.give();
      fetchAhead.finished(token, tookThreadAt === undefined ? 0 : performance.now() - tookThreadAt);
      running.delete(jobId);
      // No longer reachable by a cancel or close(), and watched by nothing now that its call has
      // settled (the pipeline, the thread slots and the start check let go of the signal when they
      // answer; a durable call's engine or a progress relay might not): the next job's.
      if (!controller.signal.aborted && data.durable === undefined && !data.progress) idleControllers.push(controller);
      if (running.size === 0) for (const wake of idleWaiters.splice(0)) wake();
    }
  };

  /**
   * A durable job its record did not let start: "not started", and its call forgotten by the
   * facts book: the record refuses at the claim its call makes, after the book began any job with a call id.
   */
  const refusedByRecord = (callId: string | undefined): QueueJobResult => {
    if (callId !== undefined) facts.abandon(callId);
    return notStarted("durable");
  };

  /** The result with the host's facts of its call, when its hooks told them. */
  const withFacts = (result: QueueJobResult, book: ReturnType<HostFactsBook["begin"]> | undefined, callId: unknown): QueueJobResult => {
    if (book === undefined) return result;
    const known = facts.end(book, callId as string);
    // The facts first: a field added after a spread goes through V8's runtime (about 0.6 µs a job on Node 20).
    return known === undefined ? result : { facts: known, ...result };
  };

  const watchdog = new FetchWatchdog({
    client: control,
    waitKey: keys.wait,
    stallMs: resolved.fetchStallMs,
    freeThreads: () => resolved.threads - running.size,
    stalled: (reason, cutOff) => {
      metrics?.fetchStalled();
      resolved.onError(new Error(`the host is stuck: ${reason}; it makes its connections to Redis again`));
      // The commands never answered are sent again on the new connections (ioredis's
      // autoResendUnfulfilledCommands): BullMQ's fetch among them. Cut off, every connection is suspect.
      for (const client of cutOff ? clients : [workerClient]) reconnect(client);
      // BullMQ's own blocking connection (it resets it too when its wait overruns, 1 s past BullMQ's drainDelay).
      void worker.backend.blockingClient?.then(reconnect, ignore);
    },
  });
  const worker = new Worker(resolved.queue, runJob, {
    connection: workerClient,
    prefix: resolved.prefix,
    // One job per thread (two while armed: fetch-ahead.ts). A crashed host's taken
    // jobs stall and fail (maxStalledCount 0): none runs twice (docs/queue.md).
    concurrency: resolved.threads,
    lockDuration: resolved.lockDurationMs,
    stalledInterval: resolved.lockDurationMs,
    // A stalled job (its host died) fails instead of running again: tools have side effects.
    maxStalledCount: 0,
  });
  worker.on("error", resolved.onError);
  // Both in the order BullMQ's fetches came back (a job's "active" is emitted before its processor runs).
  worker.on("active", (job: Job) => fetchAhead.arrived(job.token));
  worker.on("drained", () => fetchAhead.drained());
  let server: Server | undefined;
  try {
    await worker.waitUntilReady();
    if (metrics !== undefined) server = await metrics.serve(resolved.metricsPort as number);
    watchdog.start();
  } catch (error) {
    await worker.close(true);
    clearInterval(markPoll);
    await executor.close();
    await Promise.all(clients.map(closeRedis));
    throw error;
  }

  const metricsAddress = server?.address();
  return {
    queue: resolved.queue,
    metricsPort: typeof metricsAddress === "object" && metricsAddress !== null ? metricsAddress.port : undefined,
    get registry() {
      return executor.registry;
    },
    close() {
      closing ??= (async () => {
        watchdog.stop();
        const graceful = worker.close();
        // Running jobs get closeTimeoutMs; once none runs, BullMQ's close gets STOPPED_JOBS_RECORD_MS
        // to record their results (it waits for Redis, which a partitioned link never answers).
        const finished = Promise.race([graceful, whenIdle().then(() => settlesWithin(graceful, STOPPED_JOBS_RECORD_MS))]);
        if (!(await settlesWithin(finished, resolved.closeTimeoutMs))) {
          for (const controller of running.values()) controller.abort(stopReason("gave-up"));
          // The stopped jobs answer at once; recording that needs Redis, which may be gone.
          await settlesWithin(graceful, resolved.abortGraceMs + STOPPED_JOBS_RECORD_MS);
        }
        clearInterval(markPoll);
        await executor.close();
        await Promise.all(clients.map(closeRedis));
        if (server !== undefined) await closeServer(server);
      })();
      return closing;
    },
  };
}

/**
 * Drops a connection and makes it again (through the sentinels, to the current primary); one
 * BullMQ left for good is connected again.
 */
function reconnect(client: { readonly status: string; connect(): Promise<void>; disconnect(reconnect?: boolean): void }): void {
  if (client.status === "end") client.connect().catch(ignore);
  else if (client.status === "ready") client.disconnect(true);
}

/** The answer to a job the host did not start: the agent says why, in words (redis-data.ts). */
function notStarted(reason: NotStartedReason): QueueJobResult {
  return { kind: "not-started", reason };
}

/** A durable job's answer that is its record's outcome says so: its agent need not read the record. */
function recordedIf(ended: "recorded" | undefined, result: QueueJobResult): QueueJobResult {
  return ended === "recorded" && (result.kind === "result" || result.kind === "fatal") ? { ...result, recorded: true } : result;
}

/** The answer to a job whose data no agent writes: refused, as a malformed call is. */
function refusedJob(why: string): QueueJobResult {
  return {
    kind: "result",
    content: errorContent(ToolErrorCode.EXECUTION_FAILED, { text: `the host refused the job: ${why}`, cut: false }),
    isError: true,
  };
}

/** Cancel messages for jobs not running here, kept a while (bounded) for a job taken but not yet started. */
class EarlyCancels {
  readonly #reasons = new Map<string, { readonly reason: CancelReason; readonly at: number }>();

  add(jobId: string, reason: CancelReason): void {
    const now = performance.now();
    this.#reasons.set(jobId, { reason, at: now });
    for (const [oldest, entry] of this.#reasons) {
      if (this.#reasons.size <= EARLY_CANCELS_KEPT && now - entry.at <= EARLY_CANCEL_MS) break;
      this.#reasons.delete(oldest);
    }
  }

  take(jobId: string): CancelReason | undefined {
    const entry = this.#reasons.get(jobId);
    if (entry === undefined) return undefined;
    this.#reasons.delete(jobId);
    return entry.reason;
  }
}

/** Aborts every running job whose cancel mark is set; Redis errors wait for the next poll. */
async function abortMarked(control: Redis, keys: QueueKeys, running: Map<string, AbortController>): Promise<void> {
  if (running.size === 0) return;
  const jobIds = [...running.keys()];
  let marks: unknown;
  try {
    marks = await control.mget(jobIds.map((jobId) => keys.mark(jobId)));
  } catch {
    return;
  }
  if (!ArrayIsArray(marks)) return;
  for (let index = 0; index < jobIds.length; index += 1) {
    const reason = readCancelReason(marks[index]);
    if (reason !== undefined) running.get(jobIds[index] as string)?.abort(stopReason(reason));
  }
}

/** A result message as a job's return value: its attachments within the call's budgets, in base64. */
function encodeMessage(message: ToolResultMessage, budgets: ResolvedAttachmentBudgets): QueueJobResult {
  const attachments = carriedOf(message);
  if (attachments === undefined) return { kind: "result", content: message.content, isError: message.isError };
  const over = attachmentsOverBudget(attachments, budgets);
  if (over !== undefined) {
    return {
      kind: "result",
      content: errorContent(ToolErrorCode.OUTPUT_SERIALIZATION_FAILED, {
        text: `the tool's attachments are over the call's budgets: ${over}`,
        cut: false,
      }),
      isError: true,
    };
  }
  return { kind: "result", content: message.content, isError: message.isError, attachments: encodeAttachments(attachments) };
}

/** The call's attachment budgets: the tool's own over the agent's (from the job), over the defaults. */
function jobAttachmentBudgets(fromJob: unknown, toolBudgets: AttachmentBudgets | undefined): ResolvedAttachmentBudgets {
  const agents =
    fromJob === undefined
      ? DEFAULT_ATTACHMENT_BUDGETS
      : resolveBudgets(DEFAULT_ATTACHMENT_BUDGETS, readAttachmentBudgets(fromJob, "the job's attachmentBudgets"));
  return attachmentBudgetsFor(toolBudgets, agents);
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
    // Cut here as the agent cuts it: a tool's huge message is not written to Redis.
    return { kind: "fatal", message: typeof message === "string" ? cutToCodePoints(message, Limits.MAX_STRING_CODE_POINTS).text : "" };
  }
  // A ToolContractError: the job's data was not a well-formed call (not written by an agent).
  const failure = describeFailure(error);
  return {
    kind: "result",
    content: errorContent(ToolErrorCode.EXECUTION_FAILED, { text: `the host refused the job: ${failure.text}`, cut: failure.cut }),
    isError: true,
  };
}

const HOST_OPTION_KEYS: readonly string[] = [
  "connection",
  "queue",
  "prefix",
  "modules",
  "threads",
  "timeoutMs",
  "abortGraceMs",
  "lockDurationMs",
  "connectTimeoutMs",
  "closeTimeoutMs",
  "onError",
  "metricsPort",
  "fetchStallMs",
];

function resolveHostOptions(options: ToolWorkerHostOptions): ResolvedHostOptions {
  const raw = readOptions(options, "options", HOST_OPTION_KEYS);
  const modules = raw.modules;
  if (!ArrayIsArray(modules) || isProxy(modules) || modules.length === 0) {
    invalidArgument(`options.modules must be a non-empty array of tool module URLs or paths (got ${describeValue(modules)})`);
  }
  const onError = raw.onError;
  if (onError !== undefined) validateFunction(onError, "options.onError");
  const connection = readConnection(raw.connection);
  return {
    connection,
    queue: readQueueName(raw.queue),
    prefix: readPrefix(raw.prefix, connection),
    modules: modules as readonly ToolModuleSpecifier[],
    threads: integerOr(raw.threads, "options.threads", { min: 1, max: MAX_THREADS, fallback: availableParallelism() }),
    timeoutMs:
      raw.timeoutMs === undefined ? undefined : checkTimeoutMs(raw.timeoutMs, "options.timeoutMs", ContractErrorCode.INVALID_ARGUMENT),
    // Bounded below MAX_DELAY_MS: close() waits this long plus the time to record the stopped jobs.
    abortGraceMs: integerOr(raw.abortGraceMs, "options.abortGraceMs", { min: 0, max: 600_000, fallback: 1000 }),
    lockDurationMs: integerOr(raw.lockDurationMs, "options.lockDurationMs", { min: 500, max: 600_000, fallback: 30_000 }),
    connectTimeoutMs: integerOr(raw.connectTimeoutMs, "options.connectTimeoutMs", { min: 1, max: 60_000, fallback: 5000 }),
    closeTimeoutMs: durationOption("closeTimeoutMs", raw.closeTimeoutMs, 0, 30_000),
    onError: (onError as ((error: unknown) => void) | undefined) ?? ignore,
    metricsPort:
      raw.metricsPort === undefined ? undefined : integerOr(raw.metricsPort, "options.metricsPort", { min: 0, max: 65_535, fallback: 0 }),
    fetchStallMs: integerOr(raw.fetchStallMs, "options.fetchStallMs", { min: 1000, max: 600_000, fallback: 15_000 }),
  };
}

function ignore(): void {}
