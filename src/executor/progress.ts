// Progress from a running tool to the caller: reading a tool's report (untrusted: getters,
// Proxies), coalescing bursts, and never delivering once the call settled or aborted.
// `ProgressThrottle` is transport-neutral so a worker thread can throttle what it posts
// with the same rules as the in-process executor uses for its listener.
// docs/contract.md: rule 7 — execution context (`reportProgress`); docs/worker.md — Worker → main: per-task messages.
import { ContractErrorCode } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { describeValue } from "../contract/grammar.js";
import {
  ClearTimeout,
  isProxy,
  NumberIsFinite,
  ObjectFreeze,
  ObjectGetOwnPropertyDescriptor,
  ObjectHasOwn,
  ReflectApply,
  SetTimeout,
  TimeoutPrototypeUnref,
  type TimerHandle,
} from "../contract/primordials.js";
import { cutToCodePoints } from "../contract/serialize.js";
import type { ToolProgressReport } from "../contract/tools.js";
import { observeRejection } from "../contract/untrusted.js";
import { isAborted } from "./signal.js";

/** What the caller's `onProgress` receives. Frozen. */
export interface ToolProgress {
  /** The call the report belongs to. */
  readonly toolCallId: string;
  readonly toolName: string;
  readonly progress: number;
  readonly total: number | undefined;
  readonly message: string | undefined;
}

/** The `onProgress` call option. */
export type ProgressListener = (progress: ToolProgress) => void;

/** A report as read: own data properties, checked, the message bounded. */
export interface ProgressReading {
  readonly progress: number;
  readonly total: number | undefined;
  readonly message: string | undefined;
}

/** At most one delivery per this many milliseconds per call; the reports between are coalesced into the latest. */
export const PROGRESS_INTERVAL_MS = 50;
/** A report's `message` is cut to this many code points. */
export const MAX_PROGRESS_MESSAGE_CODE_POINTS = 256;

/**
 * Reads a tool's report: `{ progress, total?, message? }` as own data properties of a plain
 * object (no getter is called, a Proxy is refused). Throws a TypeError naming the problem.
 */
export function readProgressReport(report: unknown): ProgressReading {
  if (typeof report !== "object" || report === null || isProxy(report)) {
    throw new TypeError("reportProgress: the report must be an object { progress, total?, message? } (not a Proxy)");
  }
  const progress = ownData(report, "progress");
  if (typeof progress !== "number" || !NumberIsFinite(progress)) throw new TypeError("reportProgress: progress must be a finite number");
  const total = ownData(report, "total");
  if (total !== undefined && (typeof total !== "number" || !NumberIsFinite(total))) {
    throw new TypeError("reportProgress: total must be a finite number when given");
  }
  const message = ownData(report, "message");
  if (message !== undefined && typeof message !== "string") throw new TypeError("reportProgress: message must be a string when given");
  return {
    progress,
    total,
    message: message === undefined ? undefined : cutToCodePoints(message, MAX_PROGRESS_MESSAGE_CODE_POINTS).text,
  };
}

/** An own data property's value; `undefined` when absent; a TypeError for an accessor. */
function ownData(report: object, key: string): unknown {
  const descriptor = ObjectGetOwnPropertyDescriptor(report, key);
  if (descriptor === undefined) return undefined;
  if (!ObjectHasOwn(descriptor, "value")) throw new TypeError(`reportProgress: ${key} must be a data property, not an accessor`);
  return descriptor.value;
}

/** `reportProgress` of a call nobody listens to: the report is checked, then dropped. */
export function discardProgress(report: ToolProgressReport): void {
  readProgressReport(report);
}

/**
 * Coalesces a stream of values into at most one delivery per interval: the first value is
 * delivered at once, later ones within the interval replace each other and only the latest
 * is delivered when the interval ends. Each `push` is O(1), so a tool reporting a million
 * times costs a million cheap stores and a handful of deliveries. After `close()` nothing
 * is delivered, not even a value still waiting. The timer never keeps the process alive.
 */
export class ProgressThrottle<T> {
  readonly #deliver: (value: T) => void;
  readonly #intervalMs: number;
  #timer: TimerHandle | undefined;
  #pending: { readonly value: T } | undefined;
  #closed = false;

  constructor(deliver: (value: T) => void, intervalMs: number = PROGRESS_INTERVAL_MS) {
    this.#deliver = deliver;
    this.#intervalMs = intervalMs;
  }

  push(value: T): void {
    if (this.#closed) return;
    if (this.#timer !== undefined) {
      this.#pending = { value };
      return;
    }
    this.#arm();
    this.#deliver(value);
  }

  close(): void {
    this.#closed = true;
    this.#pending = undefined;
    if (this.#timer !== undefined) ClearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    this.#timer = SetTimeout(() => this.#tick(), this.#intervalMs);
    TimeoutPrototypeUnref(this.#timer);
  }

  #tick(): void {
    this.#timer = undefined;
    const pending = this.#pending;
    if (pending === undefined || this.#closed) return;
    this.#pending = undefined;
    this.#arm();
    this.#deliver(pending.value);
  }
}

/** One call's progress channel to an in-thread listener. */
export interface ProgressChannel {
  /** The tool's `context.reportProgress`. */
  readonly report: (report: ToolProgressReport) => void;
  /** The call settled: nothing more is delivered. */
  readonly close: () => void;
}

/**
 * Progress of call `toolCallId` (tool `toolName`) to `listener`, throttled. A report is
 * dropped once `signal` has aborted; a listener that throws is ignored (it must not fail
 * the call it observes). Reports after `close()` are not even read.
 */
export function openProgressChannel(
  listener: ProgressListener,
  toolCallId: string,
  toolName: string,
  signal: AbortSignal,
): ProgressChannel {
  const throttle = new ProgressThrottle<ProgressReading>((reading) => {
    if (isAborted(signal)) return;
    const delivered: ToolProgress = ObjectFreeze({
      toolCallId,
      toolName,
      progress: reading.progress,
      total: reading.total,
      message: reading.message,
    });
    deliverProgress(listener, delivered);
  });
  let open = true;
  return {
    report: ObjectFreeze((report: ToolProgressReport) => {
      if (!open || isAborted(signal)) return;
      throttle.push(readProgressReport(report));
    }),
    close: () => {
      open = false;
      throttle.close();
    },
  };
}

/**
 * Calls the caller's listener. Whatever it does is ignored: a throw, and the rejection of a
 * promise it returns (observed through the captured `then`, never unhandled, even when its
 * species throws); a thenable or anything else it returns is not touched. The caller's
 * observer failing is not the tool's failure.
 */
export function deliverProgress(listener: ProgressListener, progress: ToolProgress): void {
  try {
    observeRejection(ReflectApply(listener, undefined, [progress]), ignore);
  } catch {
    // ignored, as documented
  }
}

function ignore(): void {}

/** `options.onProgress` checked: a function that is not a Proxy (INVALID_ARGUMENT otherwise). */
export function checkProgressListener(listener: unknown): ProgressListener {
  if (typeof listener !== "function" || isProxy(listener)) {
    throw new ToolContractError(
      ContractErrorCode.INVALID_ARGUMENT,
      `options.onProgress must be a function (got ${describeValue(listener)})`,
    );
  }
  return listener as ProgressListener;
}
