// What a `timeoutMs` may be, wherever it is given (a definition, an executor, a call).
// docs/operations.md — Timeouts; docs/contract.md: rule W3 — timeout and termination.
import { Limits, type ToolContractErrorCode } from "./constants.js";
import { ToolContractError } from "./errors.js";
import { describeValue } from "./grammar.js";
import { NumberIsInteger } from "./primordials.js";

/**
 * `value` as a timeout: an integer from 1 to Limits.MAX_TIMEOUT_MS. Above that a Node.js
 * timer fires at once (with a warning), so a larger value would mean "no time at all", not
 * "a long time"; it is refused with `code`, naming `label` and the value.
 */
export function checkTimeoutMs(value: unknown, label: string, code: ToolContractErrorCode): number {
  if (typeof value === "number" && NumberIsInteger(value) && value >= 1 && value <= Limits.MAX_TIMEOUT_MS) return value;
  throw new ToolContractError(code, `${label} must be an integer from 1 to ${Limits.MAX_TIMEOUT_MS} (got ${describeValue(value)})`);
}
