// Every ToolExecutor the contract must hold for, as factories over one tool module, for
// `describe.each(EXECUTORS)`: a test written once runs against each implementation.
// A new executor is one more entry here; nothing else in the suites changes.
import { type CourseToolDefinition, type ExecutorOptions, InProcessToolExecutor, type ToolExecutor, ToolRegistry } from "toolgate";
import { WorkerToolExecutor } from "toolgate/worker";

/** Makes an executor over the tool module at `modules[0]` (and the others, if any), with the shared executor options. */
export type ExecutorFactory = (modules: readonly URL[], options?: ExecutorOptions) => Promise<ToolExecutor>;

export async function inProcessExecutor(modules: readonly URL[], options?: ExecutorOptions): Promise<ToolExecutor> {
  const registry = new ToolRegistry();
  for (const url of modules) {
    const { default: definitions } = (await import(url.href)) as { default: CourseToolDefinition[] };
    registry.registerMany(definitions);
  }
  return new InProcessToolExecutor(registry, options);
}

export const workerPoolExecutor: ExecutorFactory = (modules, options) =>
  WorkerToolExecutor.create({ modules, maxThreads: 2, abortGraceMs: 500, ...options });

/** `[label, factory]` rows for `describe.each`. */
export const EXECUTORS: ReadonlyArray<readonly [string, ExecutorFactory]> = [
  ["in-process", inProcessExecutor],
  ["worker pool", workerPoolExecutor],
];
