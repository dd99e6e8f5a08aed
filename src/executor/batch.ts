// Batches of calls, written once for every executor: snapshot every call first, run them
// with a concurrency bound, return results in call order. Any rejection (abort, a
// NonRecoverableToolError) rejects the batch and aborts the calls still running.
// docs/contract.md: rule W6 — batches.

import type { ResolvedArgumentBudgets } from "../contract/budgets.js";
import { snapshotToolCall, type ToolCall } from "../contract/call.js";
import { ContractErrorCode } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { describeValue } from "../contract/grammar.js";
import {
  AbortControllerPrototypeAbort,
  AbortControllerPrototypeGetSignal,
  ArrayIsArray,
  isProxy,
  JSONStringify,
  MapPrototypeHas,
  MapPrototypeSet,
  NativeAbortController,
  NativePromise,
  NumberIsInteger,
  NumberPositiveInfinity,
  ObjectDefineProperty,
  ObjectGetOwnPropertyDescriptor,
  ObjectHasOwn,
  PromisePrototypeThen,
} from "../contract/primordials.js";
import type { ToolResultMessage } from "../contract/results.js";
import type { Tool } from "../contract/tools.js";
import { readOwnOption, validateObject } from "../contract/validators.js";
import { abortReason, assertAbortSignal, isAborted, throwIfAborted, watchAbort } from "./signal.js";
import type { BatchOptions } from "./tool-executor.js";

/** Runs one already-snapshotted call under the batch's signal. */
type RunOneCall = (call: Readonly<ToolCall>, signal: AbortSignal) => Promise<ToolResultMessage>;

/** How a batch's calls are snapshotted and run: the pipeline's, made once per batch. */
export interface BatchRunner {
  /** The batch's argument budgets (a tool's own tighten them, found in `tools` by the call's name). */
  readonly argumentBudgets: ResolvedArgumentBudgets;
  readonly tools: Map<string, Tool> | undefined;
  readonly runOne: RunOneCall;
}

/** The batch engine behind every executor's `executeBatch` (through the pipeline). */
export async function runBatch(
  calls: readonly unknown[],
  signal: AbortSignal,
  options: BatchOptions | undefined,
  runner: BatchRunner,
): Promise<ToolResultMessage[]> {
  const { argumentBudgets, tools, runOne } = runner;
  assertAbortSignal(signal);
  const concurrency = readConcurrency(options);
  throwIfAborted(signal);
  const snapshots = snapshotAll(calls, argumentBudgets, tools);
  const results: ToolResultMessage[] = [];
  // Resolving a promise with the array looks `then` up on it: an own (hidden, undefined) one
  // keeps a `then` planted on Array.prototype or Object.prototype from adopting it.
  ObjectDefineProperty(results, "then", { value: undefined });
  if (snapshots.length === 0) return results;

  // The batch's own controller: the caller's abort and a sibling's fatal error both stop it.
  const batch = new NativeAbortController();
  const batchSignal = AbortControllerPrototypeGetSignal(batch);
  const unwatch = watchAbort(signal, () => AbortControllerPrototypeAbort(batch, abortReason(signal)));
  try {
    await new NativePromise<void>((resolve, reject) => {
      let next = 0;
      let running = 0;
      let done = 0;
      let failed = false;
      const fail = (reason: unknown): void => {
        if (failed) return;
        failed = true;
        if (!isAborted(batchSignal)) AbortControllerPrototypeAbort(batch, reason);
        reject(reason);
      };
      const launch = (): void => {
        while (!failed && running < concurrency && next < snapshots.length) {
          const index = next;
          next += 1;
          running += 1;
          void PromisePrototypeThen(
            runOne(snapshots[index] as Readonly<ToolCall>, batchSignal),
            (result) => {
              running -= 1;
              done += 1;
              results[index] = result as ToolResultMessage;
              if (done === snapshots.length) resolve();
              else launch();
            },
            fail,
          );
        }
      };
      watchAbort(batchSignal, () => fail(abortReason(batchSignal)));
      launch();
    });
  } finally {
    unwatch();
  }
  throwIfAborted(signal); // the batch's results are published only now
  return results;
}

function readConcurrency(options: BatchOptions | undefined): number {
  if (options === undefined) return NumberPositiveInfinity;
  validateObject(options, "batch options"); // its keys were checked with the per-call ones (readCallOptions)
  const value = readOwnOption(options, "concurrency", "options");
  if (value === undefined) return NumberPositiveInfinity;
  if (value === NumberPositiveInfinity || (typeof value === "number" && NumberIsInteger(value) && value >= 1)) return value;
  throw new ToolContractError(
    ContractErrorCode.INVALID_ARGUMENT,
    `options.concurrency must be a positive integer or Infinity (got ${describeValue(value)})`,
  );
}

/** Every call snapshotted, by index (holes are malformed calls), before anything runs. */
function snapshotAll(
  calls: readonly unknown[],
  argumentBudgets: ResolvedArgumentBudgets,
  tools: Map<string, Tool> | undefined,
): Readonly<ToolCall>[] {
  if (!ArrayIsArray(calls) || isProxy(calls)) {
    throw new ToolContractError(ContractErrorCode.INVALID_TOOL_CALL, "a batch must be an array of tool calls");
  }
  const snapshots: Readonly<ToolCall>[] = [];
  const ids = new Map<string, number>();
  const length = calls.length;
  for (let index = 0; index < length; index += 1) {
    const descriptor = ObjectGetOwnPropertyDescriptor(calls, index);
    if (descriptor === undefined || !ObjectHasOwn(descriptor, "value")) {
      throw new ToolContractError(ContractErrorCode.INVALID_TOOL_CALL, `calls[${index}] is a hole or an accessor`);
    }
    const snapshot = snapshotToolCall(descriptor.value, argumentBudgets, tools);
    // A repeated id would give two results the same link in the transcript.
    if (MapPrototypeHas(ids, snapshot.id)) {
      throw new ToolContractError(ContractErrorCode.INVALID_TOOL_CALL, `calls[${index}] repeats the call id ${JSONStringify(snapshot.id)}`);
    }
    MapPrototypeSet(ids, snapshot.id, index);
    snapshots[index] = snapshot;
  }
  return snapshots;
}
