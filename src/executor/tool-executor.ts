// The one interface every executor implements: in-process, worker pool, queue. Adapters,
// batches, benchmarks and the contract suite take a ToolExecutor and nothing else; and the record
// of each executor's argument budgets, which adapters look up by the executor.

import type { ToolApp } from "../contract/app.js";
import {
  type ArgumentBudgets,
  type AttachmentBudgets,
  DEFAULT_ARGUMENT_BUDGETS,
  type OutputBudgets,
  type ResolvedArgumentBudgets,
} from "../contract/budgets.js";
import { WeakMapPrototypeGet, WeakMapPrototypeSet } from "../contract/primordials.js";
import type { ToolResultMessage } from "../contract/results.js";
import type { ToolRegistry } from "../contract/tools.js";
import type { DurableStore } from "../durable/store.js";
import type { ToolExecutorHooks } from "./hooks.js";
import type { ProgressListener } from "./progress.js";
import type { TracingOptions } from "./tracing-options.js";

/** Options of one call (`executeToolCall`); every field is optional. */
export interface CallOptions {
  /**
   * This call's time limit in ms (1 to 2^31 - 1): overrides the tool's and the executor's.
   * Expiry gives a TOOL_EXECUTION_TIMEOUT result and fires the tool's signal with a TimeoutError.
   */
  readonly timeoutMs?: number;
  /** `context.app` for this call's tool, instead of the executor's `app` (in-process tools only). */
  readonly app?: ToolApp;
  /** This call's argument budgets, over the executor's (validated up front: INVALID_ARGUMENT); the tool's own still tighten them. */
  readonly argumentBudgets?: ArgumentBudgets;
  /**
   * Receives the tool's `context.reportProgress` reports as `{ toolCallId, toolName,
   * progress, total, message }`: throttled (at most one per 50 ms per call, the latest
   * report of a burst), never after the call settled or its signal aborted. A throw from it
   * is ignored, and so is the rejection of a promise it returns (observed, never unhandled).
   * From a worker, reports are throttled in the thread and cross its port.
   */
  readonly onProgress?: ProgressListener;
  /**
   * Makes the call durable (docs/durable.md): keyed by (`runId`, the call's id) in the
   * executor's store, it runs at most once, and a re-issue of it (after a crash, a resume, a
   * retry) gets the same outcome. In a batch, each member is keyed by its own call id. An
   * executor without `durable: { store }` refuses it (INVALID_ARGUMENT).
   */
  readonly durable?: DurableCallOptions;
}

/** A call's `durable` option. */
export interface DurableCallOptions {
  /** The run (or thread) the call belongs to: the same after a restart (non-empty, at most 1024 characters). */
  readonly runId: string;
}

/** An executor's `durable` option. */
export interface DurableExecutorOptions {
  /** Where the records live: `memoryDurableStore()` or `redisDurableStore({ connection })` from toolgate/durable. */
  readonly store: DurableStore;
}

/**
 * The options of the in-process and worker executors besides their tools (the worker refuses
 * `app`). The queue executor takes `timeoutMs`, `hooks` and `argumentBudgets` of these and
 * refuses the others (docs/operations.md has the table).
 */
export interface ExecutorOptions {
  /** Default time limit of a call in ms (1 to 2^31 - 1); a tool's `timeoutMs` and a call's override it. Default: none. */
  readonly timeoutMs?: number;
  /** Approval and telemetry hooks; they run on the calling (main) thread only. */
  readonly hooks?: ToolExecutorHooks;
  /**
   * What each call's OpenTelemetry span records besides the conventions' required attributes
   * (arguments and results: off by default). Spans are recorded whenever an SDK is registered
   * (docs/operations.md — Tracing).
   */
  readonly tracing?: TracingOptions;
  /** `context.app` of every call's tool (in-process tools only; worker tools get theirs from `setup()`). */
  readonly app?: ToolApp;
  /** Argument budgets of every call (a call's `options.argumentBudgets` override them; a tool's own only tighten them). */
  readonly argumentBudgets?: ArgumentBudgets;
  /** Output budgets of every call (a tool's own `budgets` override them). */
  readonly outputBudgets?: OutputBudgets;
  /** Attachment budgets of every result (a tool's own `attachmentBudgets` override them). */
  readonly attachmentBudgets?: AttachmentBudgets;
  /** Durable calls' store: calls with `options.durable` need it (docs/durable.md). */
  readonly durable?: DurableExecutorOptions;
}

/** Options of a batch: the per-call options, plus how many calls run at once. */
export interface BatchOptions extends CallOptions {
  /** Calls running at once: a positive integer or Infinity (the default: all at once). */
  readonly concurrency?: number;
}

// docs/contract.md: rule W7 — one contract suite (every executor implements this interface).
/**
 * Runs untrusted tool calls through the boundary. Every implementation keeps the contract
 * of `docs/contract.md`: a call resolves to a frozen result linked to it (a success or a
 * recoverable `isError: true` result), or rejects with `signal.reason`, a
 * `ToolContractError` or a `NonRecoverableToolError`.
 */
export interface ToolExecutor {
  /** A copy of the registry the executor runs (registering into the copy changes nothing). */
  readonly registry: ToolRegistry;
  /** Runs one call. */
  executeToolCall(call: unknown, signal: AbortSignal, options?: CallOptions): Promise<ToolResultMessage>;
  /**
   * Runs many calls: every call is snapshotted before any runs (a malformed one rejects the
   * batch with INVALID_TOOL_CALL), at most `options.concurrency` run at once, and results
   * come back in call order, each linked to its own call. Abort rejects with `signal.reason`;
   * a NonRecoverableToolError rejects the batch and aborts the calls still running.
   */
  executeBatch(calls: readonly unknown[], signal: AbortSignal, options?: BatchOptions): Promise<ToolResultMessage[]>;
  /** Stops accepting calls and settles every call already accepted. Idempotent. */
  close(): Promise<void>;
}

// Each executor's resolved argument budgets, kept where an adapter can find them by the
// executor object: the Pi adapter checks a call's arguments before Pi's own validator runs,
// and must refuse what the executor would refuse (issue 28, defect 7). A WeakMap, so the
// record never keeps an executor alive and nothing is added to the executor's public shape.
// docs/adapters.md — Use it with Pi.

const argumentBudgetsByExecutor = new WeakMap<object, ResolvedArgumentBudgets>();

/** Records `executor`'s argument budgets (its constructor calls this once). */
export function recordArgumentBudgets(executor: object, budgets: ResolvedArgumentBudgets): void {
  WeakMapPrototypeSet(argumentBudgetsByExecutor, executor, budgets);
}

/** The argument budgets `source` applies to a call: an executor's own, or the defaults (a registry, a wrapper of the user's). */
export function argumentBudgetsOf(source: unknown): ResolvedArgumentBudgets {
  if (typeof source !== "object" || source === null) return DEFAULT_ARGUMENT_BUDGETS;
  return WeakMapPrototypeGet(argumentBudgetsByExecutor, source) ?? DEFAULT_ARGUMENT_BUDGETS;
}
