// One task at a time on a thread, and the next one only once Piscina has posted the previous
// one's reply. A call may wait on a thread behind a running one (dispatch.ts); if the call
// behind ended the thread (process.exit, out of memory) before the reply of the one before it
// had left, that reply would be lost and its call blamed for its neighbour's fault. Piscina
// posts a reply in its own continuation of what it awaits from the task function; the turn is
// handed on after that continuation: in a reaction registered on the same promise after
// Piscina's, or, for a plain value, in a microtask queued behind it. When Piscina
// had to wait for the thread's stdout or stderr to flush before posting, the turn waits for
// both to flush too (their write callbacks run in order), then one turn of the event loop.
// docs/contract.md: rule W5 — faults are results (a late fault of one call is never blamed on another).
import { isPromise, NativePromise, PromisePrototypeThen, QueueMicrotask, SetImmediate } from "../contract/primordials.js";

type Waiter = () => void;

/** The thread's turn: whether a task runs (or its reply is still on its way), and who waits. */
export class TaskTurns {
  #taken = false;
  readonly #waiting: Waiter[] = [];
  #head = 0;

  /** A task holds the turn (it runs, or its reply has not left yet). */
  get taken(): boolean {
    return this.#taken;
  }

  /** Takes the free turn (the caller checked `taken`). */
  take(): void {
    this.#taken = true;
  }

  /** Resolves once the turn is this caller's (it holds it then). */
  wait(): Promise<void> {
    return new NativePromise<void>((resolve) => {
      this.#waiting[this.#waiting.length] = resolve;
    });
  }

  /**
   * The task's reply is `reply` (a value, or the promise Piscina awaits): the turn passes on
   * once Piscina has posted it. Called right before the task function returns `reply`.
   */
  passAfter(reply: unknown): void {
    if (isPromise(reply)) {
      // Piscina starts awaiting what the task function returns as soon as it returns: this
      // microtask runs after that, so the reaction below is registered after Piscina's.
      QueueMicrotask(() => {
        void PromisePrototypeThen(reply as Promise<unknown>, this.#passOnBound, this.#passOnBound);
      });
      return;
    }
    // A plain value: Piscina's continuation is queued the moment it awaits it, right after this
    // first microtask; the second is queued behind that continuation (no allocation per task).
    QueueMicrotask(this.#afterContinuation);
  }

  readonly #passOnBound = (): void => this.#passOn();
  readonly #afterContinuation = (): void => QueueMicrotask(this.#passOnBound);

  #passOn(): void {
    if (process.stdout.writableLength > 0 || process.stderr.writableLength > 0) {
      // Piscina awaits the flush before it posts: so does the turn.
      void PromisePrototypeThen(flushed(), this.#passOnBound);
      return;
    }
    const next = this.#waiting[this.#head];
    if (next === undefined) {
      this.#taken = false;
      return;
    }
    this.#waiting[this.#head] = undefined as unknown as Waiter;
    this.#head += 1;
    if (this.#head === this.#waiting.length) {
      this.#waiting.length = 0;
      this.#head = 0;
    }
    next(); // the turn goes straight to the next task: it stays taken
  }
}

/** Resolves after both standard streams' pending writes have flushed, and one turn of the event loop. */
function flushed(): Promise<void> {
  return new NativePromise<void>((resolve) => {
    process.stdout.write("", () => process.stderr.write("", () => SetImmediate(resolve)));
  });
}
