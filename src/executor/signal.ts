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
// costs more than the rest of a trivial call. The calls watching a signal are a doubly linked
// list: subscribing links one node, unsubscribing unlinks it (a Set's add and delete of one
// entry per call measured 0.3–0.6 µs on a call's main-thread path: its table is rehashed as
// deleted entries pile up, and each step crosses a primordial).
// docs/contract.md: rule 8 — abort wins (one shared listener per run signal).

type Callback = () => void;

/** The calls watching one signal, oldest first. */
class Watchers {
  first: Watch | undefined = undefined;
  last: Watch | undefined = undefined;
}

/** One call's subscription: linked while `list` is set. */
class Watch {
  previous: Watch | undefined = undefined;
  next: Watch | undefined = undefined;
  constructor(
    readonly callback: Callback,
    public list: Watchers | undefined,
  ) {}
}

const watchers = new WeakMap<AbortSignal, Watchers>();

/**
 * Calls `callback` once when `signal` aborts (the caller has checked it has not yet);
 * returns the function that unsubscribes it. The signal's listener holds only the list, so a
 * signal that goes away takes everything with it.
 */
export function watchAbort(signal: AbortSignal, callback: Callback): Callback {
  let list = WeakMapPrototypeGet(watchers, signal);
  if (list === undefined) {
    const created = new Watchers();
    list = created;
    WeakMapPrototypeSet(watchers, signal, created);
    EventTargetPrototypeAddEventListener(signal, "abort", () => notifyAll(created), { once: true });
  }
  const watch = new Watch(callback, list);
  const last = list.last;
  if (last === undefined) list.first = watch;
  else {
    last.next = watch;
    watch.previous = last;
  }
  list.last = watch;
  return () => unlink(watch);
}

/** Unsubscribes `watch` (once: a second call finds it unlinked). */
function unlink(watch: Watch): void {
  const list = watch.list;
  if (list === undefined) return;
  watch.list = undefined;
  const { previous, next } = watch;
  if (previous === undefined) list.first = next;
  else previous.next = next;
  if (next === undefined) list.last = previous;
  else next.previous = previous;
  watch.previous = undefined;
  watch.next = undefined;
}

/** Every callback subscribed when the signal aborted, in the order they subscribed (one unsubscribed by an earlier one included). */
function notifyAll(list: Watchers): void {
  const pending: Callback[] = [];
  for (let watch = list.first; watch !== undefined; watch = watch.next) pending[pending.length] = watch.callback;
  for (let index = 0; index < pending.length; index += 1) (pending[index] as Callback)();
}
