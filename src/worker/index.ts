// toolgate/worker: the worker-pool executor (loads piscina and comlink).
export { WorkerToolExecutor, type WorkerToolExecutorOptions } from "./executor.js";
export type { ToolModuleSpecifier } from "./tool-modules.js";
