// What a worker thread does once, before its first call, each step within its own time: import
// the loader (a TypeScript loader's registration, say), import each tool module, and run its
// `setup()`, whose value is that module's `context.app` in this thread. A step that never
// settles fails; it does not hang the thread. Steps settle with a record, never a rejection.
// docs/contract.md: rule W1 — tool modules.
import {
  AbortControllerPrototypeAbort,
  AbortControllerPrototypeGetSignal,
  ClearTimeout,
  MapPrototypeSet,
  NativeAbortController,
  NativeDOMException,
  NativePromise,
  ObjectFreeze,
  PromisePrototypeThen,
  PromiseResolve,
  SetTimeout,
} from "../contract/primordials.js";
import type { Tool, ToolRegistry } from "../contract/tools.js";
import { describeFailure } from "../contract/untrusted.js";
import { asPromise } from "../executor/run-tool.js";
import {
  failureText,
  importToolModule,
  moduleFileName,
  registryOfModule,
  type ToolModuleExports,
  type ToolModuleSetup,
} from "./tool-modules.js";

/** How a step ended: `ok` with its value, or not, with why (model-visible: file names only). */
export class StepResult {
  // biome-ignore lint/suspicious/noThenProperty: an own undefined `then` keeps a `then` planted on a prototype from adopting this record.
  readonly then = undefined;
  constructor(
    readonly ok: boolean,
    readonly value: unknown,
    readonly failure: string,
  ) {}
}

/**
 * Settles with what `start` gives, or with `late` once `timeoutMs` has passed (then `onLate`
 * runs, to tell the step to stop). A ref'd timer: a step whose promise never settles must not
 * let the thread's event loop run dry before it is reported.
 */
export function settleWithin(
  start: () => Promise<StepResult>,
  timeoutMs: number,
  late: StepResult,
  onLate?: () => void,
): Promise<StepResult> {
  return new NativePromise<StepResult>((resolve) => {
    const timer = SetTimeout(() => {
      onLate?.();
      resolve(late);
    }, timeoutMs);
    const settle = (result: StepResult): void => {
      ClearTimeout(timer);
      resolve(result);
    };
    let pending: Promise<StepResult>;
    try {
      pending = start();
    } catch (error) {
      settle(new StepResult(false, undefined, describeFailure(error).text));
      return;
    }
    void PromisePrototypeThen(pending, settle, (error: unknown) => settle(new StepResult(false, undefined, describeFailure(error).text)));
  });
}

/** Imports the loader module for its side effects, within `timeoutMs`. */
export function importLoader(url: string, timeoutMs: number): Promise<StepResult> {
  const name = moduleFileName(url);
  const late = new StepResult(false, undefined, `the loader ${name} did not finish loading in a worker thread within ${timeoutMs} ms`);
  return PromisePrototypeThen(
    settleWithin(
      () => PromisePrototypeThen(import(url), () => new StepResult(true, undefined, "")) as Promise<StepResult>,
      timeoutMs,
      late,
    ),
    (result) =>
      result.ok || result === late ? result : new StepResult(false, undefined, `the loader ${name} could not be loaded: ${result.failure}`),
  ) as Promise<StepResult>;
}

/**
 * Runs a module's `setup({ threadId, signal })` within `timeoutMs` (its signal aborts with a
 * TimeoutError then); ok with the value it resolved to (its `context.app` in this thread).
 */
export function runModuleSetup(setup: ToolModuleSetup, url: string, threadId: number, timeoutMs: number): Promise<StepResult> {
  const name = moduleFileName(url);
  const controller = new NativeAbortController();
  const late = new StepResult(false, undefined, `setup() of tool module ${name} did not finish within ${timeoutMs} ms in a worker thread`);
  const stop = (): void =>
    AbortControllerPrototypeAbort(controller, new NativeDOMException(`setup() did not finish within ${timeoutMs} ms`, "TimeoutError"));
  const run = (): Promise<StepResult> => {
    const returned = setup(ObjectFreeze({ threadId, signal: AbortControllerPrototypeGetSignal(controller) }));
    const pending = asPromise(returned); // a promise or thenable is awaited; anything else is the app itself
    const done = (app: unknown): StepResult => new StepResult(true, app, "");
    return pending === undefined ? PromiseResolve(done(returned)) : (PromisePrototypeThen(pending, done) as Promise<StepResult>);
  };
  return PromisePrototypeThen(settleWithin(run, timeoutMs, late, stop), (result) =>
    result.ok || result === late
      ? result
      : new StepResult(false, undefined, `setup() of tool module ${name} failed in a worker thread: ${result.failure}`),
  ) as Promise<StepResult>;
}

/**
 * A tool module as this thread has it: its tools by name and their `context.app` (what its
 * `setup` gave), or why it is not usable here. `replaceThread`: the failure may not recur on a
 * new thread (a setup that failed or ran out of time), so a call that meets it retires this one.
 */
export class WorkerModule {
  // biome-ignore lint/suspicious/noThenProperty: as StepResult's, this record resolves a promise.
  readonly then = undefined;
  readonly ok: boolean;
  /** Why calls cannot use it ("" when usable). */
  readonly failure: string;
  private constructor(
    readonly tools: Map<string, Tool>,
    readonly app: unknown,
    failure: string | undefined,
    readonly replaceThread: boolean,
  ) {
    this.ok = failure === undefined;
    this.failure = failure ?? "";
  }
  /** Its tools by name, and what its `setup` gave in this thread (undefined without one). */
  static usable(tools: Map<string, Tool>, app: unknown): WorkerModule {
    return new WorkerModule(tools, app, undefined, false);
  }
  /** A module no call can use in this thread, and why. */
  static unusable(failure: string, replaceThread: boolean): WorkerModule {
    return new WorkerModule(NO_TOOLS, undefined, failure, replaceThread);
  }
}

const NO_TOOLS = new Map<string, Tool>();

/**
 * Loads a tool module in this worker thread: its import and registration within
 * `loadTimeoutMs`, then its `setup` (if any) within `setupTimeoutMs`. Never rejects.
 */
export function loadModuleInWorker(url: string, threadId: number, loadTimeoutMs: number, setupTimeoutMs: number): Promise<WorkerModule> {
  const name = moduleFileName(url);
  const late = new StepResult(false, undefined, `tool module ${name} did not finish loading in a worker thread within ${loadTimeoutMs} ms`);
  const load = (): Promise<StepResult> =>
    PromisePrototypeThen(
      importToolModule(url, name),
      (exports) => new StepResult(true, exports, ""),
      (error: unknown) => new StepResult(false, undefined, failureText(error)),
    ) as Promise<StepResult>;
  return PromisePrototypeThen(settleWithin(load, loadTimeoutMs, late), (loaded): WorkerModule | Promise<WorkerModule> => {
    if (!loaded.ok) return WorkerModule.unusable(loaded.failure, false);
    const { definitions, setup } = loaded.value as ToolModuleExports;
    let tools: Map<string, Tool>;
    try {
      tools = toolsOf(registryOfModule(name, definitions));
    } catch (error) {
      return WorkerModule.unusable(failureText(error), false);
    }
    if (setup === undefined) return WorkerModule.usable(tools, undefined);
    return PromisePrototypeThen(runModuleSetup(setup, url, threadId, setupTimeoutMs), (result) =>
      result.ok ? WorkerModule.usable(tools, result.value) : WorkerModule.unusable(result.failure, true),
    ) as Promise<WorkerModule>;
  }) as Promise<WorkerModule>;
}

function toolsOf(registry: ToolRegistry): Map<string, Tool> {
  const tools = new Map<string, Tool>();
  const names = registry.names();
  for (let index = 0; index < names.length; index += 1) {
    MapPrototypeSet(tools, names[index] as string, registry.get(names[index] as string) as Tool);
  }
  return tools;
}
