// What crosses the thread boundary, in both directions. Outcomes are encoded explicitly:
// errors lose their class and own properties when structured-cloned.

/** Main → worker, one per call: only validated arguments travel. */
export interface WorkerTask {
  readonly kind: "run";
  readonly taskId: number;
  /** The task's cells on the task board. */
  readonly slot: number;
  /** Index into `ToolWorkerData.modules` (a number clones faster than the URL). */
  readonly module: number;
  readonly toolName: string;
  readonly toolCallId: string;
  readonly args: unknown;
}

/**
 * Main → worker once per initial thread, from `create()`. Piscina hands tasks to its
 * initial threads before they have loaded the entry module; a warm-up makes sure each has
 * subscribed to the control channel before a real call (and its abort) can reach it.
 */
export interface WorkerWarmup {
  readonly kind: "warmup";
}

/** Worker → main: the bounded content, a fatal error's message, or "stopped by abort". */
export type WorkerOutcome =
  | { readonly kind: "result"; readonly content: string; readonly isError: boolean }
  | { readonly kind: "fatal"; readonly message: string }
  | { readonly kind: "aborted" }
  | { readonly kind: "warm" };

/** Why the main thread asks a worker to stop a task. */
export type StopReason = "abort" | "timeout";

/** The control object each worker exposes to the main thread over comlink. */
export interface WorkerControl {
  /** Fires the worker-side signal of `taskId`; true when this worker was running it. */
  stop(taskId: number, reason: StopReason): boolean;
}

/** `workerData` of every pool thread. */
export interface ToolWorkerData {
  /** Name of the BroadcastChannel carrying the comlink control messages. */
  readonly controlChannel: string;
  /** URLs of the tool modules, in `create()` order. */
  readonly modules: readonly string[];
  /** The task board's memory (see task-board.ts). */
  readonly board: SharedArrayBuffer;
}

/** Addresses on the control channel. */
export const MAIN_ADDRESS = "main";
export const workerAddress = (threadId: number): string => `worker:${threadId}`;
