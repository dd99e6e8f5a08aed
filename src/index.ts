// toolgate: the tool boundary of an LLM agent. Public API.
export * from "./constants.js";
export { type CourseToolCall, type JsonValue } from "./call.js";
export {
  type CourseTool,
  type CourseToolDefinition,
  type ToolContext,
  type ValidationDecision,
  defineTool,
} from "./definition.js";
export { NonRecoverableToolError, ToolContractError, isNonRecoverableToolError, isToolContractError } from "./errors.js";
export { executeToolCall } from "./execute.js";
export { ToolRegistry, type ToolLike } from "./registry.js";
export { type CourseToolResultMessage } from "./results.js";
export { type SerializationOutcome, serializeToolOutput } from "./serialize.js";
export { type BatchOptions, executeToolCalls } from "./batch.js";
export { type ToolModuleSpecifier } from "./tool-modules.js";
export { WorkerToolExecutor, type WorkerToolExecutorOptions } from "./worker-executor.js";
