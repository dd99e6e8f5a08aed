// The caller's AbortSignal: read through captured intrinsics, then watched for one call at a
// time through one shared listener per signal.
//
// AbortSignal access through captured intrinsics: a signal's own or patched `aborted`,
// `reason` or `throwIfAborted` are never consulted.
// docs/contract.md: rule 8 — abort wins; rule 4 — call snapshot (a signal of the wrong kind).
import { ContractErrorCode } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import {
  AbortSignalPrototypeGetAborted,
  AbortSignalPrototypeGetReason,
  EventTargetPrototypeAddEventListener,
  isProxy,
  SetPrototypeAdd,
  SetPrototypeDelete,
  setValueStepper,
  WeakMapPrototypeGet,
  WeakMapPrototypeSet,
} from "../contract/primordials.js";

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
  throw new ToolContractError(ContractErrorCode.INVALID_ARGUMENT, "signal must be an AbortSignal");
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

// One abort listener per signal, shared by every call that races it. An agent run reuses
// one signal for thousands of calls; adding and removing an EventTarget listener per call
// costs more than the rest of a trivial call, while adding to a Set is nearly free.
// docs/contract.md: rule 8 — abort wins (one shared listener per run signal).

type Callback = () => void;

const watchers = new WeakMap<AbortSignal, Set<Callback>>();

/**
 * Calls `callback` once when `signal` aborts (the caller has checked it has not yet);
 * returns the function that unsubscribes it. The signal's listener holds only the Set, so a
 * signal that goes away takes everything with it.
 */
export function watchAbort(signal: AbortSignal, callback: Callback): Callback {
  let callbacks = WeakMapPrototypeGet(watchers, signal);
  if (callbacks === undefined) {
    const created = new Set<Callback>();
    callbacks = created;
    WeakMapPrototypeSet(watchers, signal, created);
    EventTargetPrototypeAddEventListener(signal, "abort", () => notifyAll(created), { once: true });
  }
  SetPrototypeAdd(callbacks, callback);
  const subscribed = callbacks;
  return () => {
    SetPrototypeDelete(subscribed, callback);
  };
}

function notifyAll(callbacks: Set<Callback>): void {
  const pending: Callback[] = [];
  const next = setValueStepper(callbacks);
  for (let step = next(); step.done !== true; step = next()) pending[pending.length] = step.value;
  for (let index = 0; index < pending.length; index += 1) (pending[index] as Callback)();
}
