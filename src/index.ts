// toolgate: the tool boundary of an LLM agent. The root entry point: the contract, the
// in-process executor and the public types. It loads no worker pool (see `toolgate/worker`).
// The seed's names (the course's type and constant names) stay exported, deprecated, from
// src/compat/course.ts.

export * from "./compat/course.js";
export type { ToolApp } from "./contract/app.js";
export type { ArgumentBudgets, AttachmentBudgets, OutputBudgets } from "./contract/budgets.js";
export type { JsonValue, ToolCall } from "./contract/call.js";
export * from "./contract/constants.js";
export { type DescribeToolsOptions, describeTools, type ToolDescription, type ToolSource } from "./contract/describe.js";
export { isNonRecoverableToolError, isToolContractError, NonRecoverableToolError, ToolContractError } from "./contract/errors.js";
export type { JsonSchema } from "./contract/parameters.js";
export type { ToolResultMessage } from "./contract/results.js";
export {
  type AudioMimeType,
  audioContent,
  type FileContentOptions,
  type FileMimeType,
  fileContent,
  type ImageMimeType,
  imageContent,
  type ResourceLinkOptions,
  resourceLink,
  type ToolAttachment,
  type ToolAudioAttachment,
  type ToolFileAttachment,
  type ToolImageAttachment,
  type ToolOutputWithAttachments,
  type ToolResourceLink,
  withAttachments,
} from "./contract/results.js";
export { type SerializationOutcome, serializeToolOutput } from "./contract/serialize.js";
export type { StandardSchemaV1, StandardSchemaV1Output } from "./contract/standard-schema.js";
export {
  defineTool,
  type SchemaToolDefinition,
  type Tool,
  type ToolContext,
  type ToolDefinition,
  type ToolDurability,
  type ToolLike,
  type ToolProgressReport,
  ToolRegistry,
  type ValidationDecision,
} from "./contract/tools.js";
export type { DurableCallEnd } from "./executor/durable-call.js";
export type {
  ApprovalContext,
  ApprovalDecision,
  CallEndEvent,
  CallEndOutcome,
  CallStartEvent,
  HookName,
  ThreadKilledEvent,
  ToolExecutorHooks,
} from "./executor/hooks.js";
export { executeToolCall, executeToolCalls, InProcessToolExecutor, type InProcessToolExecutorOptions } from "./executor/in-process.js";
export type { ProgressListener, ToolProgress } from "./executor/progress.js";
export type {
  BatchOptions,
  CallOptions,
  DurableCallOptions,
  DurableExecutorOptions,
  ExecutorOptions,
  ToolExecutor,
} from "./executor/tool-executor.js";
export type { TracingOptions } from "./executor/tracing-options.js";
export type { WorkerToolExecutor, WorkerToolExecutorOptions } from "./worker/executor.js";
// Types only: the runtime lives in `toolgate/worker`, so `import "toolgate"` never loads piscina.
export type { ToolModuleSpecifier } from "./worker/tool-modules.js";
