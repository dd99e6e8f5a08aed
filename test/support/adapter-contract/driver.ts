// The one face every framework shows the adapter contract suite (test/adapters/adapter-contract.test.ts):
// a driver runs a scripted model's tool step through the framework's own loop, over a
// toolgate source, and reports what the model read back. A new adapter is one more driver.
import type { ToolExecutor, ToolProgress, ToolRegistry } from "toolgate";

/** A source as every adapter takes it. */
export type Source = ToolRegistry | Pick<ToolExecutor, "registry" | "executeToolCall">;

/** One call the scripted model makes: its id, the tool's name, and its arguments as the model sent them (any JSON value). */
export interface ModelCall {
  readonly id: string;
  readonly name: string;
  readonly args: unknown;
}

/** What the model read back for one call, as text; `code` is toolgate's error code when the text is toolgate's error JSON. */
export interface ModelRead {
  readonly id: string;
  readonly text: string;
  readonly code: string | undefined;
}

/**
 * One part of what the model read for a call, in the framework's order: a text part as
 * `{ type: "text", text }`, MCP's `resource_link` with its fields, any other kind by its type alone.
 */
export type ReadPart = { readonly type: string; readonly [field: string]: unknown };

/** A step's outcome: what the model's next request read for each call, and whether the run then reached the model's final answer. */
export interface StepReport {
  readonly read: readonly ModelRead[];
  readonly finished: boolean;
  /** What the model read for each call, part by part, by call id (a text-only result: one text part). */
  readonly parts: ReadonlyMap<string, readonly ReadPart[]>;
}

/** The parts of a transcript's content list whose text parts are `{ type: "text", text }` (every framework but OpenAI Agents). */
export function textParts(content: readonly { readonly type: string; readonly text?: unknown }[]): ReadPart[] {
  return content.map((part) => (part.type === "text" ? { type: "text", text: part.text } : { type: part.type }));
}

/** The options a step's tools are made with. */
export interface StepOptions {
  /** The adapter's `onProgress` option (only for drivers with `progressOption`). */
  readonly onProgress?: (progress: ToolProgress) => unknown;
  /** The run's signal (none: the framework passes none, or its own). */
  readonly signal?: AbortSignal;
}

/** A person's decision for one call that waits for approval. */
export type Decide = (toolCallId: string) => boolean;

/** The approval flow of a framework that has one, driven to its end. */
export interface ApprovalDriver {
  /**
   * Runs a step making `calls`, each asking `needsApproval` (the adapter's option); answers every
   * pause for approval with `decide` for the call it names (all pending calls at once, where the
   * framework shows several), resuming until the step is over; reports what the model read.
   */
  readonly step: (
    source: Source,
    calls: readonly ModelCall[],
    needsApproval: (request: { readonly toolCallId: string }) => boolean | Promise<boolean>,
    decide: Decide,
  ) => Promise<Omit<StepReport, "parts"> & { readonly pauses: number }>;
}

/** How a run ended that the driver expected to end early (a fatal error, an abort). */
export interface RunEnd {
  /** What the app is left holding, by the framework's documented route: the rejection, or the error the route hands over. */
  readonly error: unknown;
  /** How many requests the model got (1: the run ended at the step). */
  readonly modelRequests: number;
}

export interface AdapterDriver {
  readonly name: string;
  /** Why this row cannot run in this process (printed with its tests' names), or undefined. */
  readonly unavailable?: string | undefined;
  /** The adapter takes an `onProgress` option; without one, passing it is refused (INVALID_ARGUMENT). */
  readonly progressOption: boolean;
  /**
   * For model arguments the framework answers itself, or rewrites, before any toolgate code runs
   * (arguments that are not an object): why; undefined when toolgate answers them.
   */
  readonly answersItself?: ((args: unknown) => string | undefined) | undefined;
  /** Tool names the framework cannot hold, which the adapter therefore refuses up front (never drops): why, by name. */
  readonly refusedNames?: Readonly<Record<string, string>> | undefined;
  /**
   * Why what a fatal error or an abort ends the run with reaches the app as a copy carrying its
   * message, not the genuine object (it crossed a wire); undefined: the genuine object.
   */
  readonly overAWire?: string | undefined;
  /**
   * The framework shows the model a resource link as a part of its own (MCP's `resource_link`);
   * false: it has none, and the model reads the documented text line naming the link instead
   * (docs/adapters.md — What each framework carries).
   */
  readonly linkPart: boolean;
  /** Runs one model step making `calls`, then a final answer, through the framework's own loop. */
  readonly step: (source: Source, calls: readonly ModelCall[], options?: StepOptions) => Promise<StepReport>;
  /** A step making `call`, whose tool throws a NonRecoverableToolError: the run ends by the documented route. */
  readonly fatal: (source: Source, call: ModelCall) => Promise<RunEnd>;
  /** A step making `call` with `signal`, which the test aborts while the tool runs: how the run ended. */
  readonly aborted: (source: Source, call: ModelCall, signal: AbortSignal) => Promise<RunEnd>;
  /** The framework's approval flow, where it has one; else passing `needsApproval` is refused. */
  readonly approvals?: ApprovalDriver | undefined;
  /** Makes the adapter's tools with `options` (an options object the test chose), so a refusal can be checked. */
  readonly make: (source: Source, options: object) => unknown;
  /** The JSON Schemas the adapter hands its framework for `source`'s tools, made anew, in registration order, as the framework holds them. */
  readonly schemas: (source: Source) => Promise<Record<string, unknown>[]>;
}

/** A model read from the text it got. */
export function readOf(id: string, text: string): ModelRead {
  return { id, text, code: toolgateCode(text) };
}

function toolgateCode(text: string): string | undefined {
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown } };
    return typeof parsed?.error?.code === "string" ? parsed.error.code : undefined;
  } catch {
    return undefined;
  }
}

/** Settles `run` and gives its rejection (undefined when it resolved). */
export async function rejectionOf(run: Promise<unknown>): Promise<unknown> {
  return run.then(
    () => undefined,
    (reason: unknown) => reason,
  );
}
