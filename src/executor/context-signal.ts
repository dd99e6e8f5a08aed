// A tool context whose `signal` is made when something first reads it: the mechanism the
// in-process adapter call (own-signal.ts, OwnSignal) and the worker task (worker/task-context.ts,
// RunningTask) share. A genuine AbortController costs microseconds to make on Node 20 and most
// tools never read their signal. The context is stamped, in a private field no tool can read or
// forge, with what makes its signal, so one `signal` getter serves every context: an accessor
// literal (`{ get signal() {…} }`) made a new getter, and with it a new hidden class, per call
// (2.5–3 µs on Node 20; 0.3 µs this way).
// docs/contract.md: rule 7 — execution context.
import { ObjectDefineProperty, ObjectFreeze } from "../contract/primordials.js";

/** What makes a context's signal: read once per read of `context.signal`. */
export interface SignalSource {
  readonly signal: AbortSignal;
}

/** Hands back the object it is given, so a subclass's private field is stamped onto a plain object. */
class ReturnsGiven {
  constructor(given: object) {
    // biome-ignore lint/correctness/noConstructorReturn: the point: `new SignalStamp(context, source)` stamps `context` itself.
    return given;
  }
}

class SignalStamp extends ReturnsGiven {
  readonly #source: SignalSource;
  constructor(context: object, source: SignalSource) {
    super(context);
    this.#source = source;
  }
  static sourceOf(context: object): SignalSource {
    return (context as SignalStamp).#source;
  }
}

/** The context's own `signal` accessor (a null-prototype descriptor: a planted `value` or `set` is not read). */
const SIGNAL_PROPERTY: PropertyDescriptor = ObjectFreeze({
  __proto__: null,
  get(this: object): AbortSignal {
    return SignalStamp.sourceOf(this).signal;
  },
  enumerable: true,
  configurable: false,
} as PropertyDescriptor);

/**
 * A fresh context object whose first own property is the `signal` accessor (the same own
 * properties, in the same order, as a context with a data `signal`: the caller adds the rest
 * after it), stamped with `source`. The caller freezes it.
 */
export function contextWithSignalFrom(source: SignalSource): Record<string, unknown> {
  const context: Record<string, unknown> = {};
  ObjectDefineProperty(context, "signal", SIGNAL_PROPERTY);
  new SignalStamp(context, source);
  return context;
}

/** What makes the signal of a context contextWithSignalFrom made (a TypeError for any other object). */
export function signalSourceOf(context: object): SignalSource {
  return SignalStamp.sourceOf(context);
}
