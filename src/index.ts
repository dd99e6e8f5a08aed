// toolgate: the tool boundary of an LLM agent. The root entry point: the contract, the
// in-process executor and the public types. It loads no worker pool (see `toolgate/worker`).

export type { CourseToolCall, JsonValue } from "./contract/call.js";
export * from "./contract/constants.js";
export {
  type CourseTool,
  type CourseToolDefinition,
  defineTool,
  type SchemaToolDefinition,
  type ToolContext,
  type ToolProgressReport,
  type ValidationDecision,
} from "./contract/definition.js";
export { type DescribeToolsOptions, describeTools, type ToolDescription, type ToolSource } from "./contract/describe.js";
export { isNonRecoverableToolError, isToolContractError, NonRecoverableToolError, ToolContractError } from "./contract/errors.js";
export type { JsonSchema } from "./contract/parameters.js";
export { type ToolLike, ToolRegistry } from "./contract/registry.js";
export type { CourseToolResultMessage } from "./contract/results.js";
export { type SerializationOutcome, serializeToolOutput } from "./contract/serialize.js";
export type { StandardSchemaV1, StandardSchemaV1Output } from "./contract/standard-schema.js";
export { executeToolCall, executeToolCalls, InProcessToolExecutor } from "./executor/in-process.js";
export type { ProgressListener, ToolProgress } from "./executor/progress.js";
export type { BatchOptions, CallOptions, ToolExecutor } from "./executor/tool-executor.js";
export type { WorkerToolExecutor, WorkerToolExecutorOptions } from "./worker/executor.js";
// Types only: the runtime lives in `toolgate/worker`, so `import "toolgate"` never loads piscina.
export type { ToolModuleSpecifier } from "./worker/tool-modules.js";
