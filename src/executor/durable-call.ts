// A durable call (`options.durable: { runId }`) from its validated request to its result: the
// key (runId, call id) is claimed in the executor's store and the tool runs once; a caller that
// finds the key running attaches and waits for that execution; a done key is replayed; a lost
// one is answered as lost (or, for an at-least-once tool with attempts left, run again); a key
// that holds another call is a conflict. Every caller of a key gets the same outcome: the first
// terminal write to the record decides it, and whoever lost that race answers from the record.
// Unknown tools, invalid arguments and denials never reach here: they store nothing.
// docs/durable.md — Semantics.
import { randomUUID } from "node:crypto";
import { ContractErrorCode, ToolErrorCode } from "../contract/constants.js";
import { isNonRecoverableToolError, isToolContractError, NonRecoverableToolError, ToolContractError } from "../contract/errors.js";
import { describeValue } from "../contract/grammar.js";
import {
  AbortControllerPrototypeAbort,
  AbortControllerPrototypeGetSignal,
  ClearTimeout,
  JSONStringify,
  NativeAbortController,
  NativeDOMException,
  ObjectFreeze,
  PromisePrototypeThen,
  SetTimeout,
} from "../contract/primordials.js";
import { type CarriedAttachment, errorContent, type ToolResultMessage, toolResultMessage } from "../contract/results.js";
import { cutToCodePoints } from "../contract/serialize.js";
import { MAX_DURABLE_ATTEMPTS, type Tool } from "../contract/tools.js";
import { describeFailure, type FailureText, readOwnDataProperty } from "../contract/untrusted.js";
import { invalidArgument, readOptions } from "../contract/validators.js";
import { DurableStoreFullError } from "../durable/backend.js";
import { fingerprintOf, idempotencyKeyOf } from "../durable/key.js";
import { attachmentBytesOf, type DurableRecord, encodeOutcome, type StoredOutcome } from "../durable/record.js";
import { checkId, DAMAGED, type DurableEngine, engineOf } from "../durable/store.js";
import type { CallTrace } from "./hooks.js";
import type { RunRequest } from "./pipeline.js";
import { Outcome, type ToolOutcome, timeoutOutcome } from "./run-tool.js";
import { abortReason, isAborted, throwIfAborted, watchAbort } from "./signal.js";

/** How a durable call ended, for onCallEnd's `durable`. */
export type DurableCallEnd = "executed" | "attached" | "replayed" | "lost";

/** What a durable call's run adds to the tool's context, and what a runner that runs it elsewhere (the queue) needs of it. */
export interface DurableRun {
  /** The call's durable key (key.ts): a runner's own bookkeeping of the claim (the queue's early claim) is under it. */
  readonly key: string;
  readonly idempotencyKey: string;
  readonly attempt: number;
  /** The call's run id: a runner on another machine makes the same key from it and the call id. */
  readonly runId: string;
  /** The claim's token, as the store gave it (the queue's: the job id that must run it). */
  readonly token: string;
}

/**
 * What a runner rejects with, or what stops a run, when the execution ended without an outcome
 * and without a caller asking (its lease ran out, the queue's job stalled or was not started):
 * the record is made lost (released, when nothing had started it) and the call looks at it
 * again: an at-least-once tool with attempts left runs its next attempt, a released key is
 * claimed again, anything else answers from the record.
 */
export class ExecutionLost extends Error {}

/** What the pipeline lends a durable call: its runner, its publication, and its approval (when the executor has `beforeExecute`: asked under the claim, never for a replay). */
export interface DurableSteps {
  readonly run: (request: RunRequest) => ToolOutcome | Promise<ToolOutcome>;
  readonly publish: (request: RunRequest, outcome: ToolOutcome) => ToolResultMessage;
  /** Undefined: nothing to ask. Else resolves to a denial's reason, or undefined when allowed. */
  readonly approve: (() => Promise<FailureText | undefined>) | undefined;
  readonly denied: (reason: FailureText) => ToolResultMessage;
}

const LOST_TEXT = "an earlier execution of this call was lost; the tool may have run, and it will not run again under this key";

/** What #execute gives when its claim was lost before the tool started: the call looks at the record again. */
const AGAIN = Symbol("again");

/** Rounds of claim → attach a call may go through (each at-least-once attempt, each released claim, costs one). */
const MAX_ROUNDS = MAX_DURABLE_ATTEMPTS * 2 + 4;

/** `options.durable` of an executor: `{ store }`, a store made by toolgate/durable (undefined: none). */
export function readDurableExecutorOption(value: unknown): DurableEngine | undefined {
  if (value === undefined) return undefined;
  const { store } = readOptions(value, "options.durable", ["store"]);
  const engine = engineOf(store);
  if (engine === undefined) {
    invalidArgument(
      `options.durable.store must be a store made by toolgate/durable (memoryDurableStore or redisDurableStore) (got ${describeValue(store)})`,
    );
  }
  return engine;
}

/** `options.durable` of a call or batch: `{ runId }`; gives the run id (undefined: not durable). */
export function readDurableCallOption(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const { runId } = readOptions(value, "options.durable", ["runId"]);
  checkId(runId, "options.durable.runId");
  return runId;
}

/** A durable call needs an executor with a store: INVALID_ARGUMENT before anything runs. */
export function checkDurableStore(
  settings: { readonly durable?: DurableEngine | undefined } | undefined,
  call: { readonly durable?: string | undefined },
): void {
  if (call.durable !== undefined && settings?.durable === undefined) {
    invalidArgument(
      "options.durable needs an executor made with durable: { store } (a store from toolgate/durable: memoryDurableStore or redisDurableStore)",
    );
  }
}

/** The durable call of `request`, under `runId`, in `engine`'s store. */
export async function runDurable(
  engine: DurableEngine,
  runId: string,
  request: RunRequest,
  trace: CallTrace | undefined,
  steps: DurableSteps,
): Promise<ToolResultMessage> {
  const call = request.call;
  const durable = new DurableCall(engine, request, trace, steps, runId, fingerprintOf(call.name, call.arguments));
  return durable.settle();
}

class DurableCall {
  readonly #engine: DurableEngine;
  readonly #request: RunRequest;
  readonly #trace: CallTrace | undefined;
  readonly #steps: DurableSteps;
  readonly #runId: string;
  readonly #key: string;
  readonly #fingerprint: string;

  constructor(
    engine: DurableEngine,
    request: RunRequest,
    trace: CallTrace | undefined,
    steps: DurableSteps,
    runId: string,
    fingerprint: string,
  ) {
    this.#engine = engine;
    this.#request = request;
    this.#trace = trace;
    this.#steps = steps;
    this.#runId = runId;
    this.#key = engine.keyOf(runId, request.call.id);
    this.#fingerprint = fingerprint;
  }

  async settle(): Promise<ToolResultMessage> {
    for (let round = 0; round < MAX_ROUNDS; round += 1) {
      const claim = await this.#store(() =>
        this.#engine.claim({
          key: this.#key,
          fingerprint: this.#fingerprint,
          toolName: this.#request.call.name,
          maxAttempts: maxAttemptsOf(this.#request.tool),
          token: token(),
          // With an approval to ask, the tool starts later (start): a claim that lapses before then is released, not lost.
          state: this.#steps.approve === undefined ? "running" : "claimed",
        }),
      );
      if (isResult(claim)) return claim;
      if (claim === DAMAGED) return this.#damaged();
      if (claim.claimed) {
        const executed = await this.#execute(claim.token, claim.attempt);
        if (executed === AGAIN) continue;
        return executed;
      }
      const record = claim.record;
      if (record === undefined) continue; // gone between the steps of the claim (forgotten): claim again
      if (isHeld(record) && record.fingerprint === this.#fingerprint) {
        const ended = await this.#attach(record.attempt);
        if (isResult(ended)) return ended;
        if (ended === DAMAGED) return this.#damaged();
        if (ended === undefined || this.#claimable(ended)) continue;
        const answer = this.#answer(ended, "attached");
        if (answer !== undefined) return answer;
        continue;
      }
      const answer = this.#answer(record, "replayed");
      if (answer !== undefined) return answer;
    }
    return this.#lost();
  }

  /** A record this call may claim: released, or lost with attempts left. */
  #claimable(record: DurableRecord): boolean {
    if (record.fingerprint !== this.#fingerprint) return false;
    return record.state === "released" || (record.state === "lost" && record.attempt < record.maxAttempts);
  }

  /** What a record that this call will not claim answers (undefined: running, go on). */
  #answer(record: DurableRecord, how: "attached" | "replayed"): ToolResultMessage | undefined {
    if (record.fingerprint !== this.#fingerprint) {
      const call = this.#request.call;
      throw new ToolContractError(
        ContractErrorCode.DURABLE_CALL_CONFLICT,
        `the durable key ${this.#key} (call id ${JSONStringify(cutToCodePoints(call.id, 64).text)}) already holds a call of tool ${JSONStringify(
          cutToCodePoints(record.toolName, 128).text,
        )} (${record.state}) with other arguments or another tool; nothing ran and the record is unchanged. A new call needs a new call id or run id`,
      );
    }
    if (record.state === "done") return this.#replay(record.outcome as StoredOutcome, how);
    if (record.state === "lost") return this.#lost();
    return undefined;
  }

  #replay(stored: StoredOutcome, how: "attached" | "replayed"): ToolResultMessage {
    this.#mark(how);
    if (stored.fatal) throw new NonRecoverableToolError(stored.message);
    const outcome: ToolOutcome =
      stored.attachments === undefined
        ? new Outcome(stored.content, stored.isError)
        : // Decoded from the record, not yet trusted: publish adopts them (every check a tool's attachment passes).
          ObjectFreeze({
            content: stored.content,
            isError: stored.isError,
            attachments: stored.attachments as readonly CarriedAttachment[],
          });
    return this.#steps.publish(this.#request, outcome);
  }

  #lost(): ToolResultMessage {
    this.#mark("lost");
    return this.#failed(LOST_TEXT);
  }

  #damaged(): ToolResultMessage {
    return this.#failed(
      "the durable record of this call is damaged (not one toolgate wrote): the tool did not run, and will not run under this key until an operator forgets the record",
    );
  }

  #failed(text: string): ToolResultMessage {
    const call = this.#request.call;
    return toolResultMessage(call, errorContent(ToolErrorCode.EXECUTION_FAILED, { text, cut: false }), true);
  }

  #mark(how: DurableCallEnd): void {
    if (this.#trace !== undefined) this.#trace.durable = how;
  }

  /**
   * A store step; a store that cannot be reached gives the call a failed result (the tool did
   * not run), a contract error (a refused Redis, a missing peer) rejects.
   */
  async #store<T>(step: () => Promise<T>): Promise<T | ToolResultMessage> {
    try {
      return await step();
    } catch (error) {
      if (isToolContractError(error)) throw error;
      if (error instanceof DurableStoreFullError) return this.#failed(`${error.message}; the tool did not run`);
      return this.#failed(`the durable store could not be used (${describeFailure(error).text}): the tool did not run`);
    }
  }

  /**
   * Waits for the execution at `attempt` to end, under this call's own signal and time limit:
   * either ends the shared execution (docs/durable.md — one execution, one cancel). Gives the
   * record as it then stands.
   */
  async #attach(attempt: number): Promise<DurableRecord | undefined | typeof DAMAGED | ToolResultMessage> {
    const signal = this.#request.signal;
    const timeoutMs = this.#request.timeoutMs;
    let expired = false;
    const deadline = new NativeAbortController();
    const deadlineSignal = AbortControllerPrototypeGetSignal(deadline);
    const timer =
      timeoutMs === undefined
        ? undefined
        : SetTimeout(() => {
            expired = true;
            AbortControllerPrototypeAbort(deadline, undefined);
          }, timeoutMs);
    const unwatch = watchAbort(signal, () => AbortControllerPrototypeAbort(deadline, undefined));
    try {
      for (;;) {
        await this.#engine.nextLook(this.#key, deadlineSignal);
        if (isAborted(signal)) {
          // Abort wins at once: the stop is sent, not waited for (the holder acts on it at its next renewal, or now in this process).
          void PromisePrototypeThen(this.#engine.stop(this.#key, attempt, undefined), ignore, ignore);
          throw abortReason(signal);
        }
        if (expired) {
          const outcome = timeoutOutcome(timeoutMs as number);
          await this.#engine.stop(this.#key, attempt, encodeOutcome(storedOf(outcome))).catch(ignore);
          const record = await this.#store(() => this.#engine.read(this.#key));
          // The time limit is this caller's answer unless another terminal answer came first: an
          // outcome, or a loss that will not run again (another caller may have seen the lease lapse
          // between this caller's last look and its deadline).
          if (record === undefined || record === DAMAGED || isResult(record) || !isSettled(record)) {
            this.#mark("attached");
            return this.#steps.publish(this.#request, outcome);
          }
          return record;
        }
        const record = await this.#store(() => this.#engine.read(this.#key));
        if (isResult(record) || record === undefined || record === DAMAGED) return record;
        if (!isHeld(record) || record.attempt !== attempt) return record;
      }
    } finally {
      if (timer !== undefined) ClearTimeout(timer);
      unwatch();
    }
  }

  /** Runs the tool under this call's claim, then records its outcome (first terminal write wins). */
  async #execute(claimToken: string, attempt: number): Promise<ToolResultMessage | typeof AGAIN> {
    const engine = this.#engine;
    const key = this.#key;
    const request = this.#request;
    const signal = request.signal;
    if (isAborted(signal)) {
      // Aborted while the claim was on its way: the tool never started, the key is released.
      await engine.end(key, claimToken, "released").catch(ignore);
      throw abortReason(signal);
    }
    const controller = new NativeAbortController();
    const unwatch = watchAbort(signal, () => AbortControllerPrototypeAbort(controller, abortReason(signal)));
    const letGo = engine.hold(key, claimToken, attempt, (why) =>
      AbortControllerPrototypeAbort(
        controller,
        why === "gone"
          ? new ExecutionLost("the claim of this durable call ran out before it finished")
          : new NativeDOMException("another caller of this durable call ended it", "AbortError"),
      ),
    );
    // Approval under the claim: callers that re-issue the call meanwhile attach to this one decision.
    const approve = this.#steps.approve;
    if (approve !== undefined) {
      let denial: FailureText | undefined;
      try {
        denial = await approve();
        throwIfAborted(signal);
      } catch (error) {
        letGo();
        unwatch();
        await engine.end(key, claimToken, "released").catch(ignore); // the tool never started
        throw error;
      }
      if (denial !== undefined) {
        letGo();
        unwatch();
        await engine.end(key, claimToken, "forgotten").catch(ignore); // a denial stores nothing
        return this.#steps.denied(denial);
      }
      // The tool starts now, unless the claim lapsed (released) or another caller stopped it meanwhile.
      const starts = await engine.start(key, claimToken).catch(() => false);
      if (!starts) {
        letGo();
        unwatch();
        await engine.end(key, claimToken, "released").catch(ignore);
        throwIfAborted(signal);
        return AGAIN;
      }
    }
    this.#mark("executed");
    const run: RunRequest = {
      ...request,
      signal: AbortControllerPrototypeGetSignal(controller),
      durable: ObjectFreeze({ key, idempotencyKey: idempotencyKeyOf(key), attempt, runId: this.#runId, token: claimToken }),
    };
    let outcome: ToolOutcome;
    this.#trace?.runStarted();
    try {
      outcome = await this.#steps.run(run);
    } catch (error) {
      letGo();
      unwatch();
      this.#trace?.runEnded();
      return this.#failedRun(error, claimToken);
    }
    letGo();
    unwatch();
    this.#trace?.runEnded();
    const kept = this.#keepable(outcome);
    let won: boolean;
    try {
      won = await engine.finish(key, claimToken, () => encodeOutcome(storedOf(kept)));
    } catch {
      // Not recorded (the store is unreachable): this caller still gets what ran; a re-issue finds the lease run out, lost.
      return this.#steps.publish(request, kept);
    }
    if (won) return this.#steps.publish(request, kept);
    return this.#fromRecord();
  }

  /** The run rejected: a NonRecoverableToolError is recorded and rethrown; an abort leaves the key lost. */
  async #failedRun(error: unknown, claimToken: string): Promise<ToolResultMessage | typeof AGAIN> {
    const engine = this.#engine;
    const signal = this.#request.signal;
    if (error instanceof ExecutionLost && !isAborted(signal)) {
      await engine.end(this.#key, claimToken, "lost").catch(ignore);
      return AGAIN;
    }
    if (isNonRecoverableToolError(error)) {
      const won = await engine
        .finish(this.#key, claimToken, () => encodeOutcome({ fatal: true, message: messageOf(error) }))
        .catch(() => true);
      if (won) throw error;
      return this.#fromRecord();
    }
    await engine.end(this.#key, claimToken, "lost").catch(ignore);
    if (isAborted(signal) && error === abortReason(signal)) throw error;
    // Stopped by another caller (its time limit or its abort): the record says what every caller gets.
    return this.#fromRecord();
  }

  /** This call lost the race to the record: the answer is the record's, whatever ran here. */
  async #fromRecord(): Promise<ToolResultMessage> {
    const record = await this.#store(() => this.#engine.read(this.#key));
    if (isResult(record)) return record;
    if (record === DAMAGED) return this.#damaged();
    if (record !== undefined && record.state === "done" && record.fingerprint === this.#fingerprint) {
      const replayed = this.#replay(record.outcome as StoredOutcome, "attached");
      this.#mark("executed");
      return replayed;
    }
    const lost = this.#lost();
    this.#mark("executed");
    return lost;
  }

  /** The outcome as the store may keep it: within its attachment budget, else a clear error every caller gets. */
  #keepable(outcome: ToolOutcome): ToolOutcome {
    const bytes = attachmentBytesOf(outcome.attachments);
    const budget = this.#engine.maxAttachmentBytes;
    if (bytes <= budget) return outcome;
    return new Outcome(
      errorContent(ToolErrorCode.OUTPUT_SERIALIZATION_FAILED, {
        text: `the result's attachments (${bytes} bytes) are over the durable store's budget of ${budget} bytes (maxAttachmentBytes): the result cannot be kept, so no caller gets it`,
        cut: false,
      }),
      true,
    );
  }
}

function storedOf(outcome: ToolOutcome): StoredOutcome {
  const attachments = outcome.attachments;
  return {
    fatal: false,
    content: outcome.content,
    isError: outcome.isError,
    attachments: attachments === undefined || attachments.length === 0 ? undefined : attachments,
  };
}

/** The error's own `message` data property (a getter is not run), cut: what a replay's NonRecoverableToolError carries. */
function messageOf(error: NonRecoverableToolError): string {
  const message = readOwnDataProperty(error, "message");
  return typeof message === "string" ? cutToCodePoints(message, 65_536).text : "";
}

/** Attempts the tool allows: 1 for at-most-once. */
function maxAttemptsOf(tool: Tool): number {
  const durability = tool.durability;
  return durability === undefined || durability === "at-most-once" ? 1 : durability.atLeastOnce.maxAttempts;
}

/** A record whose answer is final: done, or lost with no attempt left. */
function isSettled(record: DurableRecord): boolean {
  return record.state === "done" || (record.state === "lost" && record.attempt >= record.maxAttempts);
}

/** A record some executor holds: claimed (approval) or running (the tool). */
function isHeld(record: DurableRecord): boolean {
  return record.state === "running" || record.state === "claimed";
}

function isResult(value: unknown): value is ToolResultMessage {
  return typeof value === "object" && value !== null && (value as { role?: unknown }).role === "toolResult";
}

function token(): string {
  return randomUUID();
}

function ignore(): void {}
