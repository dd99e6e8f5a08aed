// Durable calls on the queue: their records live in the queue's own Redis, under its prefix
// (so on a Cluster they share the queue's slot), in the record format and with the scripts of
// redisDurableStore (src/durable/scripts.ts). The agent claims a key and enqueues the job whose
// id is the claim's token; only a host that finds the record still claimed by that very job
// starts the tool (the record becomes running, under the host's lease), and the host records
// the outcome before BullMQ completes the job. The agent renews the claim until a host starts
// it, then watches the host's lease: a host that died stops renewing, and the record is lost.
// So a job of a claim that was given up (released), or of another caller's claim, never runs
// the tool, and a host that was cut off loses to the stall its agent observed first.
// docs/durable.md — On the queue.
import type { Redis } from "ioredis";
import { Limits } from "../contract/constants.js";
import {
  ArrayIsArray,
  NativePromise,
  NumberIsSafeInteger,
  ObjectFreeze,
  PerformanceNow,
  SetImmediate,
  SetTimeout,
} from "../contract/primordials.js";
import { integerOr, invalidArgument, readOptions, validateBoolean } from "../contract/validators.js";
import type { ClaimOrder, DurableBackend, RawClaim, RawRecord, Renewal } from "../durable/backend.js";
import { durableKeyOf } from "../durable/key.js";
import {
  DEFAULT_LEASE_MS,
  DEFAULT_RETENTION_MS,
  MAX_RETENTION_MS,
  MIN_RETENTION_MS,
  readWriteConcern,
  type WriteConcern,
} from "../durable/options.js";
import { checkEvictionPolicy } from "../durable/redis-store.js";
import { DURABLE_SCRIPTS } from "../durable/scripts.js";
import { checkId } from "../durable/store.js";
import type { QueueKeys } from "./keys.js";
import { type QueueScript, runScript } from "./scripts.js";

/** The queue executor's `durable` option: settings of the durable calls it makes (none are needed). */
export interface QueueDurableOptions {
  /** How long a record is kept after its last write, in ms (1 minute to 30 days; default 24 hours), on Redis' clock. */
  readonly retentionMs?: number;
  /** A claim's lease in ms (1000 to 60 000; default 15 000): a host that stops renewing it that long has lost its execution. */
  readonly leaseMs?: number;
  /**
   * Skips the `maxmemory-policy` check, for a managed Redis that hides `CONFIG`: you assert the
   * server never evicts keys (`noeviction`). Default false: any other policy is refused.
   */
  readonly assumeNoEviction?: boolean;
  /**
   * After a claim and after an outcome is recorded, `WAIT` for this many replicas, at most
   * `timeoutMs`: a claim fewer replicas acknowledged is given up (the call fails, the tool did
   * not run). Not on a Redis Cluster (WAIT has no key to route by). `WAITAOF` is not offered.
   */
  readonly writeConcern?: { readonly replicas: number; readonly timeoutMs: number };
}

/** The durable settings of a queue executor, read. */
export interface QueueDurableSettings {
  readonly retentionMs: number;
  readonly leaseMs: number;
  readonly assumeNoEviction: boolean;
  readonly writeConcern: WriteConcern | undefined;
}

/** The attachment bytes a record on the queue keeps: the default attachment budget (a larger result is recorded as a clear error). */
export const QUEUE_DURABLE_ATTACHMENT_BYTES = Limits.MAX_ATTACHMENT_BYTES;

/** Reads the `durable` option (undefined: the defaults; the eviction policy is then checked at the first durable call). */
export function readQueueDurableOptions(value: unknown, cluster: boolean): QueueDurableSettings {
  if (value === undefined) {
    return ObjectFreeze({ retentionMs: DEFAULT_RETENTION_MS, leaseMs: DEFAULT_LEASE_MS, assumeNoEviction: false, writeConcern: undefined });
  }
  const read = readOptions(value, "options.durable", ["retentionMs", "leaseMs", "assumeNoEviction", "writeConcern"]);
  if (read.assumeNoEviction !== undefined) validateBoolean(read.assumeNoEviction, "options.durable.assumeNoEviction");
  const writeConcern = readWriteConcern(read.writeConcern, "options.durable.writeConcern");
  if (writeConcern !== undefined && cluster) {
    invalidArgument("options.durable.writeConcern is not available on a Redis Cluster (WAIT has no key to route by)");
  }
  return ObjectFreeze({
    retentionMs: integerOr(read.retentionMs, "options.durable.retentionMs", {
      min: MIN_RETENTION_MS,
      max: MAX_RETENTION_MS,
      fallback: DEFAULT_RETENTION_MS,
    }),
    leaseMs: integerOr(read.leaseMs, "options.durable.leaseMs", { min: 1000, max: 60_000, fallback: DEFAULT_LEASE_MS }),
    assumeNoEviction: read.assumeNoEviction === true,
    writeConcern,
  });
}

/** Refuses a Redis that may evict the records (unless assumeNoEviction): at create() or the first durable call. */
export function checkQueueEvictionPolicy(client: Redis, timeoutMs: number): Promise<void> {
  return checkEvictionPolicy(client, timeoutMs, "the QueueToolExecutor's durable calls", "durable: { assumeNoEviction: true }");
}

/** What a durable job carries to its host: the run id (the host makes the key from it and the call id) and the record's settings. */
export interface JobDurability {
  readonly runId: string;
  readonly leaseMs: number;
  readonly retentionMs: number;
  /** The write concern, as [replicas, timeoutMs]. */
  readonly wait?: readonly [number, number];
}

/** The job's `durable` as a host reads it (untrusted): the value, undefined for a plain job, or why it is malformed. */
export function readJobDurability(value: unknown): JobDurability | undefined | string {
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || ArrayIsArray(value)) return "the job's durable is not an object";
  const { runId, leaseMs, retentionMs, wait } = value as Record<string, unknown>;
  try {
    checkId(runId, "the job's durable.runId");
  } catch {
    return "the job's durable.runId is not a run id";
  }
  if (!isIntegerIn(leaseMs, 1000, 60_000) || !isIntegerIn(retentionMs, MIN_RETENTION_MS, MAX_RETENTION_MS)) {
    return "the job's durable lease or retention is out of bounds";
  }
  if (wait === undefined) return ObjectFreeze({ runId, leaseMs, retentionMs });
  if (!ArrayIsArray(wait) || wait.length !== 2 || !isIntegerIn(wait[0], 1, 64) || !isIntegerIn(wait[1], 1, 60_000)) {
    return "the job's durable write concern is malformed";
  }
  return ObjectFreeze({ runId, leaseMs, retentionMs, wait: ObjectFreeze([wait[0], wait[1]] as const) });
}

function isIntegerIn(value: unknown, min: number, max: number): value is number {
  return typeof value === "number" && NumberIsSafeInteger(value) && value >= min && value <= max;
}

const SCRIPTS = DURABLE_SCRIPTS;

/**
 * Holds `client`'s writes until the event loop's next turn, so a script and the BullMQ command
 * sent right after it on that connection (the claim and its job's add; the outcome and the
 * job's completion) leave in one write: each write to a loopback socket costs both processes
 * a system call and a wake-up, far more CPU than the script. The order on the connection is
 * unchanged. Only on a connected client (a command of one that is not waits in ioredis' own
 * queue) of a single server (a Cluster client has no stream of its own).
 */
function coalesceWrites(client: Redis): void {
  const stream = (client as { stream?: { cork?: () => void; uncork?: () => void } }).stream;
  if (client.status !== "ready" || typeof stream?.cork !== "function" || typeof stream.uncork !== "function") return;
  stream.cork();
  SetImmediate(() => stream.uncork?.());
}

/** The steps both sides share: reading a record, settling it in the queue's way, stopping it, forgetting it. */
abstract class QueueRecords {
  readonly pollMs = 100;
  readonly maxAttachmentBytes = QUEUE_DURABLE_ATTACHMENT_BYTES;
  protected readonly client: Redis;
  readonly #keys: QueueKeys;

  constructor(client: Redis, keys: QueueKeys) {
    this.client = client;
    this.#keys = keys;
  }

  protected run(script: QueueScript, key: string, args: readonly (string | number)[]): Promise<unknown> {
    return runScript(this.client, script, [this.#keys.durable(key)], args);
  }

  protected abstract retentionOf(key: string): number;

  async read(key: string): Promise<RawRecord | undefined> {
    const reply = await this.run(SCRIPTS.read, key, []);
    if (ArrayIsArray(reply) && reply.length === 0) return undefined;
    return recordOf(reply);
  }

  /** First terminal write wins; a record no host has started yet is released, whatever ends it (scripts.ts: SETTLE). */
  protected async settle(key: string, token: string, state: string, outcome: string): Promise<boolean> {
    return (await this.run(SCRIPTS.settle, key, [token, state, outcome, this.retentionOf(key), "1"])) === 1;
  }

  async end(key: string, token: string, state: "released" | "lost" | "forgotten"): Promise<void> {
    await this.settle(key, token, state, "");
  }

  async stop(key: string, attempt: number, outcome: string | undefined): Promise<void> {
    await this.run(SCRIPTS.stop, key, [attempt, outcome ?? "", this.retentionOf(key)]);
  }

  async forget(key: string): Promise<boolean> {
    return (await this.client.del(this.#keys.durable(key))) > 0;
  }

  /** The write concern: resolves to whether `replicas` acknowledged the writes so far within `timeoutMs`. */
  protected async replicated(wait: readonly [number, number] | undefined): Promise<boolean> {
    if (wait === undefined) return true;
    const acknowledged = await this.client.wait(wait[0], wait[1]);
    return acknowledged >= wait[0];
  }

  async close(): Promise<void> {
    // The client is the executor's (or the host's): it closes it.
  }
}

/** The agent's side: claims (the token is the job id that must run it), renews a claim until a host starts it, then watches. */
export class QueueAgentDurable extends QueueRecords implements DurableBackend {
  readonly leaseMs: number;
  readonly #settings: QueueDurableSettings;
  readonly #connectTimeoutMs: number;
  readonly #newJobId: () => string;
  #checked: Promise<void> | undefined;
  /** Jobs whose host says its outcome is the recorded one: their caller's finish has nothing to write. */
  readonly #recorded = new Set<string>();
  /** The connection the jobs are added on, which early claims go out on (claim); undefined: none are made. */
  readonly #jobClient: Redis | undefined;
  /** The queue's keys, which early claims are made under. */
  readonly #keys: QueueKeys;
  /**
   * Keys this agent holds or is claiming → the claim (its token, the job id; and when it went
   * out with its job, its answer), or ASK_FIRST: its early claim was not made, so its next
   * claim asks first.
   */
  readonly #claims = new Map<string, AgentClaim | typeof ASK_FIRST>();

  /** `jobClient`: the connection the executor adds its jobs on (undefined: claims are never sent with their job). */
  constructor(
    client: Redis,
    keys: QueueKeys,
    settings: QueueDurableSettings,
    connectTimeoutMs: number,
    newJobId: () => string,
    jobClient?: Redis,
  ) {
    super(client, keys);
    this.leaseMs = settings.leaseMs;
    this.#settings = settings;
    this.#connectTimeoutMs = connectTimeoutMs;
    this.#newJobId = newJobId;
    this.#jobClient = jobClient;
    this.#keys = keys;
  }

  /** What a durable job carries to its host. */
  jobDurability(runId: string): JobDurability {
    const { leaseMs, retentionMs, writeConcern } = this.#settings;
    return writeConcern === undefined
      ? { runId, leaseMs, retentionMs }
      : { runId, leaseMs, retentionMs, wait: [writeConcern.replicas, writeConcern.timeoutMs] };
  }

  protected retentionOf(): number {
    return this.#settings.retentionMs;
  }

  #wait(): readonly [number, number] | undefined {
    const concern = this.#settings.writeConcern;
    return concern === undefined ? undefined : [concern.replicas, concern.timeoutMs];
  }

  /** The eviction policy, checked once (again after a failed check: the server may have been fixed). */
  ready(): Promise<void> {
    if (this.#settings.assumeNoEviction) return Promise.resolve();
    this.#checked ??= checkQueueEvictionPolicy(this.client, this.#connectTimeoutMs).catch((error: unknown) => {
      this.#checked = undefined;
      throw error;
    });
    return this.#checked;
  }

  async claim(order: ClaimOrder): Promise<RawClaim> {
    await this.ready();
    const token = this.#newJobId();
    // Always "claimed": on the queue, a host starts the tool (HOST_START), never the agent.
    const args = [order.fingerprint, order.toolName, order.maxAttempts, token, this.leaseMs, this.#settings.retentionMs, "claimed"];
    const jobClient = this.#mayClaimEarly(order) ? this.#jobClient : undefined;
    if (jobClient !== undefined) {
      // Sent on the queue's own connection, so Redis runs it before the job's add (sent right
      // after it on that connection by the executor's run, which waits for this answer: earlyClaim):
      // the job goes out a round trip sooner. A claim that was not made (the key is held, done,
      // another call's) ends that run as not started: its job is cancelled, and no host starts
      // it anyway (HOST_START finds the record naming another job, or none); the key's next
      // claim then asks first. Only an at-most-once call with nothing between its claim and
      // its run (no approval, no write concern): its attempt is 1 whenever it claims.
      coalesceWrites(jobClient);
      const claimed = runScript(jobClient, SCRIPTS.claim, [this.#keys.durable(order.key)], args).then(
        (reply) => ArrayIsArray(reply) && reply.length === 2 && reply[0] === "claimed",
      );
      // Its rejection is handled by whoever waits for it (the run, or the claim's end); not unhandled meanwhile.
      claimed.catch(() => undefined);
      this.#claims.set(order.key, { token, early: claimed });
      return { claimed: true, token, attempt: 1 };
    }
    const reply = await this.run(SCRIPTS.claim, order.key, args);
    if (!(ArrayIsArray(reply) && reply.length === 2 && reply[0] === "claimed")) return { claimed: false, record: recordOf(reply) };
    this.#claims.set(order.key, { token, early: undefined });
    if (!(await this.replicated(this.#wait()))) {
      await this.#ended(order.key, token, "released", "");
      const [replicas, timeoutMs] = this.#wait() as readonly [number, number];
      throw new Error(`the claim was not acknowledged by ${replicas} replicas within ${timeoutMs} ms (writeConcern)`);
    }
    return { claimed: true, token, attempt: +reply[1] };
  }

  /**
   * Whether this claim may go out with its job (claim above). Not while this agent holds (or
   * is claiming) the key itself: a claim that lost to its own other call would hold the key in
   * this process beside that call's. Not right after an early claim of the key was not made:
   * the next one asks, and reads the record (else a held key would be claimed early again and
   * again).
   */
  #mayClaimEarly(order: ClaimOrder): boolean {
    if (this.#jobClient === undefined || this.#settings.writeConcern !== undefined) return false;
    if (order.state !== "running" || order.maxAttempts !== 1) return false;
    const claim = this.#claims.get(order.key);
    if (claim === ASK_FIRST) this.#claims.delete(order.key);
    return claim === undefined;
  }

  /**
   * The answer of job `jobId`'s early claim of `key`, for its run: resolves to whether the
   * claim was made (false, or a rejection, when it was not); undefined when its claim was not early.
   */
  earlyClaim(key: string, jobId: string): Promise<boolean> | undefined {
    const claim = this.#claims.get(key);
    return claim === ASK_FIRST || claim?.token !== jobId ? undefined : claim.early;
  }

  async renew(key: string, token: string): Promise<Renewal> {
    const reply = await this.run(SCRIPTS.watch, key, [token, this.leaseMs, this.#settings.retentionMs]);
    return reply === "held" || reply === "cancelled" ? reply : "gone";
  }

  /** After beforeExecute: the claim is still this caller's (renewed), so its job may be enqueued; the host starts the tool. */
  async start(key: string, token: string): Promise<boolean> {
    return (await this.renew(key, token)) === "held";
  }

  /** The host of job `jobId` answered with the outcome it recorded: the call's finish is that record's. */
  recordedByHost(jobId: string): void {
    this.#recorded.add(jobId);
  }

  override async end(key: string, token: string, state: "released" | "lost" | "forgotten"): Promise<void> {
    await this.#ended(key, token, state, "");
  }

  /** Its host answered with the recorded outcome: the claim ends here, nothing to write (nor to encode). */
  endIfRecordedElsewhere(key: string, token: string): boolean {
    if (!this.#recorded.delete(token)) return false;
    this.#released(key, token);
    return true;
  }

  /** The caller's own end of a claim it holds (its time limit, a lost Redis, close): released before a host started it, done after. */
  async finish(key: string, token: string, outcome: string): Promise<boolean> {
    const won = await this.#ended(key, token, "done", outcome);
    if (won) await this.replicated(this.#wait());
    return won;
  }

  /** A claim of this agent ends: its terminal write (after its early claim's answer: never before the claim itself). */
  async #ended(key: string, token: string, state: string, outcome: string): Promise<boolean> {
    let askFirst = false;
    try {
      const early = this.earlyClaim(key, token);
      // Not made: the call looks at the record again next (durable-call.ts), and that claim asks first.
      askFirst = early !== undefined && !(await early.catch(() => false));
      return await this.settle(key, token, state, outcome);
    } finally {
      this.#released(key, token, askFirst);
    }
  }

  /** The claim of `token` on `key` ended here; `askFirst`: it was an early claim not made. */
  #released(key: string, token: string, askFirst = false): void {
    const claim = this.#claims.get(key);
    if (claim === ASK_FIRST || claim?.token !== token) return;
    if (askFirst) this.#claims.set(key, ASK_FIRST);
    else this.#claims.delete(key);
  }
}

/** A claim this agent holds or is making: its token (the job id), and its answer when it went out with its job. */
interface AgentClaim {
  readonly token: string;
  readonly early: Promise<boolean> | undefined;
}

/** A key whose early claim was not made (QueueAgentDurable's claims). */
const ASK_FIRST = "ask-first";

/** One durable job a host is about to run. */
interface HostJob {
  readonly jobId: string;
  readonly callId: string;
  readonly durability: JobDurability;
  /** Why the record did not let the job start (HOST_START's answer), once asked. */
  refused: string | undefined;
  /** This host's outcome is the record's (its finish won). */
  recorded: boolean;
}

/**
 * The host's side, behind its WorkerToolExecutor's `durable` store: the executor's durable call
 * "claims" by starting the job's own claim (HOST_START), renews the host's lease while the tool
 * runs, and records the outcome. It knows only the jobs `expect` announced.
 */
export class QueueHostDurable extends QueueRecords implements DurableBackend {
  readonly #jobs = new Map<string, HostJob>();
  readonly #keys: QueueKeys;
  /** The connection BullMQ completes the jobs on (the worker's): an outcome's record write goes out on it just before. */
  readonly #jobClient: Redis;

  constructor(client: Redis, keys: QueueKeys, jobClient: Redis) {
    super(client, keys);
    this.#keys = keys;
    this.#jobClient = jobClient;
  }

  /** The renewal period follows the shortest lease of the jobs running here. */
  get leaseMs(): number {
    let lease = DEFAULT_LEASE_MS;
    for (const job of this.#jobs.values()) if (job.durability.leaseMs < lease) lease = job.durability.leaseMs;
    return lease;
  }

  /**
   * Announces `jobId`'s durable call `callId`: its key, or undefined when a job of that key
   * already runs here (a forged duplicate: not started).
   */
  expect(jobId: string, callId: string, durability: JobDurability): string | undefined {
    const key = durableKeyOf(durability.runId, callId);
    if (this.#jobs.has(key)) return undefined;
    this.#jobs.set(key, { jobId, callId, durability, refused: undefined, recorded: false });
    return key;
  }

  /**
   * The key expect made for the job's call, so the host's pipeline does not hash it again. A
   * look at the jobs running here (as many as the host's threads and the jobs fetched ahead):
   * cheaper than the hash it saves.
   */
  keyOf(runId: string, callId: string): string | undefined {
    for (const [key, job] of this.#jobs) if (job.callId === callId && job.durability.runId === runId) return key;
    return undefined;
  }

  /**
   * The job's call ended here: "refused" when its record did not let it start, "recorded" when
   * the outcome it answers is the one recorded (its agent need not read the record again).
   */
  done(key: string, jobId: string): "refused" | "recorded" | undefined {
    const job = this.#jobs.get(key);
    if (job === undefined || job.jobId !== jobId) return undefined;
    this.#jobs.delete(key);
    if (job.refused !== undefined) return "refused";
    return job.recorded ? "recorded" : undefined;
  }

  protected retentionOf(key: string): number {
    return this.#jobs.get(key)?.durability.retentionMs ?? DEFAULT_RETENTION_MS;
  }

  async ready(): Promise<void> {}

  async claim(order: ClaimOrder): Promise<RawClaim> {
    const job = this.#jobs.get(order.key);
    if (job === undefined) throw new Error("no durable job of this key runs on this host");
    const reply = await this.run(SCRIPTS.hostStart, order.key, [
      job.jobId,
      order.fingerprint,
      job.durability.leaseMs,
      job.durability.retentionMs,
    ]);
    if (typeof reply === "number" && NumberIsSafeInteger(reply) && reply >= 1) {
      // The start is the write a failover must not lose: a replica without it would let this
      // job, redelivered, start the tool a second time. Not acknowledged: given up (released),
      // not run, and the agent hears "not started" (its call claims again). A WAIT that failed
      // (the primary gone mid-failover) says no more: the tool does not run either.
      if (!(await this.replicated(job.durability.wait).catch(() => false))) {
        await this.settle(order.key, job.jobId, "released", "").catch(() => false);
        job.refused = "unacknowledged";
        throw new Error("the host's start of this job was not acknowledged by the write concern's replicas");
      }
      return { claimed: true, token: job.jobId, attempt: reply };
    }
    job.refused = typeof reply === "string" ? reply : "unknown";
    throw new Error(`the durable record did not let this job start (${job.refused})`);
  }

  async renew(key: string, token: string): Promise<Renewal> {
    const job = this.#jobs.get(key);
    const reply = await this.run(SCRIPTS.renew, key, [token, job?.durability.leaseMs ?? DEFAULT_LEASE_MS, this.retentionOf(key)]);
    return reply === "held" || reply === "cancelled" ? reply : "gone";
  }

  /** Never asked: a host has no beforeExecute (its agent asked). */
  async start(): Promise<boolean> {
    return false;
  }

  async finish(key: string, token: string, outcome: string): Promise<boolean> {
    const job = this.#jobs.get(key);
    const wait = job?.durability.wait;
    if (wait === undefined && job !== undefined && job.jobId === token) {
      // Sent on the worker's connection and not waited for: BullMQ's completion of the job,
      // sent next on that connection, runs after it, a round trip sooner. Whether it won, the
      // agent reads with the job's result (HOST_FINISH marks the job's hash); if it did not,
      // the agent answers from the record, never from this host's outcome. A write that failed
      // leaves the record running: the agent records this outcome itself, or finds it lost.
      coalesceWrites(this.#jobClient);
      runScript(
        this.#jobClient,
        SCRIPTS.hostFinish,
        [this.#keys.durable(key), this.#keys.job(token)],
        [token, outcome, job.durability.retentionMs],
      ).catch(() => undefined);
      return true;
    }
    const won =
      wait === undefined ? await this.settle(key, token, "done", outcome) : await this.#keptByReplicas(key, token, outcome, job as HostJob);
    if (won && job !== undefined && job.jobId === token) job.recorded = true;
    return won;
  }

  /**
   * With a write concern, the outcome is answered only once the replicas hold it: a record
   * write or a WAIT that fails (the primary died: the failover trials found acknowledged
   * outcomes whose record the new primary never had, `running` there) or falls short writes the
   * outcome again where Redis now is and waits again, for as long as the job's lease. False when
   * the record there already ended otherwise (the agent found the execution lost first): the
   * answer is then the record's. Past the lease, the outcome is answered as it stands (or the
   * write's failure thrown, as without a write concern).
   */
  async #keptByReplicas(key: string, token: string, outcome: string, job: HostJob): Promise<boolean> {
    const wait = job.durability.wait as readonly [number, number];
    const deadline = PerformanceNow() + job.durability.leaseMs;
    const pause = () => new NativePromise((resolve) => SetTimeout(resolve, 50));
    for (let attempt = 0; ; attempt += 1) {
      let written: boolean;
      try {
        written = await this.settle(key, token, "done", outcome);
      } catch (error) {
        if (PerformanceNow() > deadline) throw error;
        await pause(); // no connection yet: give the reconnection a moment
        continue;
      }
      if (!written) {
        if (attempt === 0) return false; // another terminal write came first
        const record = await this.read(key).catch(() => undefined);
        // Still ours (done with this outcome: the write was there after all): wait for the replicas again.
        if (record === undefined || record[0] !== "done" || record[5] !== outcome) return false;
      }
      const kept = await this.replicated(wait).catch(() => undefined);
      if (kept === true || PerformanceNow() > deadline) return true;
      if (kept === undefined) await pause();
    }
  }
}

/** A reply that is not a record's fields: record.ts reads it as damaged. */
const DAMAGED_RECORD: RawRecord = ObjectFreeze(["damaged"]);

/** The six fields of a `{"record", …}` reply, or a damaged record. */
function recordOf(reply: unknown): RawRecord {
  if (!ArrayIsArray(reply) || reply.length !== 7 || reply[0] !== "record") return DAMAGED_RECORD;
  return reply.slice(1);
}
