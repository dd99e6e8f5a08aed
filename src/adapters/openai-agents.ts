// toolgate/openai-agents: registered toolgate tools as OpenAI Agents SDK (`@openai/agents`
// 0.20) function tools for an `Agent`. The SDK shows the model each tool's JSON Schema
// (from describeTools, `strict: false`: the SDK passes a non-strict JSON Schema through
// unchanged and only JSON-parses the arguments) and calls `execute`, which runs the call
// through toolgate with the SDK's call id and abort signal.
// docs/adapters.md — Use it with the OpenAI Agents SDK.
import { randomUUID } from "node:crypto";
import { type FunctionTool, tool, type UnknownContext } from "@openai/agents";
import { COURSE_TOOL_DUPLICATE_TOOL_NAME } from "../contract/constants.js";
import { type DescribeToolsOptions, describeTools } from "../contract/describe.js";
import { ToolContractError } from "../contract/errors.js";
import { JSONStringify, MapPrototypeGet, MapPrototypeSet, ObjectFreeze } from "../contract/primordials.js";
import { readOptions } from "../contract/validators.js";
import { checkProgressListener, type ProgressListener } from "../executor/progress.js";
import { neverAbortedSignal, type ResolvedSource, resolveSource, type ToolCallSource } from "./source.js";

// Captured at load, like the primordials: a call without an SDK call id gets a fresh one.
const newCallId = randomUUID;

/**
 * The JSON Schema a toolgate tool shows the SDK, typed as the SDK's non-strict object
 * schema (`tool()` takes a plain JSON Schema only with `strict: false`). At run time it is
 * describeTools' schema, whatever its shape; the SDK forwards it to the model unchanged.
 */
export interface ToolgateOpenAiAgentsParameters {
  readonly type: "object";
  readonly properties: Record<string, Record<string, unknown>>;
  readonly required: string[];
  readonly additionalProperties: true;
}

/**
 * A toolgate tool as an OpenAI Agents SDK function tool; `execute` resolves with the
 * result's content. `Context` is the agent's run context type, which toolgate tools ignore.
 */
export type ToolgateOpenAiAgentsTool<Context = UnknownContext> = FunctionTool<Context, ToolgateOpenAiAgentsParameters, string>;

const OPENAI_AGENTS_OPTION_KEYS: readonly string[] = ["withoutSchema", "onProgress"];

/** Options of `toOpenAiAgentsTools`. */
export interface ToOpenAiAgentsToolsOptions extends DescribeToolsOptions {
  /**
   * Receives the calls' progress reports (see `CallOptions.onProgress`). The SDK has no
   * channel for a function tool's partial results, so they go to the app, not the model.
   */
  readonly onProgress?: ProgressListener;
}

/** What the SDK hands `execute` as its third argument (its `ToolCallDetails`). */
type ToolCallDetails = Parameters<ToolgateOpenAiAgentsTool["invoke"]>[2];

/**
 * Every registered tool of `source` (a ToolRegistry, or any ToolExecutor) as an OpenAI
 * Agents SDK function tool, in registration order, for `new Agent({ tools })`:
 *
 * - `parameters`: the JSON Schema from describeTools, `strict: false`; the SDK does not
 *   validate arguments against it, toolgate's validator decides.
 * - `execute(input, runContext, details)` runs the call through `source` with
 *   `details.toolCall.callId` as toolgate's toolCallId (a fresh UUID when the SDK gives
 *   none) and `details.signal` as its signal. It resolves with the result's content for a
 *   success and for a recoverable `isError` result alike: the SDK's convention is that what
 *   `execute` returns is the model-visible output, so the model reads toolgate's
 *   `{"error":{"code":…,"message":…}}` and can correct its call.
 * - A rejection (the abort reason, a ToolContractError, a NonRecoverableToolError) is
 *   thrown, and `errorFunction: null` makes the SDK propagate it: `run()` rejects (with the
 *   abort reason itself, or a `ToolCallError` whose `error` is toolgate's rejection)
 *   instead of showing the model the SDK's generic "An error occurred" text.
 *
 * The SDK renames tools to `[A-Za-z0-9_]` (`get-weather` becomes `get_weather`); two tools
 * that would share a name are a ToolContractError(DUPLICATE_TOOL_NAME) naming both.
 *
 * `Context` (inferred from the `Agent` they are given to) is the agent's run context type:
 * the SDK's `RunContext` is not passed to toolgate tools, so any context fits.
 */
export function toOpenAiAgentsTools<Context = UnknownContext>(
  source: ToolCallSource,
  options: ToOpenAiAgentsToolsOptions = {},
): ToolgateOpenAiAgentsTool<Context>[] {
  const resolved = resolveSource(source, "toOpenAiAgentsTools");
  const read = readOptions(options, "toOpenAiAgentsTools: options", OPENAI_AGENTS_OPTION_KEYS);
  const descriptions = describeTools(resolved.registry, { withoutSchema: read.withoutSchema as DescribeToolsOptions["withoutSchema"] });
  const onProgressOption = read.onProgress;
  const onProgress = onProgressOption === undefined ? undefined : checkProgressListener(onProgressOption);
  const bySdkName = new Map<string, string>();
  const tools: ToolgateOpenAiAgentsTool<Context>[] = [];
  for (const { name, description, parameters } of descriptions) {
    const created = tool<ToolgateOpenAiAgentsParameters, Context, string>({
      name,
      description,
      parameters: parameters as unknown as ToolgateOpenAiAgentsParameters,
      strict: false,
      errorFunction: null,
      execute: (input: unknown, _runContext: unknown, details: ToolCallDetails) => runCall(resolved, name, input, details, onProgress),
    });
    const clash = MapPrototypeGet(bySdkName, created.name);
    if (clash !== undefined) {
      throw new ToolContractError(
        COURSE_TOOL_DUPLICATE_TOOL_NAME,
        `toOpenAiAgentsTools: tools ${JSONStringify(clash)} and ${JSONStringify(name)} are both named ` +
          `${JSONStringify(created.name)} in the OpenAI Agents SDK, which replaces every character outside [A-Za-z0-9_] with "_"`,
      );
    }
    MapPrototypeSet(bySdkName, created.name, name);
    tools[tools.length] = ObjectFreeze(created);
  }
  return tools;
}

async function runCall(
  source: ResolvedSource,
  name: string,
  input: unknown,
  details: ToolCallDetails,
  onProgress: ProgressListener | undefined,
): Promise<string> {
  const sdkCallId = details?.toolCall?.callId;
  const id = typeof sdkCallId === "string" && sdkCallId.length > 0 ? sdkCallId : newCallId();
  const call = { type: "toolCall", id, name, arguments: input };
  const result = await source.run(call, details?.signal ?? neverAbortedSignal(), onProgress === undefined ? {} : { onProgress });
  return result.content;
}
