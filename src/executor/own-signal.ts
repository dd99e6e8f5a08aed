// The signal of its own an adapter's in-process tool gets, made when something first reads it.
// An in-process tool gets the very signal, and anything it does to it must stay with its own
// call (adapters/source.ts: no call ever gets an object another call sees). A genuine
// AbortController costs a call microseconds to make on Node 20 (5 µs of a Pi step's 7), and
// most tools never read their signal: the pipeline checks and races the framework's signal
// itself (through toolgate's own watchers, which no tool sees), so the tool's own is made only
// when the tool, or anything it hands its context to, reads `context.signal` (as a worker
// task's is: worker/task-context.ts).
// docs/adapters.md ("The call's signal: what it costs"); docs/contract.md: rule 7 — execution context, rule 8 — abort wins.
import type { ToolApp } from "../contract/app.js";
import {
  type AbortControllerInstance,
  AbortControllerPrototypeAbort,
  AbortControllerPrototypeGetSignal,
  NativeAbortController,
  ObjectFreeze,
} from "../contract/primordials.js";
import type { ToolContext } from "../contract/tools.js";
import { contextWithSignalFrom } from "./context-signal.js";
import { AbortWatch, abortReason, isAborted, startWatching, stopWatching } from "./signal.js";

/**
 * One call's own signal, made on first read. Until `stop` (the call settled) it follows
 * `followed`, the signal the pipeline checks: aborted with its reason the moment it aborts (at
 * once if it already has). First read after `stop`, it is linked to nothing: aborted only if
 * `followed` had aborted when the call settled (a tool that ignored the abort and reads its
 * signal afterwards learns of it), whatever `followed` does later. One linked watch on
 * `followed` (executor/signal.ts), made with the signal.
 */
export class OwnSignal extends AbortWatch {
  #controller: AbortControllerInstance | undefined;
  #signal: AbortSignal | undefined;
  #stopped = false;
  /** Whether `followed` had aborted when the call settled (read then only if the signal was not made). */
  #abortedWhenStopped = false;

  /** `followed`: a genuine AbortSignal (the pipeline asserts it before any tool can read this one). */
  constructor(readonly followed: AbortSignal) {
    super();
  }

  get signal(): AbortSignal {
    if (this.#signal === undefined) {
      const controller = new NativeAbortController();
      this.#controller = controller;
      this.#signal = AbortControllerPrototypeGetSignal(controller);
      const followed = this.followed;
      if (this.#stopped ? this.#abortedWhenStopped : isAborted(followed)) AbortControllerPrototypeAbort(controller, abortReason(followed));
      else if (!this.#stopped) startWatching(followed, this);
    }
    return this.#signal;
  }

  onAbort(): void {
    AbortControllerPrototypeAbort(this.#controller as AbortControllerInstance, abortReason(this.followed));
  }

  /** The call settled: the signal, made or not, follows nothing from here on. */
  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#signal === undefined) this.#abortedWhenStopped = isAborted(this.followed);
    else stopWatching(this);
  }
}

/**
 * A frozen tool context whose `signal` is `own`'s, made on first read: the same own properties,
 * in the same order, as a context with a data `signal` (signal, toolCallId, reportProgress,
 * app?, then a durable call's idempotencyKey and attempt).
 */
export function contextWithOwnSignal(
  own: OwnSignal,
  toolCallId: string,
  reportProgress: ToolContext["reportProgress"],
  app: ToolApp | undefined,
  durable: { readonly idempotencyKey: string; readonly attempt: number } | undefined,
): ToolContext {
  const context = contextWithSignalFrom(own);
  context.toolCallId = toolCallId;
  context.reportProgress = reportProgress;
  if (app !== undefined) context.app = app;
  if (durable !== undefined) {
    context.idempotencyKey = durable.idempotencyKey;
    context.attempt = durable.attempt;
  }
  return ObjectFreeze(context) as unknown as ToolContext;
}
