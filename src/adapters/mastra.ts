// toolgate/mastra: registered toolgate tools as a Mastra (`@mastra/core` 1.x) tools record for
// `new Agent({ tools })`. The model is shown each tool's JSON Schema (from describeTools)
// through a Standard JSON Schema that accepts everything (toolgate's validator decides); a
// call runs through toolgate with Mastra's toolCallId and abortSignal.
// docs/adapters.md — Use it with Mastra.
import { randomUUID } from "node:crypto";
import { createTool, type Tool } from "@mastra/core/tools";
import { ContractErrorCode } from "../contract/constants.js";
import type { DescribeToolsOptions } from "../contract/describe.js";
import { isNonRecoverableToolError, type NonRecoverableToolError, ToolContractError } from "../contract/errors.js";
import { isProxy, NativePromise, ObjectDefineProperty, ObjectFreeze, PromisePrototypeThen, ReflectApply } from "../contract/primordials.js";
import type { ToolResultMessage } from "../contract/results.js";
import type { ToolRegistry } from "../contract/tools.js";
import { readOptions } from "../contract/validators.js";
import type { ProgressListener, ToolProgress } from "../executor/progress.js";
import {
  contentOutput,
  resourceLinkText,
  type ToolgateImageBlock,
  type ToolgateMediaBlock,
  type ToolgateResourceLinkBlock,
} from "./attachment-blocks.js";
import { refuseDurableOption } from "./durable-option.js";
import { checkPeerVersions } from "./peer-version.js";
import { describeForFramework, type ResolvedSource, readProgressOption, resolveSource, type ToolCallSource } from "./source.js";

// Captured at load, like the primordials: a call without a Mastra tool call id gets a fresh one.
const newCallId = randomUUID;

/** What a call's progress is written as to Mastra's tool `writer` (a `tool-output` chunk of `agent.stream`). Frozen. */
export interface ToolgateMastraProgress {
  readonly type: "toolgate_progress";
  readonly progress: ToolProgress;
}

/** A success with attachments, as `execute` resolves it: the content and its images (base64), then its audio and files. */
export interface ToolgateMastraContent {
  readonly type: "content";
  readonly text: string;
  readonly images: readonly ToolgateImageBlock[];
  /** Its audio and files (base64), present only when it has some. */
  readonly files?: readonly ToolgateMediaBlock[];
  /** Its resource links, present only when it has some: the model reads each as a text line. */
  readonly links?: readonly ToolgateResourceLinkBlock[];
}

/** What a toolgate tool's Mastra `execute` resolves with: the result's content, or it with images. */
export type ToolgateMastraOutput = string | ToolgateMastraContent;

/** A toolgate tool as a Mastra tool. */
export type ToolgateMastraTool = Tool<unknown, ToolgateMastraOutput>;

/** Options of `toMastraTools`. */
export interface ToMastraToolsOptions extends DescribeToolsOptions {
  /** Also receives the calls' progress reports (besides the tool `writer`). */
  readonly onProgress?: ProgressListener;
  /**
   * Called with a NonRecoverableToolError before it is thrown to Mastra, which shows every
   * tool throw to the model and goes on: abort the run here (`controller.abort(error)` of the
   * `abortSignal` given to `agent.generate`/`agent.stream`) to end it. A throw from it is ignored.
   */
  readonly onNonRecoverableError?: (error: NonRecoverableToolError, toolCallId: string) => void;
}

/**
 * The error a toolgate tool's Mastra `execute` throws for a recoverable `isError` result. Its
 * message is the result's content (`{"error":{"code":…,"message":…}}`), which Mastra shows the
 * model as the tool's `error-text` output; `result` is toolgate's frozen result.
 */
export class ToolgateMastraToolError extends Error {
  override readonly name = "ToolgateMastraToolError";
  constructor(readonly result: ToolResultMessage) {
    super(result.content);
  }
}

/**
 * Every registered tool of `source` (a ToolRegistry, or any ToolExecutor) as a Mastra tool,
 * keyed by name, for `new Agent({ tools })`:
 *
 * - `inputSchema`: a Standard JSON Schema whose JSON Schema is describeTools' and whose
 *   `validate` accepts any value, with `strict: false` (Mastra's provider compatibility layers
 *   leave it as it is): toolgate's validator decides, so the model reads toolgate's argument errors.
 * - `execute(input, context)` runs the call through `source` with `context.agent.toolCallId`
 *   (a fresh UUID outside an agent) and a signal of its own that follows `context.abortSignal`
 *   (the `abortSignal` of generate/stream; one that never aborts when there is none). A success resolves with the
 *   result's content or, with attachments, a ToolgateMastraContent that `toModelOutput` shows
 *   the model as text and media parts; a recoverable error result throws ToolgateMastraToolError
 *   (the model reads toolgate's error JSON); a rejection (the abort reason, a
 *   ToolContractError, a NonRecoverableToolError) is thrown as it is.
 * - Progress reports are written to `context.writer` as ToolgateMastraProgress.
 *
 * A tool named `__proto__` is a ToolContractError(INVALID_TOOL_DEFINITION): Mastra keeps an
 * agent's tools in plain objects by name, where it would vanish.
 *
 * Typed names: keyed by the registry's typed names, as toAiSdkTools (or `toMastraTools<"add">(executor)`).
 */
const MASTRA_OPTION_KEYS: readonly string[] = ["withoutSchema", "onProgress", "onNonRecoverableError"];

export function toMastraTools<N extends string = string>(
  source: ToolRegistry<N> | ToolCallSource,
  options: ToMastraToolsOptions = {},
): Record<N, ToolgateMastraTool> {
  checkPeerVersions("toMastraTools", ["@mastra/core"]);
  const resolved = resolveSource(source, "toMastraTools");
  refuseDurableOption(
    options,
    "toMastraTools",
    "durable calls are not wired to Mastra's run identity yet; pass durable: { runId } through your own executor calls meanwhile",
  );
  const read = readOptions(options, "toMastraTools: options", MASTRA_OPTION_KEYS);
  const descriptions = describeForFramework(resolved.registry, read.withoutSchema);
  const onProgress = readProgressOption(read.onProgress);
  const onFatal = readFunction(read.onNonRecoverableError, "onNonRecoverableError");
  const plan: CallPlan = ObjectFreeze({ source: resolved, onProgress, onFatal });
  const tools = {} as Record<N, ToolgateMastraTool>;
  for (const { name, description, parameters } of descriptions) {
    if (name === "__proto__") {
      // Mastra copies an agent's tools by assignment into plain objects, where this name sets the
      // prototype: the tool would vanish, and a model's call to it end the run without a word.
      throw new ToolContractError(
        ContractErrorCode.INVALID_TOOL_DEFINITION,
        `toMastraTools: a tool named "__proto__" cannot be given to Mastra, which keeps an agent's tools in plain objects by name (the tool would vanish); rename it`,
      );
    }
    const tool = createTool({
      id: name,
      description,
      inputSchema: acceptingSchema(parameters),
      strict: false,
      execute: (input: unknown, context: MastraContext) => runCall(plan, name, input, context),
      toModelOutput: (output: unknown) => modelOutput(output as ToolgateMastraOutput),
    }) as unknown as ToolgateMastraTool;
    // Defined, not assigned: a name Object.prototype has (`constructor`) is an own key like any other.
    ObjectDefineProperty(tools, name, { value: tool, enumerable: true, writable: true, configurable: true });
  }
  return tools;
}

type FatalHook = NonNullable<ToMastraToolsOptions["onNonRecoverableError"]>;

interface CallPlan {
  readonly source: ResolvedSource;
  readonly onProgress: ProgressListener | undefined;
  readonly onFatal: FatalHook | undefined;
}

/** The parts of Mastra's tool context a toolgate call reads. */
interface MastraContext {
  readonly abortSignal?: AbortSignal;
  readonly agent?: { readonly toolCallId?: string };
  readonly writer?: { write(chunk: unknown): unknown };
}

function readFunction(value: unknown, key: string): FatalHook | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "function" && !isProxy(value)) return value as FatalHook;
  throw new ToolContractError(ContractErrorCode.INVALID_ARGUMENT, `toMastraTools: options.${key} must be a function, not a Proxy`);
}

/**
 * A Standard Schema (v1) with Standard JSON Schema: Mastra shows the model `parameters` and
 * runs `validate`, which accepts the model's arguments as they are for toolgate to check.
 */
function acceptingSchema(parameters: unknown) {
  const jsonSchema = () => parameters as Record<string, unknown>;
  return ObjectFreeze({
    "~standard": ObjectFreeze({
      version: 1 as const,
      vendor: "toolgate",
      validate: (value: unknown) => ({ value }),
      jsonSchema: ObjectFreeze({ input: jsonSchema, output: jsonSchema }),
    }),
  });
}

async function runCall(plan: CallPlan, name: string, input: unknown, context: MastraContext | undefined): Promise<ToolgateMastraOutput> {
  const mastraCallId = context?.agent?.toolCallId;
  const id = typeof mastraCallId === "string" && mastraCallId.length > 0 ? mastraCallId : newCallId();
  const writer = context?.writer;
  const { onProgress } = plan;
  const sink: ProgressListener = (progress) => {
    if (writer !== undefined) {
      // Mastra's writer is async; a report it fails to write is dropped, never surfaced.
      try {
        const written: unknown = ReflectApply(writer.write, writer, [ObjectFreeze({ type: "toolgate_progress" as const, progress })]);
        if (written instanceof NativePromise) void PromisePrototypeThen(written, undefined, () => undefined);
      } catch {
        // as above: the other sink still gets the report
      }
    }
    onProgress?.(progress);
  };
  let result: ToolResultMessage;
  try {
    result = await plan.source.run({ id, name, args: input, signal: context?.abortSignal, onProgress: sink });
  } catch (error) {
    if (plan.onFatal !== undefined && isNonRecoverableToolError(error)) {
      try {
        plan.onFatal(error, id);
      } catch {
        // Ignored, as documented: the error is thrown to Mastra either way.
      }
    }
    throw error;
  }
  if (result.isError) throw new ToolgateMastraToolError(result);
  return contentOutput(result, "toMastraTools");
}

/** Text as `text`; text with attachments as `content`: the text part, then a `media` part (base64) per image, then per audio or file. */
function modelOutput(output: ToolgateMastraOutput): unknown {
  if (typeof output === "string") return { type: "text", value: output };
  const parts: unknown[] = [{ type: "text", text: output.text }];
  const { images } = output;
  for (let index = 0; index < images.length; index += 1) {
    const { data, mimeType } = images[index] as ToolgateImageBlock;
    parts[index + 1] = { type: "media", data, mediaType: mimeType };
  }
  const files = output.files ?? [];
  for (let index = 0; index < files.length; index += 1) {
    const { data, mimeType } = files[index] as ToolgateMediaBlock;
    parts[parts.length] = { type: "media", data, mediaType: mimeType };
  }
  // Mastra's tool output has no link part: each link is a line of text naming it.
  const links = output.links ?? [];
  for (let index = 0; index < links.length; index += 1)
    parts[parts.length] = { type: "text", text: resourceLinkText(links[index] as ToolgateResourceLinkBlock) };
  return { type: "content", value: parts };
}
