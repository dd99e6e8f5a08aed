// A call's progress reports as a pull stream, for frameworks whose tools yield partial
// results (the AI SDK's preliminary results). One slot: a report not yet taken is replaced
// by the next, so a slow consumer holds at most one report, whatever the tool sends.
// docs/adapters.md — Use it with the Vercel AI SDK (progress as preliminary results).
import { NativePromise, PromisePrototypeThen, PromiseResolve } from "../contract/primordials.js";
import type { ToolResultMessage } from "../contract/results.js";
import type { ToolProgress } from "../executor/progress.js";

/** What the stream gives next: a progress report, or the call's end (its result, or its rejection). */
export type ProgressStreamStep =
  | { readonly kind: "progress"; readonly progress: ToolProgress }
  | { readonly kind: "result"; readonly result: ToolResultMessage }
  | { readonly kind: "rejected"; readonly reason: unknown };

/**
 * Starts a call with `start(onProgress)` and gives its reports and its end in order:
 * `next()` resolves with the latest report not yet taken, or, once the call settled, its end.
 */
export function progressStream(start: (onProgress: (progress: ToolProgress) => void) => ToolResultMessage | Promise<ToolResultMessage>) {
  let latest: ToolProgress | undefined;
  let end: ProgressStreamStep | undefined;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    const waiting = wake;
    wake = undefined;
    waiting?.();
  };
  const settled = start((progress) => {
    latest = progress;
    notify();
  });
  void PromisePrototypeThen(
    PromiseResolve(settled), // a call that completed synchronously gives its result itself
    (result) => {
      end = { kind: "result", result };
      notify();
    },
    (reason: unknown) => {
      end = { kind: "rejected", reason };
      notify();
    },
  );
  return {
    async next(): Promise<ProgressStreamStep> {
      for (;;) {
        // The end wins over a report still waiting: nothing is shown after the call settled.
        if (end !== undefined) return end;
        if (latest !== undefined) {
          const progress = latest;
          latest = undefined;
          return { kind: "progress", progress };
        }
        await new NativePromise<void>((resolve) => (wake = resolve));
      }
    },
  };
}
