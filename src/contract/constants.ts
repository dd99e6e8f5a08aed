// The fixed limits, the truncation marker and every error code of the contract, as frozen
// `as const` maps: one import names the family, and each member keeps its literal type.
// docs/contract.md: rule 11 — work budgets, rule 12 — content cap; the codes: docs/guarantees.md.
// The seed's one-constant-per-value names are deprecated aliases in src/compat/course.ts.
import { ObjectFreeze } from "./primordials.js";

/**
 * The fixed limits and markers, and the default budgets (each default configurable per
 * executor, per call or per tool: `OutputBudgets`, `ArgumentBudgets`, `AttachmentBudgets`).
 * docs/guarantees.md gives the reason for each value and the cost of the worst input it admits.
 */
export const Limits = ObjectFreeze({
  /** Maximum length of a result's `content`, in Unicode code points, marker included. */
  MAX_CONTENT_CODE_POINTS: 4096,
  /** Appended (once) to `content` whenever anything was cut. */
  TRUNCATION_MARKER: "\n[Tool output truncated]",
  /** Rendered in place of a value that refers back to one of its own ancestors. */
  CIRCULAR_MARKER: "[Circular]",

  /** Default serializer budget: containers (objects, arrays, Maps, Sets) nested at most this deep. */
  MAX_DEPTH: 32,
  /**
   * Default serializer budget: values rendered (containers and primitives alike). 2048 since
   * 0.2 (was 128): every value takes at least 2 code points of JSON, so 2048 values fill the
   * 4096-code-point content; 30 rows of 4 fields (151 values) or a page of search results fit.
   */
  MAX_NODES: 2048,
  /** Default serializer budget: members examined in objects, arrays, Maps and Sets, omitted ones included (4096 since 0.2; was 256). */
  MAX_COLLECTION_VISITS: 4096,
  /** Default serializer budget: code points kept of any one string or key. */
  MAX_STRING_CODE_POINTS: 4096,
  /** Default serializer budget: magnitude of a BigInt, in bits. */
  MAX_BIGINT_BITS: 4096,

  /** Largest `timeoutMs` anywhere: the longest delay a Node.js timer keeps (2^31 - 1 ms, about 24.8 days). */
  MAX_TIMEOUT_MS: 2_147_483_647,
  /** Default attachment budget: total size, in bytes, of one result's attachments (`AttachmentBudgets.maxAttachmentBytes`). */
  MAX_ATTACHMENT_BYTES: 8 * 1024 * 1024,
  /** Default attachment budget: number of attachments on one result (`AttachmentBudgets.maxAttachments`). */
  MAX_ATTACHMENTS: 16,
  /** Highest `maxAttachmentBytes` an executor or tool may set; `imageContent` and `withAttachments` refuse more at once. */
  ATTACHMENT_BYTES_LIMIT: 64 * 1024 * 1024,
  /** Highest `maxAttachments` an executor or tool may set; `withAttachments` refuses more at once. */
  ATTACHMENTS_LIMIT: 256,

  // The call snapshot's default budgets for `arguments` (configurable per executor, per call and,
  // tightening only, per tool: `ArgumentBudgets`). Generous for real calls (a model writes far less), small enough that
  // the snapshot of the worst admitted call stays in the low milliseconds.

  /** Default argument budget: containers nested at most this deep. */
  MAX_ARGUMENT_DEPTH: 64,
  /** Default argument budget: values in `arguments` (containers and primitives). */
  MAX_ARGUMENT_NODES: 20_000,
  /** Default argument budget: UTF-16 code units of any one string or key (1 Mi). */
  MAX_ARGUMENT_STRING_LENGTH: 1_048_576,
  /** Default argument budget: code units of every string and key, plus one per value (4 Mi). */
  MAX_ARGUMENT_SIZE: 4_194_304,
  /** How many registered tool names a TOOL_NOT_FOUND message lists. */
  MAX_LISTED_TOOL_NAMES: 32,
} as const);

/** Recoverable error codes: they appear in an `isError: true` result's content. */
export const ToolErrorCode = ObjectFreeze({
  NOT_FOUND: "TOOL_NOT_FOUND",
  ARGUMENTS_INVALID: "TOOL_ARGUMENTS_INVALID",
  VALIDATION_FAILED: "TOOL_VALIDATION_FAILED",
  EXECUTION_FAILED: "TOOL_EXECUTION_FAILED",
  OUTPUT_SERIALIZATION_FAILED: "TOOL_OUTPUT_SERIALIZATION_FAILED",
  /** The tool outlived its effective `timeoutMs` (per call, per tool or per executor). */
  EXECUTION_TIMEOUT: "TOOL_EXECUTION_TIMEOUT",
  /** The executor's `beforeExecute` hook refused the call; the message is its reason. */
  CALL_DENIED: "TOOL_CALL_DENIED",
} as const);

/** A recoverable error code: one of the values of `ToolErrorCode`. */
export type ToolErrorCode = (typeof ToolErrorCode)[keyof typeof ToolErrorCode];
/** The same union as `ToolErrorCode` (the name the contract's types have used since the seed). */
export type RecoverableToolErrorCode = ToolErrorCode;

/** `ToolContractError` codes: the caller broke the contract; the promise rejects. */
export const ContractErrorCode = ObjectFreeze({
  INVALID_TOOL_CALL: "INVALID_TOOL_CALL",
  INVALID_TOOL_DEFINITION: "INVALID_TOOL_DEFINITION",
  DUPLICATE_TOOL_NAME: "DUPLICATE_TOOL_NAME",
  /** A registry, signal or option that is not what the API takes. */
  INVALID_ARGUMENT: "INVALID_ARGUMENT",
  /** A tool module could not be loaded or does not export a list of definitions. */
  INVALID_TOOL_MODULE: "INVALID_TOOL_MODULE",
  /** The worker pool could not start its threads (its error is described in the message). */
  WORKER_POOL_START_FAILED: "WORKER_POOL_START_FAILED",
  /** The worker executor was used after `close()`. */
  EXECUTOR_CLOSED: "EXECUTOR_CLOSED",
  /** An entry point's optional peer dependency (bullmq, ioredis for toolgate/queue) is not installed. */
  MISSING_PEER_DEPENDENCY: "MISSING_PEER_DEPENDENCY",
  /**
   * A durable call's key (its run id and call id) already holds a call of another tool or
   * other arguments: nothing ran and the record is unchanged (docs/durable.md).
   */
  DURABLE_CALL_CONFLICT: "DURABLE_CALL_CONFLICT",
} as const);

/** A `ToolContractError` code: one of the values of `ContractErrorCode`. */
export type ContractErrorCode = (typeof ContractErrorCode)[keyof typeof ContractErrorCode];
/** The same union as `ContractErrorCode` (the name `ToolContractError.code` has used since the seed). */
export type ToolContractErrorCode = ContractErrorCode;
