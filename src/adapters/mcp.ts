// toolgate/mcp: registered toolgate tools served over the Model Context Protocol, as a
// low-level MCP SDK `Server` (McpServer wants zod shapes; toolgate already has JSON Schemas
// from describeTools and its own validators). `tools/list` shows the schemas, `tools/call`
// runs the call through toolgate with the request's signal and progress token.
// docs/adapters.md — MCP.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { ContractErrorCode, ToolErrorCode } from "../contract/constants.js";
import type { DescribeToolsOptions } from "../contract/describe.js";
import { isToolContractError, ToolContractError } from "../contract/errors.js";
import { describeValue } from "../contract/grammar.js";
import {
  EncodeURIComponent,
  isPromise,
  ObjectFreeze,
  ObjectGetOwnPropertyDescriptor,
  PromisePrototypeThen,
  PromiseReject,
  PromiseResolve,
  SetPrototypeAdd,
  SetPrototypeHas,
} from "../contract/primordials.js";
import { errorContent, type ToolResultMessage } from "../contract/results.js";
import { describeFailure } from "../contract/untrusted.js";
import { readOptions } from "../contract/validators.js";
import {
  carriedBlocks,
  type ToolgateAttachmentBlock,
  type ToolgateFileBlock,
  type ToolgateResourceLinkBlock,
  textBlock,
} from "./attachment-blocks.js";
import { refuseDurableOption } from "./durable-option.js";
import { type McpRequestExtra, mcpProgressListener } from "./mcp-progress.js";
import { checkPeerVersions } from "./peer-version.js";
import { describeForFramework, type FrameworkToolDescription, type ResolvedSource, resolveSource, type ToolCallSource } from "./source.js";
import { STRUCTURED_OUTPUT_CUT, structuredContentOf, structuredOutputSchema } from "./structured-output.js";

/** Options of `createMcpServer`: the server's identity, and how tools without a JSON Schema are shown (see `describeTools`). */
export interface CreateMcpServerOptions extends DescribeToolsOptions {
  /** The server's name in the MCP handshake (`serverInfo.name`). Non-empty. */
  readonly name: string;
  /** The server's version in the MCP handshake (`serverInfo.version`). Non-empty. */
  readonly version: string;
}

/**
 * An MCP server (the SDK's low-level `Server`, with the `tools` capability) serving every
 * registered tool of `source` (a ToolRegistry, or any ToolExecutor). Connect it to any
 * transport with `server.connect(transport)`.
 *
 * - `tools/list`: each tool's name, description and `inputSchema` (its JSON Schema from
 *   describeTools, a copy of the server's own, read once here: a tool registered later is not listed).
 * - `tools/call`: runs the call through `source` with a fresh toolCallId
 *   (`mcp-<n>-<JSON-RPC request id>`, `n` counting every call in the process) and the
 *   request's signal, so `notifications/cancelled` or a closed connection aborts it. A result
 *   (success or recoverable error) becomes `{ content: [{ type: "text", text: content }, ...images], isError }`,
 *   each attachment an MCP image block `{ type: "image", data: <base64>, mimeType }` (audio an
 *   `audio` block, a file an embedded `resource`), then each resource link a `resource_link`
 *   `{ type: "resource_link", uri, name, mimeType?, description? }`.
 *   Arguments over the argument budgets are a TOOL_ARGUMENTS_INVALID result (`isError: true`),
 *   which the model reads (MCP's SEP-1303: input validation errors are tool execution errors);
 *   any other malformed call (INVALID_TOOL_CALL: an empty tool name) is a JSON-RPC InvalidParams error; any other
 *   rejection (a NonRecoverableToolError, a closed executor) a JSON-RPC InternalError with
 *   its message read safely.
 * - Progress: with `_meta.progressToken` in the request, the tool's reports become
 *   `notifications/progress` (see `mcpProgressListener`).
 *
 * Throws ToolContractError: INVALID_ARGUMENT for a bad source or options,
 * INVALID_TOOL_DEFINITION for a tool without a JSON Schema (unless `withoutSchema` is
 * `"any-object"`) or whose schema is not `type: "object"`, as MCP requires.
 */
export function createMcpServer(source: ToolCallSource, options: CreateMcpServerOptions): Server {
  checkPeerVersions("createMcpServer", ["@modelcontextprotocol/sdk"]);
  const resolved = resolveSource(source, "createMcpServer");
  refuseDurableOption(options, "createMcpServer", MCP_NOT_DURABLE);
  const read = readOptions(options, "createMcpServer: options", MCP_OPTION_KEYS);
  const name = readIdentity(read.name, "name");
  const version = readIdentity(read.version, "version");
  const tools = listedTools(resolved, read.withoutSchema);
  const structured = structuredTools(tools);
  const server = new Server({ name, version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => callTool(resolved, structured, request.params, extra));
  return server;
}

const MCP_OPTION_KEYS: readonly string[] = ["name", "version", "withoutSchema"];

// docs/durable.md — Durable calls with your framework.
const MCP_NOT_DURABLE =
  "an MCP tools/call request names no run, and a client that re-issues a call sends a new request, so no key would match the call it repeats; make the calls durable on the client's side, in its agent's adapter";

function readIdentity(value: unknown, key: "name" | "version"): string {
  if (typeof value !== "string" || value.length === 0) {
    const got = value === "" ? "an empty string" : describeValue(value);
    throw new ToolContractError(
      ContractErrorCode.INVALID_ARGUMENT,
      `createMcpServer: options.${key} must be a non-empty string, an own data property (got ${got})`,
    );
  }
  return value;
}

function listedTools(source: ResolvedSource, withoutSchema: unknown): Tool[] {
  const descriptions = describeForFramework(source.registry, withoutSchema);
  const tools: Tool[] = [];
  for (let index = 0; index < descriptions.length; index += 1) {
    const { name, description, parameters } = descriptions[index] as FrameworkToolDescription;
    const type = ObjectGetOwnPropertyDescriptor(parameters, "type")?.value;
    if (type !== "object") {
      throw new ToolContractError(
        ContractErrorCode.INVALID_TOOL_DEFINITION,
        `tool "${name}": MCP requires an object JSON Schema (type: "object") for a tool's arguments`,
      );
    }
    // MCP requires an object schema; a tool whose output is not an object is listed without one (docs/adapters.md — MCP).
    const outputSchema = structuredOutputSchema(source.registry, name) as Tool["outputSchema"];
    tools[tools.length] = ObjectFreeze(
      outputSchema === undefined
        ? { name, description, inputSchema: parameters as Tool["inputSchema"] }
        : { name, description, inputSchema: parameters as Tool["inputSchema"], outputSchema },
    );
  }
  return tools;
}

/** The names of the listed tools that publish an `outputSchema`: their successes carry `structuredContent`. */
function structuredTools(tools: readonly Tool[]): Set<string> {
  const names = new Set<string>();
  for (let index = 0; index < tools.length; index += 1) {
    const tool = tools[index] as Tool;
    if (tool.outputSchema !== undefined) SetPrototypeAdd(names, tool.name);
  }
  return names;
}

/** Every tools/call in this process gets its own number, so toolCallIds stay unique across servers and reconnections. */
let callCount = 0;

function callTool(
  source: ResolvedSource,
  structured: Set<string>,
  params: CallToolRequest["params"],
  extra: McpRequestExtra,
): Promise<CallToolResult> {
  callCount += 1;
  const id = "mcp-" + callCount + "-" + String(extra.requestId);
  const progressToken = params._meta?.progressToken;
  // No listener without a token: the executor then has nothing to report to.
  const onProgress = progressToken === undefined ? undefined : mcpProgressListener(progressToken, extra);
  // A `then` rather than an async function: one promise and one turn fewer per call.
  let completed: ToolResultMessage | Promise<ToolResultMessage>;
  try {
    // The SDK makes each request a signal of its own (its AbortController, aborted by notifications/cancelled).
    completed = source.run({
      id,
      name: params.name,
      args: params.arguments ?? {},
      signal: extra.signal,
      signalIsTheCalls: true,
      onProgress,
    });
  } catch (error) {
    return PromiseReject(mcpError(error)); // a custom executor's `executeToolCall` threw
  }
  const answer = SetPrototypeHas(structured, params.name) ? structuredMcpResult : mcpResult;
  if (isPromise(completed)) return PromisePrototypeThen(completed, answer, throwMcpError) as Promise<CallToolResult>;
  // Completed synchronously: no turn to wait for (what the answer throws is rejected as it is, as from a `then`).
  try {
    return PromiseResolve(answer(completed as ToolResultMessage));
  } catch (error) {
    return PromiseReject(error);
  }
}

function mcpResult(result: ToolResultMessage): CallToolResult {
  const { attachments, links } = carriedBlocks(result, "createMcpServer");
  const content: CallToolResult["content"] = [textBlock(result.content)];
  for (let index = 0; index < attachments.length; index += 1)
    content[index + 1] = mcpContentOf(attachments[index] as ToolgateAttachmentBlock, index + 1);
  for (let index = 0; index < links.length; index += 1)
    content[content.length] = mcpResourceLink(links[index] as ToolgateResourceLinkBlock);
  return { content, isError: result.isError };
}

/** A resource link as MCP's `resource_link` content: its URI and name, its media type and description when it has them. */
function mcpResourceLink(block: ToolgateResourceLinkBlock): CallToolResult["content"][number] {
  const { uri, name, mimeType, description } = block;
  return ObjectFreeze({
    type: "resource_link" as const,
    uri,
    name,
    ...(mimeType === undefined ? {} : { mimeType }),
    ...(description === undefined ? {} : { description }),
  });
}

/**
 * The result of a tool with an `outputSchema`: a success also carries its output as
 * `structuredContent` (its content parsed back: the output the tool's schema accepted,
 * serialized). A success whose content was cut to the content budget cannot be parsed back,
 * and is sent as a TOOL_OUTPUT_SERIALIZATION_FAILED error result instead (the client's SDK
 * would refuse a success without `structuredContent`).
 */
function structuredMcpResult(result: ToolResultMessage): CallToolResult {
  const answer = mcpResult(result);
  if (result.isError) return answer;
  const parsed = structuredContentOf(result.content);
  if (parsed === undefined) {
    const text = errorContent(ToolErrorCode.OUTPUT_SERIALIZATION_FAILED, { text: STRUCTURED_OUTPUT_CUT, cut: false });
    return { content: [{ type: "text", text }], isError: true };
  }
  return { ...answer, structuredContent: parsed };
}

/** An attachment as MCP content: image and audio as they are; a file as an embedded resource. */
function mcpContentOf(block: ToolgateAttachmentBlock, index: number): CallToolResult["content"][number] {
  if (block.type !== "file") return block;
  return ObjectFreeze({ type: "resource" as const, resource: ObjectFreeze(embeddedResource(block, index)) });
}

/**
 * MCP's embedded resource for a file: its `uri` (or, without one, `toolgate:attachment/<n>`,
 * `n` its place among the result's content, and its name), its media type, and its text (the
 * text types) or its bytes in base64 (`blob`, a PDF).
 */
function embeddedResource(block: ToolgateFileBlock, index: number) {
  const uri = block.uri ?? "toolgate:attachment/" + index + (block.name === undefined ? "" : "/" + EncodeURIComponent(block.name));
  return block.text === undefined
    ? { uri, mimeType: block.mimeType, blob: block.data }
    : { uri, mimeType: block.mimeType, text: block.text };
}

function throwMcpError(error: unknown): never {
  throw mcpError(error);
}

/**
 * A rejection as the SDK should send it. Cancelled: the SDK sends nothing for an aborted
 * request, so this error goes nowhere. Otherwise the SDK would read `code`, `message` and
 * `data` off the error itself (getters of a tool's error included): hand it a fresh McpError
 * with the message read safely.
 */
function mcpError(error: unknown): McpError {
  const code =
    isToolContractError(error) && error.code === ContractErrorCode.INVALID_TOOL_CALL ? ErrorCode.InvalidParams : ErrorCode.InternalError;
  return new McpError(code, describeFailure(error).text);
}
