// The caller's AbortSignal: read through captured intrinsics, then watched for one call at a
// time through one shared listener per signal.
//
// AbortSignal access through captured intrinsics: a signal's own or patched `aborted`,
// `reason` or `throwIfAborted` are never consulted.
// docs/contract.md: rule 8 — abort wins; rule 4 — call snapshot (a signal of the wrong kind).
import { ContractErrorCode } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import {
  AbortControllerPrototypeGetSignal,
  AbortSignalPrototypeGetAborted,
  AbortSignalPrototypeGetReason,
  EventTargetPrototypeAddEventListener,
  isProxy,
  NativeAbortController,
  WeakMapPrototypeGet,
  WeakMapPrototypeSet,
  WeakSetPrototypeAdd,
  WeakSetPrototypeHas,
} from "../contract/primordials.js";

/** Throws ToolContractError(INVALID_ARGUMENT) unless `signal` is a genuine AbortSignal. */
export function assertAbortSignal(signal: unknown): asserts signal is AbortSignal {
  if (signal === NO_FRAMEWORK_SIGNAL) return;
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
  return signal !== NO_FRAMEWORK_SIGNAL && AbortSignalPrototypeGetAborted(signal);
}

export function abortReason(signal: AbortSignal): unknown {
  return AbortSignalPrototypeGetReason(signal);
}

/** When the signal has aborted, throws its reason itself (not a wrapper). */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal !== NO_FRAMEWORK_SIGNAL && AbortSignalPrototypeGetAborted(signal)) throw AbortSignalPrototypeGetReason(signal);
}

// One abort listener per signal, shared by every call that races it. An agent run reuses
// one signal for thousands of calls; adding and removing an EventTarget listener per call
// costs more than the rest of a trivial call. The calls watching a signal are a doubly linked
// list: subscribing links one node, unsubscribing unlinks it (a Set's add and delete of one
// entry per call measured 0.3–0.6 µs on a call's main-thread path: its table is rehashed as
// deleted entries pile up, and each step crosses a primordial).
// A caller that keeps one object per call links that object itself (AbortWatch): no node or
// closure per call.
// docs/contract.md: rule 8 — abort wins (one shared listener per run signal).

type Callback = () => void;

/** The calls watching one signal, oldest first. */
class Watchers {
  first: AbortWatch | undefined = undefined;
  last: AbortWatch | undefined = undefined;
}

/**
 * One call's subscription: linked while `list` is set. A caller that keeps one object per call
 * extends it (no closure or node per call); `onAbort` runs once when the signal aborts.
 */
export abstract class AbortWatch {
  previous: AbortWatch | undefined = undefined;
  next: AbortWatch | undefined = undefined;
  list: Watchers | undefined = undefined;
  abstract onAbort(): void;
}

class CallbackWatch extends AbortWatch {
  constructor(readonly callback: Callback) {
    super();
  }
  onAbort(): void {
    this.callback();
  }
}

const watchers = new WeakMap<AbortSignal, Watchers>();

/**
 * Signals made by `neverAbortingSignal`: their controller was dropped as they were made, so
 * nothing can ever abort them, and watching one would only cost a listener (on Node 20 adding
 * one to a fresh signal costs several microseconds).
 */
const neverAborting = new WeakSet<AbortSignal>();

/**
 * A fresh signal that can never abort, for a call whose caller gives none (an adapter's call
 * whose framework passes no signal): the call's own, so nothing a tool does to it reaches
 * another call. Watching it is free (startWatching links nothing).
 */
export function neverAbortingSignal(): AbortSignal {
  const signal = AbortControllerPrototypeGetSignal(new NativeAbortController());
  WeakSetPrototypeAdd(neverAborting, signal);
  return signal;
}

/**
 * What the pipeline checks for an adapter's in-process call whose framework passed no signal
 * (adapters/source.ts): a never-aborting signal made here once, that no tool or hook is ever
 * handed (each gets its call's OwnSignal). The checks above know it by identity and read
 * nothing: a call without a signal pays for none of its abort checks (each an intrinsic
 * getter's call, and the brand check's Proxy test).
 */
export const NO_FRAMEWORK_SIGNAL: AbortSignal = neverAbortingSignal();

/**
 * Calls `callback` once when `signal` aborts (the caller has checked it has not yet);
 * returns the function that unsubscribes it.
 */
export function watchAbort(signal: AbortSignal, callback: Callback): Callback {
  const watch = new CallbackWatch(callback);
  startWatching(signal, watch);
  return () => stopWatching(watch);
}

/**
 * Links `watch` to `signal`'s list: its `onAbort` runs once when the signal aborts (the caller
 * has checked it has not yet). The signal's listener holds only the list, so a signal that
 * goes away takes everything with it.
 */
export function startWatching(signal: AbortSignal, watch: AbortWatch): void {
  if (WeakSetPrototypeHas(neverAborting, signal)) return; // it never aborts: nothing to link (stopWatching finds it unlinked)
  let list = WeakMapPrototypeGet(watchers, signal);
  if (list === undefined) {
    const created = new Watchers();
    list = created;
    WeakMapPrototypeSet(watchers, signal, created);
    // No `once`: only a real abort tells the calls (an "abort" event anyone dispatches on a
    // signal that has not aborted is not one), and a signal aborts once.
    EventTargetPrototypeAddEventListener(signal, "abort", () => {
      if (AbortSignalPrototypeGetAborted(signal)) notifyAll(created);
    });
  }
  watch.list = list;
  const last = list.last;
  if (last === undefined) list.first = watch;
  else {
    last.next = watch;
    watch.previous = last;
  }
  list.last = watch;
}

/** Unsubscribes `watch` (once: a second call finds it unlinked). */
export function stopWatching(watch: AbortWatch): void {
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

/** Every call subscribed when the signal aborted, in the order they subscribed (one unsubscribed by an earlier one included), each once. */
function notifyAll(list: Watchers): void {
  const pending: AbortWatch[] = [];
  for (let watch = list.first; watch !== undefined; watch = watch.next) pending[pending.length] = watch;
  list.first = undefined;
  list.last = undefined;
  for (let index = 0; index < pending.length; index += 1) {
    const watch = pending[index] as AbortWatch;
    watch.list = undefined;
    watch.previous = undefined;
    watch.next = undefined;
    watch.onAbort();
  }
}
