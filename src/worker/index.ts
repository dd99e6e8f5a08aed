// toolgate/worker: the worker-pool executor (loads piscina and comlink).
export { WorkerToolExecutor } from "./executor.js";
export type { WorkerToolExecutorOptions } from "./options.js";
export type { ToolModuleSpecifier } from "./tool-modules.js";
