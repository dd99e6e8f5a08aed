// Running a tool's validator: synchronous, before any side effect, and with its decision
// read strictly (own data properties only). Promises and thenables are refused but observed.
// docs/contract.md: rule 6 — validation first.
import { COURSE_TOOL_ARGUMENTS_INVALID, COURSE_TOOL_VALIDATION_FAILED, type RecoverableToolErrorCode } from "./constants.js";
import type { CourseTool } from "./definition.js";
import { isNonRecoverableToolError } from "./errors.js";
import { describeFailure, type FailureText, ownDataOr, readDataProperty } from "./failure.js";
import { describeValue } from "./grammar.js";
import { isPromise, isProxy, ObjectGetPrototypeOf, ObjectHasOwn, ObjectPrototype, ReflectApply } from "./primordials.js";
import { observeRejection } from "./untrusted-promises.js";

/** The validator accepted the arguments (`value` is what execute gets) or refused them. */
export type Validation =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly code: RecoverableToolErrorCode; readonly failure: FailureText };

const MALFORMED = "validate must return { ok: true, value } or { ok: false, error } synchronously";

/**
 * Runs `tool.validate(args)`. A thrown NonRecoverableToolError propagates; every other
 * problem is a recoverable verdict: TOOL_ARGUMENTS_INVALID for `{ ok: false, error }`,
 * TOOL_VALIDATION_FAILED for a throw or a malformed decision.
 */
export function validateArguments(tool: CourseTool, args: unknown): Validation {
  let decision: unknown;
  try {
    decision = tool.validate(args);
  } catch (error) {
    if (isNonRecoverableToolError(error)) throw error;
    return failed(COURSE_TOOL_VALIDATION_FAILED, describeFailure(error));
  }
  return readDecision(decision);
}

function readDecision(decision: unknown): Validation {
  if (typeof decision !== "object" || decision === null || isProxy(decision)) return malformed(`it returned ${describeValue(decision)}`);
  if (isPromise(decision)) {
    // Observed (untrusted-promises.ts), so a rejection is never unhandled and a species that throws stays here.
    observeRejection(decision, ignore);
    return malformed("it returned a Promise");
  }
  // A plain decision with no `then` on it or on Object.prototype needs no walk up the chain.
  const plain =
    ObjectGetPrototypeOf(decision) === ObjectPrototype && !ObjectHasOwn(decision, "then") && !ObjectHasOwn(ObjectPrototype, "then");
  const then = plain ? undefined : readDataProperty(decision, "then");
  if (typeof then === "function") {
    try {
      ReflectApply(then, decision, [ignore, ignore]);
    } catch {
      // a thenable that throws from then() has been observed as well as it can be
    }
    return malformed("it returned a thenable");
  }
  const ok = ownDataOr(decision, "ok", ABSENT);
  if (typeof ok !== "boolean") return malformed("its `ok` is not an own boolean data property");
  if (ok) {
    const value = ownDataOr(decision, "value", ABSENT);
    return value === ABSENT ? malformed("`ok` is true but there is no own `value` data property") : { ok: true, value };
  }
  const error = ownDataOr(decision, "error", ABSENT);
  if (error === ABSENT) return malformed("`ok` is false but there is no own `error` data property");
  return failed(COURSE_TOOL_ARGUMENTS_INVALID, describeFailure(error));
}

/** Marks an absent own data property, so that a present `undefined` differs from absence. */
const ABSENT: unique symbol = Symbol("absent");

function malformed(why: string): Validation {
  return failed(COURSE_TOOL_VALIDATION_FAILED, { text: `${MALFORMED}; ${why}`, cut: false });
}

function failed(code: RecoverableToolErrorCode, failure: FailureText): Validation {
  return { ok: false, code, failure };
}

function ignore(): void {}
