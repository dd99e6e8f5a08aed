// The calls and batches an executor accepted and that have not settled yet: close() refuses new
// ones, then waits for these (docs/contract.md: rule W5 — faults are results, "close() drains
// accepted calls"; the in-process executor's close() keeps the same promise).
import { NativePromise, PromisePrototypeThen, PromiseResolve } from "../contract/primordials.js";

export class InFlight {
  #count = 0;
  #drained: (() => void) | undefined;

  /** Counts `pending` until it settles, either way; gives it back unchanged. */
  track<T>(pending: Promise<T>): Promise<T> {
    this.#count += 1;
    const settled = (): void => {
      this.#count -= 1;
      if (this.#count === 0) this.#drained?.();
    };
    void PromisePrototypeThen(pending, settled, settled);
    return pending;
  }

  /** Resolves once nothing tracked is pending (at once when nothing is). */
  allSettled(): Promise<void> {
    if (this.#count === 0) return PromiseResolve(undefined);
    return new NativePromise<void>((resolve) => {
      this.#drained = resolve;
    });
  }
}
