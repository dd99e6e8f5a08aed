// AbortSignal access through captured intrinsics: a signal's own or patched `aborted`,
// `reason` or `throwIfAborted` are never consulted.
// docs/contract.md: rule 8 — abort wins; rule 4 — call snapshot (a signal of the wrong kind).
import { COURSE_TOOL_INVALID_ARGUMENT } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { AbortSignalPrototypeGetAborted, AbortSignalPrototypeGetReason, isProxy } from "../contract/primordials.js";

/** Throws ToolContractError(INVALID_ARGUMENT) unless `signal` is a genuine AbortSignal. */
export function assertAbortSignal(signal: unknown): asserts signal is AbortSignal {
  try {
    if (!isProxy(signal)) {
      AbortSignalPrototypeGetAborted(signal as AbortSignal); // the brand check: throws on anything else
      return;
    }
  } catch {
    // fall through to the contract error
  }
  throw new ToolContractError(COURSE_TOOL_INVALID_ARGUMENT, "signal must be an AbortSignal");
}

export function isAborted(signal: AbortSignal): boolean {
  return AbortSignalPrototypeGetAborted(signal);
}

export function abortReason(signal: AbortSignal): unknown {
  return AbortSignalPrototypeGetReason(signal);
}

/** When the signal has aborted, throws its reason itself (not a wrapper). */
export function throwIfAborted(signal: AbortSignal): void {
  if (AbortSignalPrototypeGetAborted(signal)) throw AbortSignalPrototypeGetReason(signal);
}
