// The adapters' `durable` option: `durable: (context) => ({ runId })`, the run identity the
// framework itself keeps (LangGraph's thread_id, the OpenAI Agents run context, the AI SDK's
// tool context), asked once per call, so each call runs as a durable call keyed by (runId,
// its call id) on the source executor. Read here once, so every adapter refuses and fails
// alike; adapters where it cannot apply refuse it by name (refuseDurableOption).
// docs/durable.md — Durable calls with your framework.
import { ContractErrorCode } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { isProxy, ObjectFreeze, ObjectHasOwn } from "../contract/primordials.js";
import { readDurableCallOption } from "../executor/durable-call.js";
import type { ResolvedSource } from "./source.js";

/** What an adapter's `durable` function answers: the run the call belongs to (1 to 1024 characters). */
export interface DurableRun {
  readonly runId: string;
}

/** An adapter's `durable` option: the run of a call, from what the framework handed the call (`context`, frozen). */
export type DurableRunOf<Context> = (context: Context) => DurableRun | Promise<DurableRun>;

/**
 * Asks the app's function for a call's run: the frozen `{ runId }` the source executor is given
 * as `options.durable`. A throw, a rejection or an answer that is not `{ runId }` with a valid
 * run id rejects with ToolContractError(INVALID_ARGUMENT), and the call does not run: a call
 * that was meant to be durable never runs as a plain one.
 */
export type DurableRunReader<Context> = (context: Context) => Promise<DurableRun>;

/**
 * Reads the `durable` option of adapter `api`: undefined when absent; a function that is not a
 * Proxy, else INVALID_ARGUMENT. A ToolRegistry source is refused here, when the tools are made:
 * its calls run in-process without a store. An executor is asked at each call, and one made
 * without `durable: { store }` refuses the call itself (INVALID_ARGUMENT).
 */
export function readDurableOption<Context>(value: unknown, api: string, source: ResolvedSource): DurableRunReader<Context> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "function" || isProxy(value)) {
    throw new ToolContractError(
      ContractErrorCode.INVALID_ARGUMENT,
      `${api}: options.durable must be a function (context) => ({ runId }), not a Proxy (got ${value === null ? "null" : typeof value})`,
    );
  }
  if (source.isRegistry) {
    throw new ToolContractError(
      ContractErrorCode.INVALID_ARGUMENT,
      `${api}: options.durable needs an executor made with durable: { store } (toolgate/durable), not a ToolRegistry, whose calls keep no records`,
    );
  }
  const runOf = value as DurableRunOf<Context>;
  return async (context) => {
    let answer: unknown;
    try {
      answer = await runOf(context);
    } catch (error) {
      throw new ToolContractError(ContractErrorCode.INVALID_ARGUMENT, `${api}: options.durable threw; the call did not run`, {
        cause: error,
      });
    }
    let runId: string | undefined;
    let why = "it answered undefined";
    try {
      runId = answer === undefined ? undefined : readDurableCallOption(answer);
    } catch (error) {
      why = (error as Error).message;
    }
    if (runId === undefined) {
      throw new ToolContractError(
        ContractErrorCode.INVALID_ARGUMENT,
        `${api}: options.durable must answer { runId } (a string of 1 to 1024 characters); the call did not run: ${why}`,
      );
    }
    return ObjectFreeze({ runId });
  };
}

/**
 * Refuses a `durable` option by name, before the adapter's unknown-option check would call it
 * unknown: `why` says why durable calls do not apply to adapter `api`.
 */
export function refuseDurableOption(options: unknown, api: string, why: string): void {
  if (typeof options !== "object" || options === null || isProxy(options) || !ObjectHasOwn(options, "durable")) return;
  throw new ToolContractError(ContractErrorCode.INVALID_ARGUMENT, `${api}: options.durable is not available here: ${why}`);
}
