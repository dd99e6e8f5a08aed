// The tool's run: execute, the abort race, failure classification and serialization, then the
// cooperative timeout of a tool that runs on the calling thread.
//
// Running a validated call's tool and serializing its output: the part of a call that
// both executors share (in-process, and inside a worker thread).
// docs/contract.md: rule 7 — execution context, rule 8 — abort wins, rule 9 — failure classification.
import type { ToolApp } from "../contract/app.js";
import {
  attachmentBudgetsFor,
  DEFAULT_ATTACHMENT_BUDGETS,
  DEFAULT_OUTPUT_BUDGETS,
  outputBudgetsFor,
  type ResolvedAttachmentBudgets,
  type ResolvedOutputBudgets,
} from "../contract/budgets.js";
import { ToolErrorCode } from "../contract/constants.js";
import { isNonRecoverableToolError } from "../contract/errors.js";
import { outputMismatch, outputValidator } from "../contract/output-schema.js";
import {
  AbortControllerPrototypeAbort,
  AbortControllerPrototypeGetSignal,
  ClearTimeout,
  type DOMExceptionInstance,
  isPromise,
  NativeAbortController,
  NativeDOMException,
  NativePromise,
  ObjectFreeze,
  PromisePrototypeThen,
  SetTimeout,
} from "../contract/primordials.js";
import { type CarriedAttachment, checkAttachments, errorContent, splitOutput } from "../contract/results.js";
import { contentWithin } from "../contract/serialize.js";
import type { Tool, ToolContext, ValidationDecision } from "../contract/tools.js";
import { describeFailure, untrustedPromise, whenSettled } from "../contract/untrusted.js";
import { discardProgress } from "./progress.js";
import { abortReason, isAborted, throwIfAborted, watchAbort } from "./signal.js";

/**
 * The context a runner hands over: a whole ToolContext, or one without `reportProgress`
 * (then the tool's reports are checked and dropped).
 */
export type RunContext =
  | ToolContext
  | { readonly signal: AbortSignal; readonly toolCallId: string; readonly app?: ToolApp; readonly reportProgress?: undefined };

/** A finished call before it is linked: bounded content, and whether it is an error. */
export interface ToolOutcome {
  readonly content: string;
  readonly isError: boolean;
  /**
   * The output's attachments (`imageContent`), when it has some. Their `data` buffers are
   * exactly sized and owned by the outcome, so a worker can list them as transferables;
   * the pipeline checks (and, after a thread crossing, adopts) them again.
   */
  readonly attachments?: readonly CarriedAttachment[];
}

// Internal records resolve promises, which look up `then`: an own `then` (undefined) means a
// `then` patched onto Object.prototype is never consulted. Classes keep them fast to create
// (a null-prototype literal is a slow dictionary object).

/** How the tool's execute settled: `ok` with its value, or not, with what it threw. */
class Settlement {
  // biome-ignore lint/suspicious/noThenProperty: an own undefined `then` keeps a polluted Object.prototype.then from being consulted.
  readonly then = undefined;
  constructor(
    readonly ok: boolean,
    readonly payload: unknown,
  ) {}
}

/** A ToolOutcome record (also what a worker's reply is decoded into). */
export class Outcome implements ToolOutcome {
  // biome-ignore lint/suspicious/noThenProperty: as above, this record resolves a promise.
  readonly then = undefined;
  constructor(
    readonly content: string,
    readonly isError: boolean,
  ) {}
}

/** A success with attachments. */
export class OutcomeWithAttachments extends Outcome {
  constructor(
    content: string,
    readonly attachments: readonly CarriedAttachment[],
  ) {
    super(content, false);
  }
}

/**
 * What a run is bounded by, made once per executor (its RunRequests carry the executor's
 * budgets) or once per worker thread: the output and attachment budgets (a tool's own
 * override them) and, in a worker, where the task's lazily made signal is found.
 */
export interface RunSettings {
  readonly outputBudgets: ResolvedOutputBudgets;
  readonly attachmentBudgets: ResolvedAttachmentBudgets;
  /** A worker task's context makes its signal on first read: this gives it only if it was made (absent: the context's signal is read). */
  readonly signalIfMade?: (context: ToolContext) => AbortSignal | undefined;
}

const DEFAULT_RUN_SETTINGS: RunSettings = ObjectFreeze({
  outputBudgets: DEFAULT_OUTPUT_BUDGETS,
  attachmentBudgets: DEFAULT_ATTACHMENT_BUDGETS,
});

/**
 * Executes the tool and serializes what it returns, within `settings`' budgets (each
 * overridden by the tool's own). Gives the outcome (synchronously when the tool
 * returned a plain value); throws or rejects with the signal's reason as soon as the signal
 * aborts (without waiting for the tool), and with a NonRecoverableToolError the tool threw.
 * Any other failure is an error outcome.
 *
 * `abortSignal`: the signal the run's abort comes from when the context's is the tool's own,
 * made on first read and following this one (an adapter call's: own-signal.ts). runTool checks
 * and races this one, so a tool that never reads its signal never has one made. A parameter,
 * not a field of `settings`, so an adapter call does not allocate settings of its own.
 */
export function runTool(
  tool: Tool,
  args: unknown,
  runContext: RunContext,
  settings: RunSettings = DEFAULT_RUN_SETTINGS,
  abortSignal?: AbortSignal,
): ToolOutcome | Promise<ToolOutcome> {
  // In a worker, the abort can arrive while the call is queued.
  throwIfMadeAndAborted(abortSignal ?? signalSoFar(settings, runContext as ToolContext));
  const within = outputBudgetsFor(tool.budgets, settings.outputBudgets);
  const attachmentsWithin = attachmentBudgetsFor(tool.attachmentBudgets, settings.attachmentBudgets);
  // docs/contract.md: rule 7 — execution context (frozen, with the run's own signal).
  const context: ToolContext =
    runContext.reportProgress === undefined ? ObjectFreeze({ ...runContext, reportProgress: discardProgress }) : runContext;
  let returned: unknown;
  try {
    returned = tool.execute(args, context);
  } catch (error) {
    return failed(error, abortSignal ?? signalSoFar(settings, context), within);
  }
  const pending = untrustedPromise(returned);
  // A plain value is finished at once, with no settlement record (the common case).
  if (pending === undefined) return succeeded(returned, abortSignal ?? signalSoFar(settings, context), within, attachmentsWithin, tool);
  // Awaiting the tool reads the signal it is aborted by (raceAbort): a worker task's exists from here on.
  const signal = abortSignal ?? context.signal;
  return PromisePrototypeThen(raceAbort(pending, signal), (settled) =>
    settled.ok ? succeeded(settled.payload, signal, within, attachmentsWithin, tool) : failed(settled.payload, signal, within),
  ) as Promise<ToolOutcome>;
}

/** The run's signal as it stands: the context's, or a worker task's only if something made it (reading it would make one). */
function signalSoFar(settings: RunSettings, context: ToolContext): AbortSignal | undefined {
  const signalIfMade = settings.signalIfMade;
  return signalIfMade === undefined ? context.signal : signalIfMade(context);
}

/**
 * A worker task's signal is made only when something reads it: until then, nothing can abort
 * the run's synchronous steps, so runTool checks only a signal that exists.
 */
function throwIfMadeAndAborted(signal: AbortSignal | undefined): void {
  if (signal !== undefined) throwIfAborted(signal);
}

// docs/contract.md: rule 9 — failure classification.
/** After the tool threw or rejected: the abort check, then the failure as an error outcome (or rethrown, when non-recoverable). */
function failed(error: unknown, signal: AbortSignal | undefined, budgets: ResolvedOutputBudgets): ToolOutcome {
  throwIfMadeAndAborted(signal); // the tool settled, but abort may have come first
  if (isNonRecoverableToolError(error)) throw error;
  return new Outcome(errorContent(ToolErrorCode.EXECUTION_FAILED, describeFailure(error), budgets.maxContentCodePoints), true);
}

/** After the tool gave a value: the abort check, then its attachments checked and the value serialized. */
function succeeded(
  output: unknown,
  signal: AbortSignal | undefined,
  budgets: ResolvedOutputBudgets,
  attachmentBudgets: ResolvedAttachmentBudgets,
  tool: Tool,
): ToolOutcome {
  throwIfMadeAndAborted(signal); // the tool settled, but abort may have come first
  const cap = budgets.maxContentCodePoints;
  const split = splitOutput(output);
  let value = split === undefined ? output : split.value;
  // docs/contract.md — Structured output: checked here, where the tool runs (a worker thread too).
  const checkOutput = outputValidator(tool);
  if (checkOutput !== undefined) {
    let decision: ValidationDecision<unknown>;
    try {
      decision = checkOutput(value);
    } catch (error) {
      return new Outcome(errorContent(ToolErrorCode.EXECUTION_FAILED, describeFailure(error), cap), true);
    }
    if (!decision.ok)
      return new Outcome(errorContent(ToolErrorCode.EXECUTION_FAILED, { text: outputMismatch(decision.error), cut: false }, cap), true);
    value = decision.value; // the schema's output (its defaults and transforms applied) is what is serialized
  }
  const attachments = split === undefined ? undefined : split.attachments;
  // Where the tool runs (a worker thread too), so over-budget bytes never cross to the caller.
  const overBudget = attachments === undefined ? undefined : checkAttachments(attachments, attachmentBudgets);
  if (overBudget !== undefined) {
    return new Outcome(errorContent(ToolErrorCode.OUTPUT_SERIALIZATION_FAILED, { text: overBudget, cut: false }, cap), true);
  }
  // docs/contract.md: rule 10 — safe serialization, rule 11 — work budgets.
  const content = contentWithin(value, budgets);
  if (typeof content === "string")
    return attachments === undefined ? new Outcome(content, false) : new OutcomeWithAttachments(content, attachments);
  return new Outcome(errorContent(ToolErrorCode.OUTPUT_SERIALIZATION_FAILED, { text: content.message, cut: false }, cap), true);
}

// docs/contract.md: rule 8 — abort wins (while awaiting execute).
/** Settles with the tool's promise, or rejects with the abort reason the moment the signal aborts. */
function raceAbort(pending: Promise<unknown>, signal: AbortSignal): Promise<Settlement> {
  return new NativePromise((resolve, reject) => {
    if (isAborted(signal)) {
      reject(abortReason(signal)); // aborted while execute was running synchronously
      whenSettled(pending, ignore, ignore); // its rejection is still observed
      return;
    }
    const unwatch = watchAbort(signal, () => reject(abortReason(signal)));
    // A promise whose species cannot be read settles as a failure of the tool (rule 9).
    whenSettled(
      pending,
      (value) => {
        unwatch();
        resolve(new Settlement(true, value));
      },
      (error) => {
        unwatch();
        resolve(new Settlement(false, error));
      },
    );
  });
}

function ignore(): void {}

// The worker's setup() step awaits through this name (src/worker/thread-setup.ts).
export { asPromise } from "../contract/untrusted.js";

// Timeouts: the one rule for which limit applies to a call, and the cooperative timer of
// executors that run the tool on the calling thread. A runner that owns a thread (the worker
// pool) enforces `RunRequest.timeoutMs` its own way, and can stop a tool that ignores it.
// docs/operations.md — Timeouts; docs/contract.md: rule W3 — timeout and termination (the pool's own way).

/**
 * The one rule: the most specific limit wins. A call's `timeoutMs` (the caller knows this
 * call), else the tool's (its author knows what it needs), else the executor's (a default).
 * A tool may therefore run longer than the executor's default; the caller's AbortSignal
 * stays the hard ceiling over all of them (it rejects, where a timeout gives a result).
 */
export function effectiveTimeoutMs(call: number | undefined, tool: number | undefined, executor: number | undefined): number | undefined {
  return call ?? tool ?? executor;
}

/** The TOOL_EXECUTION_TIMEOUT outcome every executor gives when `timeoutMs` runs out. */
export function timeoutOutcome(timeoutMs: number): ToolOutcome {
  return ObjectFreeze({
    content: errorContent(ToolErrorCode.EXECUTION_TIMEOUT, { text: `the tool did not finish within ${timeoutMs} ms`, cut: false }),
    isError: true,
  });
}

/**
 * Runs `run` with a signal that aborts when `signal` does (with its reason) or when
 * `timeoutMs` passes (with a TimeoutError DOMException); the timeout gives the
 * TOOL_EXECUTION_TIMEOUT outcome. Cooperative: the timer fires only when the event loop is
 * free, so a tool that blocks the thread is not interrupted, and an outcome it returns
 * synchronously stands. The timer is cleared as soon as the run settles; while it runs, it
 * keeps the process alive as the pending call itself would.
 */
export function runWithTimeout(
  timeoutMs: number,
  signal: AbortSignal,
  run: (signal: AbortSignal) => ToolOutcome | Promise<ToolOutcome>,
): ToolOutcome | Promise<ToolOutcome> {
  const controller = new NativeAbortController();
  let expiry: DOMExceptionInstance | undefined; // made only when the timer fires: most calls finish in time
  const unwatch = watchAbort(signal, () => AbortControllerPrototypeAbort(controller, abortReason(signal)));
  const timer = SetTimeout(() => {
    expiry = new NativeDOMException(`The tool call timed out after ${timeoutMs} ms`, "TimeoutError");
    AbortControllerPrototypeAbort(controller, expiry);
  }, timeoutMs);
  const stop = (): void => {
    ClearTimeout(timer);
    unwatch();
  };
  let pending: ToolOutcome | Promise<ToolOutcome>;
  try {
    pending = run(AbortControllerPrototypeGetSignal(controller));
  } catch (error) {
    stop();
    throw error;
  }
  if (!isPromise(pending)) {
    stop();
    return pending;
  }
  return PromisePrototypeThen(
    pending as Promise<ToolOutcome>,
    (outcome) => {
      stop();
      return outcome;
    },
    (reason) => {
      stop();
      if (expiry !== undefined && reason === expiry) return timeoutOutcome(timeoutMs);
      throw reason;
    },
  ) as Promise<ToolOutcome>;
}
