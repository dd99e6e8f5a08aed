// Approval and telemetry hooks, shared by every executor: one `ToolExecutorHooks` object is an
// option of each, and the pipeline calls it on the calling thread only. A hook is operator code,
// but buggy operator code must not break calls: a throwing, hanging or garbage-returning hook
// never changes a call's outcome and never leaves an unhandled rejection. The one exception is
// `beforeExecute`, whose decision is the point; it is read strictly and fails closed.
// docs/operations.md — Hooks: approval and telemetry.
import type { ToolApp } from "../contract/app.js";
import type { ToolCall } from "../contract/call.js";
import { ContractErrorCode, Limits } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { describeValue } from "../contract/grammar.js";
import {
  ArrayPrototypeIncludes,
  isProxy,
  JSONStringify,
  NativePromise,
  NumberIsInteger,
  NumberPositiveInfinity,
  ObjectFreeze,
  ObjectGetOwnPropertyDescriptor,
  ObjectGetPrototypeOf,
  ObjectHasOwn,
  ObjectPrototype,
  PerformanceNow,
  ReflectApply,
  ReflectOwnKeys,
} from "../contract/primordials.js";
import { errorCodeOf, type ToolResultMessage } from "../contract/results.js";
import { cutToCodePoints } from "../contract/serialize.js";
import type { Tool } from "../contract/tools.js";
import { type FailureText, observeRejection, readOwnDataProperty, untrustedPromise, whenSettled } from "../contract/untrusted.js";
import { closestKey, invalidArgument, prototypeChain, validateObject, validateOptionKeys } from "../contract/validators.js";
import type { DurableCallEnd } from "./durable-call.js";
import type { ToolMeters } from "./metrics.js";
import type { RunRequest } from "./pipeline.js";
import { abortReason, isAborted, watchAbort } from "./signal.js";
import type { ToolSpan } from "./tracing.js";

/** What `beforeExecute` receives besides the call and the tool. Frozen. */
export interface ApprovalContext {
  /** The call's signal: an approval that waits (for a person, say) should stop when it aborts. */
  readonly signal: AbortSignal;
  readonly toolCallId: string;
  /** The call's application context, when the executor or the call has one. */
  readonly app?: ToolApp;
}

/** `beforeExecute`'s verdict. A denial's `reason` is what the model reads (TOOL_CALL_DENIED). */
export type ApprovalDecision = { readonly allow: true } | { readonly allow: false; readonly reason: string };

/** Emitted once a call is snapshotted (it has an id and a name), before lookup and validation. */
export interface CallStartEvent {
  readonly toolCallId: string;
  readonly toolName: string;
}

/**
 * How a call ended: a success result, an `isError` result, a rejection with the signal's
 * reason, or another rejection (a NonRecoverableToolError).
 */
export type CallEndOutcome = "success" | "error" | "aborted" | "rejected";

/** Emitted once per started call, when its promise settles. Frozen. */
export interface CallEndEvent {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly outcome: CallEndOutcome;
  /** The recoverable error code of an "error" outcome (TOOL_NOT_FOUND, TOOL_CALL_DENIED, ...); else undefined. */
  readonly code: string | undefined;
  /** From onCallStart to the end, in ms. */
  readonly durationMs: number;
  /** Time the call waited for a thread or slot after approval, as the executor reports it (0 in-process). */
  readonly queueWaitMs: number;
  /** Time the tool ran (execute and serialization), in ms; 0 when it never ran. */
  readonly runMs: number;
  /** The thread that ran the tool, as the executor reports it; undefined when the tool never ran. */
  readonly threadId: number | undefined;
  /** True when the executor terminated the thread running this call before the call settled. */
  readonly threadKilled: boolean;
  /**
   * A durable call's (`options.durable`) way to its outcome: "executed" (this call ran the
   * tool), "attached" (it waited for another caller's execution), "replayed" (the outcome was
   * already recorded), "lost" (an earlier execution was lost). Absent for other calls, and for a
   * durable call answered before its store was asked (an unknown tool, invalid arguments).
   */
  readonly durable?: DurableCallEnd;
}

/** Emitted when an executor terminates a thread after the call settled (an abort or timeout's grace period ran out). */
export interface ThreadKilledEvent {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly threadId: number | undefined;
}

/** Which hook failed, for `onHookError`. */
export type HookName = "beforeExecute" | "onCallStart" | "onCallEnd" | "onThreadKilled";

/**
 * The hooks of an executor (`new InProcessToolExecutor(registry, { hooks })`, and the same
 * object for every other executor). Methods may be own or inherited (a class instance
 * works); they are read once, when the executor is made, and called with the hooks object
 * as `this`, on the thread that called the executor.
 */
export interface ToolExecutorHooks {
  /**
   * Runs after validation and before anything of the tool runs; may be async. Resolve
   * `{ allow: true }` to run the call, `{ allow: false, reason }` to answer it with a
   * TOOL_CALL_DENIED result carrying `reason`. Fails closed: a throw, a rejection or any
   * other value denies the call. An abort of the call's signal rejects the call at once.
   */
  beforeExecute?(call: Readonly<ToolCall>, tool: Tool, context: ApprovalContext): ApprovalDecision | Promise<ApprovalDecision>;
  onCallStart?(event: CallStartEvent): void;
  onCallEnd?(event: CallEndEvent): void;
  onThreadKilled?(event: ThreadKilledEvent): void;
  /** Told when a hook throws, rejects or returns a malformed decision; its own failures are dropped. */
  onHookError?(error: unknown, hook: HookName): void;
}

/** What a runner tells the pipeline about a call, through `RunRequest.record` (any subset, any number of times). */
export interface RunFacts {
  /** Time the call waited for a thread or slot, in ms. */
  readonly queueWaitMs?: number;
  /** The thread that runs (or ran) the tool. */
  readonly threadId?: number;
  /** The runner terminated that thread. */
  readonly threadKilled?: boolean;
}

type Hook = (...args: unknown[]) => unknown;

/** An executor's hooks, read once (data properties, never accessors): the functions and the receiver they are called on. */
export class ResolvedHooks {
  readonly beforeExecute: Hook | undefined;
  readonly onCallStart: Hook | undefined;
  readonly onCallEnd: Hook | undefined;
  readonly onThreadKilled: Hook | undefined;
  readonly onHookError: Hook | undefined;

  /** `chain`: the receiver's prototype chain as `prototypeChain` read it (the receiver first). */
  constructor(
    readonly receiver: object,
    chain: readonly object[],
  ) {
    this.beforeExecute = hookOf(chain, "beforeExecute");
    this.onCallStart = hookOf(chain, "onCallStart");
    this.onCallEnd = hookOf(chain, "onCallEnd");
    this.onThreadKilled = hookOf(chain, "onThreadKilled");
    this.onHookError = hookOf(chain, "onHookError");
  }
}

const HOOK_NAMES: readonly string[] = ObjectFreeze(["beforeExecute", "onCallStart", "onCallEnd", "onThreadKilled", "onHookError"]);

/**
 * Reads `options.hooks`; a ToolContractError(INVALID_ARGUMENT) for anything but an object of
 * functions, for a key that is not a hook (a misspelt `beforeExecute` would otherwise be an
 * approval gate silently absent), and for a Proxy anywhere on its prototype chain (a hook
 * beyond it could not be read without running its traps, and would otherwise be skipped).
 */
export function resolveHooks(hooks: unknown): ResolvedHooks {
  validateObject(hooks, "options.hooks");
  const chain = prototypeChain(hooks, "options.hooks");
  checkHookKeys(hooks, chain);
  return new ResolvedHooks(hooks, chain);
}

/**
 * A plain object's own keys must all be hooks. A class instance's own fields are its state and
 * its prototypes hold its other methods, so there every key (own or on a prototype below
 * Object.prototype) is refused only when it is a near miss of a hook's name (`onCalEnd`).
 */
function checkHookKeys(hooks: object, chain: readonly object[]): void {
  const prototype = ObjectGetPrototypeOf(hooks);
  if (prototype === ObjectPrototype || prototype === null) {
    validateOptionKeys(hooks, "options.hooks", HOOK_NAMES);
    return;
  }
  for (let link = 0; link < chain.length; link += 1) {
    const keys = ReflectOwnKeys(chain[link] as object);
    for (let index = 0; index < keys.length; index += 1) {
      const key = keys[index];
      if (typeof key !== "string" || key === "constructor" || ArrayPrototypeIncludes(HOOK_NAMES, key)) continue;
      const meant = closestKey(key, HOOK_NAMES);
      if (meant !== undefined)
        invalidArgument(`options.hooks has an unknown hook ${JSONStringify(key)} (did you mean ${JSONStringify(meant)}?)`);
    }
  }
}

/**
 * A method found on the object or its prototypes (`chain`), as a data property (an accessor is
 * refused, never called). Object.prototype is not on the chain: a hook planted there is not a hook.
 */
function hookOf(chain: readonly object[], name: HookName | "onHookError"): Hook | undefined {
  for (let link = 0; link < chain.length; link += 1) {
    const descriptor = ObjectGetOwnPropertyDescriptor(chain[link] as object, name);
    if (descriptor === undefined) continue;
    if (!ObjectHasOwn(descriptor, "value")) invalidArgument(`options.hooks.${name} must be a data property, not an accessor`);
    const value: unknown = descriptor.value;
    if (value === undefined) return undefined;
    if (typeof value !== "function" || isProxy(value)) invalidHook(name, describeValue(value));
    return value as Hook;
  }
  return undefined;
}

function invalidHook(name: string, got: string): never {
  throw new ToolContractError(ContractErrorCode.INVALID_ARGUMENT, `options.hooks.${name} must be a function (got ${got})`);
}

/** Calls an observer hook; whatever it does (throws, returns a rejecting promise) stays with it. */
function notify(hooks: ResolvedHooks, name: HookName, hook: Hook | undefined, args: unknown[]): void {
  if (hook === undefined) return;
  let returned: unknown;
  try {
    returned = ReflectApply(hook, hooks.receiver, args);
  } catch (error) {
    hookFailed(hooks, error, name);
    return;
  }
  // Not awaited (an observer never delays a call), but a rejection is observed and reported,
  // and so is a promise whose species cannot be read (untrusted.ts).
  observeRejection(returned, (error) => hookFailed(hooks, error, name));
}

function hookFailed(hooks: ResolvedHooks, error: unknown, name: HookName): void {
  const onHookError = hooks.onHookError;
  if (onHookError === undefined) return;
  try {
    observeRejection(ReflectApply(onHookError, hooks.receiver, [error, name]), ignore);
  } catch {
    // the error reporter's own failure has nowhere left to go
  }
}

const DENIED_WITHOUT_REASON: FailureText = ObjectFreeze({ text: "the call was denied", cut: false });
const APPROVAL_FAILED: FailureText = ObjectFreeze({ text: "the call could not be approved: the approval hook failed", cut: false });

/**
 * Runs `beforeExecute` when there is one (undefined when not). Resolves to undefined when
 * the call is allowed, or to the denial's reason; rejects with the signal's reason the
 * moment it aborts, without waiting for the hook.
 */
export function approve(hooks: ResolvedHooks, request: RunRequest): Promise<FailureText | undefined> | undefined {
  const beforeExecute = hooks.beforeExecute;
  if (beforeExecute === undefined) return undefined;
  const { call, tool, signal, app } = request;
  // An adapter call's hook, like its tool, gets the call's own signal, never the framework's shared one (own-signal.ts).
  const handed = request.ownSignal === undefined ? signal : request.ownSignal.signal;
  const context: ApprovalContext = ObjectFreeze(
    app === undefined ? { signal: handed, toolCallId: call.id } : { signal: handed, toolCallId: call.id, app },
  );
  return new NativePromise((resolve, reject) => {
    const unwatch = watchAbort(signal, () => reject(abortReason(signal))); // the pipeline checked it has not aborted
    const decide = (decision: unknown): void => {
      unwatch();
      resolve(readDecision(hooks, decision));
    };
    const fail = (error: unknown): void => {
      unwatch();
      hookFailed(hooks, error, "beforeExecute");
      resolve(APPROVAL_FAILED);
    };
    let returned: unknown;
    try {
      returned = ReflectApply(beforeExecute, hooks.receiver, [call, tool, context]);
    } catch (error) {
      fail(error);
      return;
    }
    const pending = untrustedPromise(returned); // a promise or a thenable is awaited; anything else is the decision
    // (A hook that aborts the signal itself has already rejected this promise, through the watch.)
    // A promise whose species cannot be read fails, like a rejection: closed.
    if (pending === undefined) decide(returned);
    else whenSettled(pending, decide, fail);
  });
}

/** `{ allow: true }` allows; `{ allow: false, reason }` denies with the reason; anything else denies. */
function readDecision(hooks: ResolvedHooks, decision: unknown): FailureText | undefined {
  if (typeof decision === "object" && decision !== null && !isProxy(decision)) {
    const allow = readOwnDataProperty(decision, "allow");
    if (allow === true) return undefined;
    if (allow === false) {
      const reason = readOwnDataProperty(decision, "reason");
      return typeof reason === "string" && reason.length > 0
        ? cutToCodePoints(reason, Limits.MAX_STRING_CODE_POINTS)
        : DENIED_WITHOUT_REASON;
    }
  }
  hookFailed(
    hooks,
    new TypeError(`beforeExecute must give { allow: true } or { allow: false, reason } (got ${describeValue(decision)})`),
    "beforeExecute",
  );
  return APPROVAL_FAILED;
}

/**
 * One call's telemetry: emits onCallStart when made, collects what the runner records, and
 * emits onCallEnd once when the call settles (onThreadKilled for a kill recorded after that);
 * its span, when one records it, is told the same (tracing.ts).
 */
export class CallTrace {
  readonly #started = PerformanceNow();
  #runStarted: number | undefined;
  #runMs: number | undefined;
  #queueWaitMs = 0;
  #threadId: number | undefined;
  #threadKilled = false;
  #settled = false;
  /** Set by a durable call (durable-call.ts): how it got its outcome. */
  durable: DurableCallEnd | undefined;

  constructor(
    readonly hooks: ResolvedHooks | undefined,
    readonly call: Readonly<ToolCall>,
    readonly span: ToolSpan | undefined,
    readonly meters: ToolMeters | undefined,
  ) {
    if (hooks !== undefined) notify(hooks, "onCallStart", hooks.onCallStart, [ObjectFreeze({ toolCallId: call.id, toolName: call.name })]);
  }

  /** `RunRequest.record` of this call. */
  readonly record = (facts: RunFacts): void => {
    if (typeof facts !== "object" || facts === null) return;
    const { queueWaitMs, threadId, threadKilled } = facts;
    if (typeof queueWaitMs === "number" && queueWaitMs >= 0 && queueWaitMs !== NumberPositiveInfinity) {
      this.#queueWaitMs = queueWaitMs;
      this.span?.waited(queueWaitMs);
    }
    if (typeof threadId === "number" && NumberIsInteger(threadId)) {
      this.#threadId = threadId;
      this.span?.ranOn(threadId);
    }
    if (threadKilled !== true) return;
    this.meters?.threadKilled();
    if (!this.#settled) {
      this.#threadKilled = true;
      this.span?.threadKilled();
    } else if (this.hooks !== undefined)
      notify(this.hooks, "onThreadKilled", this.hooks.onThreadKilled, [
        ObjectFreeze({ toolCallId: this.call.id, toolName: this.call.name, threadId: this.#threadId }),
      ]);
  };

  runStarted(): void {
    this.#runStarted = PerformanceNow();
  }

  /** The runner settled (or the call ended while it ran): its time is measured once. */
  runEnded(): void {
    if (this.#runStarted !== undefined && this.#runMs === undefined) this.#runMs = PerformanceNow() - this.#runStarted;
  }

  ended(result: ToolResultMessage): void {
    this.runEnded();
    this.span?.ended(result);
    this.#end(result.isError ? "error" : "success", result.isError ? errorCodeOf(result.content) : undefined);
  }

  rejected(error: unknown, signal: AbortSignal): void {
    this.runEnded();
    const aborted = isAborted(signal) && error === abortReason(signal);
    this.span?.rejected(error, aborted);
    this.#end(aborted ? "aborted" : "rejected", undefined);
  }

  #end(outcome: CallEndOutcome, code: string | undefined): void {
    this.#settled = true;
    const durationMs = PerformanceNow() - this.#started;
    this.meters?.callEnded(this.call.name, outcome, code, durationMs);
    if (this.hooks === undefined) return;
    const fields = {
      toolCallId: this.call.id,
      toolName: this.call.name,
      outcome,
      code,
      durationMs,
      queueWaitMs: this.#queueWaitMs,
      runMs: this.#runMs !== undefined && this.#runMs > this.#queueWaitMs ? this.#runMs - this.#queueWaitMs : 0,
      threadId: this.#threadId,
      threadKilled: this.#threadKilled,
    };
    const durable = this.durable;
    const event: CallEndEvent = ObjectFreeze(durable === undefined ? fields : { ...fields, durable });
    notify(this.hooks, "onCallEnd", this.hooks.onCallEnd, [event]);
  }
}

function ignore(): void {}
