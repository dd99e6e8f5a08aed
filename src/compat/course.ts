// The seed's names: the course the contract came from called every type `Course*` and every
// limit and code a `COURSE_TOOL_*` constant. They stay exported (from the root entry point, as
// before), each the same type or the same value as its plain name, and are deprecated in favour
// of it. Nothing inside toolgate uses them: they are defined here and only here.
// docs/contract.md, "Compatibility names", lists the mapping.
import type { ToolCall } from "../contract/call.js";
import { ContractErrorCode, Limits, ToolErrorCode } from "../contract/constants.js";
import type { ToolResultMessage } from "../contract/results.js";
import type { Tool, ToolDefinition } from "../contract/tools.js";

/** @deprecated use `ToolCall` */
export type CourseToolCall = ToolCall;
/** @deprecated use `ToolResultMessage` */
export type CourseToolResultMessage = ToolResultMessage;
/** @deprecated use `ToolDefinition` */
export type CourseToolDefinition<A = unknown, O = unknown> = ToolDefinition<A, O>;
/** @deprecated use `Tool` */
export type CourseTool<A = unknown, O = unknown> = Tool<A, O>;

/** @deprecated use `Limits.MAX_CONTENT_CODE_POINTS` */
export const COURSE_TOOL_MAX_CONTENT_CODE_POINTS = Limits.MAX_CONTENT_CODE_POINTS;
/** @deprecated use `Limits.TRUNCATION_MARKER` */
export const COURSE_TOOL_TRUNCATION_MARKER = Limits.TRUNCATION_MARKER;
/** @deprecated use `Limits.CIRCULAR_MARKER` */
export const COURSE_TOOL_CIRCULAR_MARKER = Limits.CIRCULAR_MARKER;
/** @deprecated use `Limits.MAX_DEPTH` */
export const COURSE_TOOL_MAX_DEPTH = Limits.MAX_DEPTH;
/** @deprecated use `Limits.MAX_NODES` */
export const COURSE_TOOL_MAX_NODES = Limits.MAX_NODES;
/** @deprecated use `Limits.MAX_COLLECTION_VISITS` */
export const COURSE_TOOL_MAX_COLLECTION_VISITS = Limits.MAX_COLLECTION_VISITS;
/** @deprecated use `Limits.MAX_STRING_CODE_POINTS` */
export const COURSE_TOOL_MAX_STRING_CODE_POINTS = Limits.MAX_STRING_CODE_POINTS;
/** @deprecated use `Limits.MAX_BIGINT_BITS` */
export const COURSE_TOOL_MAX_BIGINT_BITS = Limits.MAX_BIGINT_BITS;
/** @deprecated use `Limits.MAX_TIMEOUT_MS` */
export const COURSE_TOOL_MAX_TIMEOUT_MS = Limits.MAX_TIMEOUT_MS;
/** @deprecated use `Limits.MAX_ATTACHMENT_BYTES` */
export const COURSE_TOOL_MAX_ATTACHMENT_BYTES = Limits.MAX_ATTACHMENT_BYTES;
/** @deprecated use `Limits.MAX_ATTACHMENTS` */
export const COURSE_TOOL_MAX_ATTACHMENTS = Limits.MAX_ATTACHMENTS;
/** @deprecated use `Limits.ATTACHMENT_BYTES_LIMIT` */
export const COURSE_TOOL_ATTACHMENT_BYTES_LIMIT = Limits.ATTACHMENT_BYTES_LIMIT;
/** @deprecated use `Limits.ATTACHMENTS_LIMIT` */
export const COURSE_TOOL_ATTACHMENTS_LIMIT = Limits.ATTACHMENTS_LIMIT;
/** @deprecated use `Limits.MAX_ARGUMENT_DEPTH` */
export const COURSE_TOOL_MAX_ARGUMENT_DEPTH = Limits.MAX_ARGUMENT_DEPTH;
/** @deprecated use `Limits.MAX_ARGUMENT_NODES` */
export const COURSE_TOOL_MAX_ARGUMENT_NODES = Limits.MAX_ARGUMENT_NODES;
/** @deprecated use `Limits.MAX_ARGUMENT_STRING_LENGTH` */
export const COURSE_TOOL_MAX_ARGUMENT_STRING_LENGTH = Limits.MAX_ARGUMENT_STRING_LENGTH;
/** @deprecated use `Limits.MAX_ARGUMENT_SIZE` */
export const COURSE_TOOL_MAX_ARGUMENT_SIZE = Limits.MAX_ARGUMENT_SIZE;
/** @deprecated use `Limits.MAX_LISTED_TOOL_NAMES` */
export const COURSE_TOOL_MAX_LISTED_TOOL_NAMES = Limits.MAX_LISTED_TOOL_NAMES;

/** @deprecated use `ToolErrorCode.NOT_FOUND` */
export const COURSE_TOOL_NOT_FOUND = ToolErrorCode.NOT_FOUND;
/** @deprecated use `ToolErrorCode.ARGUMENTS_INVALID` */
export const COURSE_TOOL_ARGUMENTS_INVALID = ToolErrorCode.ARGUMENTS_INVALID;
/** @deprecated use `ToolErrorCode.VALIDATION_FAILED` */
export const COURSE_TOOL_VALIDATION_FAILED = ToolErrorCode.VALIDATION_FAILED;
/** @deprecated use `ToolErrorCode.EXECUTION_FAILED` */
export const COURSE_TOOL_EXECUTION_FAILED = ToolErrorCode.EXECUTION_FAILED;
/** @deprecated use `ToolErrorCode.OUTPUT_SERIALIZATION_FAILED` */
export const COURSE_TOOL_OUTPUT_SERIALIZATION_FAILED = ToolErrorCode.OUTPUT_SERIALIZATION_FAILED;
/** @deprecated use `ToolErrorCode.EXECUTION_TIMEOUT` */
export const COURSE_TOOL_EXECUTION_TIMEOUT = ToolErrorCode.EXECUTION_TIMEOUT;
/** @deprecated use `ToolErrorCode.CALL_DENIED` */
export const COURSE_TOOL_CALL_DENIED = ToolErrorCode.CALL_DENIED;

/** @deprecated use `ContractErrorCode.INVALID_TOOL_CALL` */
export const COURSE_TOOL_INVALID_TOOL_CALL = ContractErrorCode.INVALID_TOOL_CALL;
/** @deprecated use `ContractErrorCode.INVALID_TOOL_DEFINITION` */
export const COURSE_TOOL_INVALID_TOOL_DEFINITION = ContractErrorCode.INVALID_TOOL_DEFINITION;
/** @deprecated use `ContractErrorCode.DUPLICATE_TOOL_NAME` */
export const COURSE_TOOL_DUPLICATE_TOOL_NAME = ContractErrorCode.DUPLICATE_TOOL_NAME;
/** @deprecated use `ContractErrorCode.INVALID_ARGUMENT` */
export const COURSE_TOOL_INVALID_ARGUMENT = ContractErrorCode.INVALID_ARGUMENT;
/** @deprecated use `ContractErrorCode.INVALID_TOOL_MODULE` */
export const COURSE_TOOL_INVALID_TOOL_MODULE = ContractErrorCode.INVALID_TOOL_MODULE;
/** @deprecated use `ContractErrorCode.WORKER_POOL_START_FAILED` */
export const COURSE_TOOL_WORKER_POOL_START_FAILED = ContractErrorCode.WORKER_POOL_START_FAILED;
/** @deprecated use `ContractErrorCode.EXECUTOR_CLOSED` */
export const COURSE_TOOL_EXECUTOR_CLOSED = ContractErrorCode.EXECUTOR_CLOSED;
/** @deprecated use `ContractErrorCode.MISSING_PEER_DEPENDENCY` */
export const COURSE_TOOL_MISSING_PEER_DEPENDENCY = ContractErrorCode.MISSING_PEER_DEPENDENCY;
