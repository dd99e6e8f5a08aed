// Timeouts: the one rule for which limit applies to a call, and the cooperative timer of
// executors that run the tool on the calling thread. A runner that owns a thread (the worker
// pool) enforces `RunRequest.timeoutMs` its own way, and can stop a tool that ignores it.
// docs/operations.md — Timeouts; docs/contract.md: rule W3 — timeout and termination (the pool's own way).
import { COURSE_TOOL_EXECUTION_TIMEOUT } from "../contract/constants.js";
import {
  AbortControllerPrototypeAbort,
  AbortControllerPrototypeGetSignal,
  ClearTimeout,
  type DOMExceptionInstance,
  isPromise,
  NativeAbortController,
  NativeDOMException,
  ObjectFreeze,
  PromisePrototypeThen,
  SetTimeout,
} from "../contract/primordials.js";
import { errorContent } from "../contract/results.js";
import { watchAbort } from "./abort-watch.js";
import type { ToolOutcome } from "./run-tool.js";
import { abortReason } from "./signal.js";

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
    content: errorContent(COURSE_TOOL_EXECUTION_TIMEOUT, { text: `the tool did not finish within ${timeoutMs} ms`, cut: false }),
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
