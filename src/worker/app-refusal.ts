// `app` never goes to a worker thread: a live handle (a socket, a connection pool) cannot be
// structured-cloned, and a copy of one would not be the same handle. A worker executor given
// one refuses it, up front, rather than dropping it; its tools get theirs from `setup()`.
// docs/contract.md: rule 7 — execution context (no `app` across threads).
import { ContractErrorCode } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { isProxy, ObjectGetOwnPropertyDescriptor, ObjectHasOwn } from "../contract/primordials.js";

/** The INVALID_ARGUMENT an `app` option (the executor's or a call's) gets. */
export function appRefused(): ToolContractError {
  return new ToolContractError(
    ContractErrorCode.INVALID_ARGUMENT,
    "options.app cannot be sent to a worker thread (a live handle cannot cross threads): export a setup() from the tool module instead; it runs once in each worker thread, and what it returns is the context.app of that module's tools there",
  );
}

/**
 * The refusal for call (or batch) options that carry an `app` data property; undefined
 * otherwise (options that are no object, or an accessor, are the pipeline's to refuse).
 */
export function callAppRefusal(options: unknown): ToolContractError | undefined {
  if (typeof options !== "object" || options === null || isProxy(options)) return undefined;
  const descriptor = ObjectGetOwnPropertyDescriptor(options, "app");
  return descriptor !== undefined && ObjectHasOwn(descriptor, "value") && descriptor.value !== undefined ? appRefused() : undefined;
}
