// What the framework adapters run calls through: a ToolRegistry (in-process,
// `executeToolCall`) or any ToolExecutor (in-process, worker pool, queue). One resolver,
// so every adapter reads a source the same way, and what every adapter must do alike lives
// here once: model arguments the boundary refuses are an answer the model reads, each
// framework gets schemas of its own, the app's progress listener is only ever observed, and
// every call gets a signal of its own.
// docs/adapters.md (every adapter takes a registry or an executor; "What every adapter shares").
import { argumentBudgetsFor, DEFAULT_ARGUMENT_BUDGETS, type ResolvedArgumentBudgets } from "../contract/budgets.js";
import { snapshotArguments } from "../contract/call.js";
import { ContractErrorCode, ToolErrorCode } from "../contract/constants.js";
import { type DescribeToolsOptions, describeTools } from "../contract/describe.js";
import { isToolContractError, ToolContractError } from "../contract/errors.js";
import type { JsonSchema } from "../contract/parameters.js";
import {
  AbortControllerPrototypeAbort,
  AbortControllerPrototypeGetSignal,
  isPromise,
  MapPrototypeGet,
  NativeAbortController,
  PromisePrototypeThen,
  PromiseReject,
  PromiseResolve,
  ReflectApply,
  StructuredClone,
} from "../contract/primordials.js";
import { errorContent, type ToolResultMessage, toolResultMessage } from "../contract/results.js";
import { registeredTools, type ToolRegistry } from "../contract/tools.js";
import { pipelineOf } from "../executor/in-process.js";
import { OwnSignal } from "../executor/own-signal.js";
import { type AdapterCall, executeCallParts, type Pipeline } from "../executor/pipeline.js";
import { checkProgressListener, deliverProgress, type ProgressListener } from "../executor/progress.js";
import {
  AbortWatch,
  abortReason,
  assertAbortSignal,
  isAborted,
  NO_FRAMEWORK_SIGNAL,
  neverAbortingSignal,
  startWatching,
  stopWatching,
} from "../executor/signal.js";
import type { CallOptions, ToolExecutor } from "../executor/tool-executor.js";
import { argumentBudgetsOf } from "../executor/tool-executor.js";

/**
 * One call as an adapter hands it over: the framework's id, name and arguments (untrusted), the
 * framework's signal for it, if any, and the adapter's progress listener and precheck verdict.
 */
export interface SourceCall extends AdapterCall {
  /** The framework's signal for the call; undefined when it passes none. */
  readonly signal: AbortSignal | undefined;
  /**
   * The framework made `signal` for this call alone (MCP's request signal): the tool may have it
   * as it is. Otherwise (a run's or an agent's signal, shared by its calls) the tool gets a
   * signal of its own that follows it (FollowingSignal).
   */
  readonly signalIsTheCalls?: boolean;
  /** The call's `options.durable` (the adapter's `durable` option answered it); executors only (durable-option.ts). */
  readonly durable?: { readonly runId: string } | undefined;
}

/** What an adapter takes: a registry (calls run in-process) or an executor. */
export type ToolCallSource = ToolRegistry | Pick<ToolExecutor, "registry" | "executeToolCall">;

/** A source, read once: its registry, and how one call runs through it. */
export interface ResolvedSource {
  readonly registry: ToolRegistry;
  /** The source is a ToolRegistry (its calls run in-process with no executor options: no durable calls). */
  readonly isRegistry: boolean;
  /**
   * Runs the call `{ type: "toolCall", id, name, arguments: args }` (what the framework
   * passed), with the adapter's progress listener as its one option when it has one, and the
   * call's own signal (below: the tool never gets an object another call could see). Gives
   * the result itself when the call completed synchronously in-process, else a native
   * promise; an executor's own `executeToolCall` may also throw. `accepted`: what the
   * adapter's precheck accepted, used in-process only (an executor validates on its own).
   * Arguments refused as a malformed call come back as a TOOL_ARGUMENTS_INVALID result, not a
   * rejection (see answerRefusedArguments).
   */
  readonly run: (call: SourceCall) => ToolResultMessage | Promise<ToolResultMessage>;
  /** The argument budgets `run` applies (before a tool's own): an executor's, or the defaults for a registry or a wrapper. */
  readonly argumentBudgets: ResolvedArgumentBudgets;
}

/** Reads `source` once (its `registry` and `executeToolCall`); a ToolContractError(INVALID_ARGUMENT) for anything else. */
export function resolveSource(source: unknown, api: string): ResolvedSource {
  if (isToolRegistry(source)) {
    const refused = argumentRefusal(source, DEFAULT_ARGUMENT_BUDGETS);
    const pipeline = pipelineOf(source);
    return {
      registry: source,
      isRegistry: true,
      // The call and its options are toolgate's own here: the pipeline takes their parts as they are,
      // and the tool runs on this thread, where its own signal is made when it first reads it.
      run: (call) => runInPipeline(call, refused, pipeline),
      argumentBudgets: DEFAULT_ARGUMENT_BUDGETS,
    };
  }
  if (typeof source === "object" && source !== null) {
    const registry: unknown = (source as { readonly registry?: unknown }).registry;
    const run: unknown = (source as { readonly executeToolCall?: unknown }).executeToolCall;
    if (isToolRegistry(registry) && typeof run === "function") {
      const argumentBudgets = argumentBudgetsOf(source);
      const refused = argumentRefusal(registry, argumentBudgets);
      return {
        registry,
        isRegistry: false,
        // Whatever it hands back (a thenable too) is read as `await` would.
        run: (call) => {
          const durable = call.durable;
          // Any executor's tool may run on this thread (an InProcessToolExecutor, a wrapper of one): each call's signal is made up front.
          return runWithItsSignal(call, refused, (signal) =>
            PromiseResolve(
              ReflectApply(run, source, [
                { type: "toolCall", id: call.id, name: call.name, arguments: call.args },
                signal,
                callOptions(call.onProgress, durable),
              ]) as Promise<ToolResultMessage>,
            ),
          );
        },
        argumentBudgets,
      };
    }
  }
  throw new ToolContractError(
    ContractErrorCode.INVALID_ARGUMENT,
    `${api}: expected a ToolRegistry or an executor with a \`registry\` (ToolRegistry) and an \`executeToolCall(call, signal, options)\` method`,
  );
}

/** An executor call's options: the adapter's progress listener and the call's `durable`, each when present. */
function callOptions(onProgress: ProgressListener | undefined, durable: SourceCall["durable"]): CallOptions | undefined {
  if (durable === undefined) return onProgress === undefined ? undefined : { onProgress };
  return onProgress === undefined ? { durable } : { onProgress, durable };
}

function isToolRegistry(value: unknown): value is ToolRegistry {
  try {
    registeredTools(value);
    return true;
  } catch {
    return false;
  }
}

// Model arguments the boundary refuses as a malformed call (valid JSON that is not an object,
// or over the argument budgets: 70 levels deep, 25,000 values) are model data like any other:
// the model reads TOOL_ARGUMENTS_INVALID and the run goes on. Left as the pipeline's rejection,
// each framework would end the run with it (OpenAI Agents with `errorFunction: null`, LangGraph
// with `handleToolErrors: false`) or show the model a message without toolgate's code (the AI
// SDK, Mastra). Decided here, for every adapter, so no adapter can leave it out.

/** Tells, for a call whose run was refused as malformed, whether its arguments are why. */
type ArgumentRefusal = (call: SourceCall) => boolean;

/**
 * Whether the arguments alone are refused: the id and the name are non-empty strings (what the
 * pipeline checks before them), and the arguments do not snapshot within `budgets` tightened by
 * the tool's own, as the pipeline takes them. Only asked after a refusal, so a call that passes
 * pays nothing; a refusal for another reason (an executor's own, a stricter wrapper's) stays a
 * rejection.
 */
function argumentRefusal(registry: ToolRegistry, budgets: ResolvedArgumentBudgets): ArgumentRefusal {
  const tools = registeredTools(registry);
  return ({ id, name, args }) => {
    if (typeof id !== "string" || id.length === 0 || typeof name !== "string" || name.length === 0) return false;
    const tool = MapPrototypeGet(tools, name);
    try {
      snapshotArguments(args, tool === undefined ? budgets : argumentBudgetsFor(tool.argumentBudgets, budgets));
      return false;
    } catch (error) {
      return isToolContractError(error) && error.code === ContractErrorCode.INVALID_TOOL_CALL;
    }
  };
}

/**
 * Runs a registry's `call` through toolgate's own pipeline, on this thread: the pipeline is
 * handed the framework's signal (an internal one that never aborts when it passed none,
 * NO_FRAMEWORK_SIGNAL) with an OwnSignal that the tool's context makes on first read, or the
 * framework's signal itself when it made it for this call alone. The pipeline asserts the
 * framework's signal before anything can read the tool's. See `settleRun` for what follows.
 */
function runInPipeline(call: SourceCall, refused: ArgumentRefusal, pipeline: Pipeline): ToolResultMessage | Promise<ToolResultMessage> {
  const framework = call.signal;
  if (call.signalIsTheCalls === true && framework !== undefined) {
    return settleRun(executeCallParts(pipeline, call, framework, undefined), undefined, call, refused);
  }
  const signal = framework === undefined ? NO_FRAMEWORK_SIGNAL : framework;
  const own = new OwnSignal(signal);
  return settleRun(executeCallParts(pipeline, call, signal, own), own, call, refused);
}

/**
 * Runs `call` through an executor's `run`, handed a signal made for the call up front (a fresh
 * one that never aborts when the framework passed none, else one that follows the framework's:
 * FollowingSignal). See `settleRun` for what follows.
 */
function runWithItsSignal(
  call: SourceCall,
  refused: ArgumentRefusal,
  run: (signal: AbortSignal) => Promise<ToolResultMessage>,
): ToolResultMessage | Promise<ToolResultMessage> {
  let following: FollowingSignal | undefined;
  let signal: AbortSignal;
  try {
    if (call.signalIsTheCalls === true && call.signal !== undefined) signal = call.signal;
    else if (call.signal === undefined)
      signal = neverAbortingSignal(); // fresh per call (executor/signal.ts)
    else {
      following = new FollowingSignal(call.signal);
      signal = following.signal;
    }
  } catch (error) {
    return PromiseReject(error); // not an AbortSignal
  }
  let completed: Promise<ToolResultMessage>;
  try {
    completed = run(signal);
  } catch (error) {
    following?.stop();
    throw error; // a custom executor's `executeToolCall` threw
  }
  return settleRun(completed, following, call, refused);
}

/**
 * Once the call settles (at once when it completed synchronously), its signal (`following`, if
 * the call has one of its own) stops following the framework's. A refusal of its arguments is
 * answered as a frozen TOOL_ARGUMENTS_INVALID result linked to the call (the pipeline's
 * message), which each adapter then hands its framework like any error result; any other
 * rejection passes through unchanged.
 */
function settleRun(
  completed: ToolResultMessage | Promise<ToolResultMessage>,
  following: { stop(): void } | undefined,
  call: SourceCall,
  refused: ArgumentRefusal,
): ToolResultMessage | Promise<ToolResultMessage> {
  if (!isPromise(completed)) {
    following?.stop();
    return completed;
  }
  return PromisePrototypeThen(
    completed as Promise<ToolResultMessage>,
    following === undefined
      ? undefined
      : (result: ToolResultMessage) => {
          following.stop();
          return result;
        },
    (error: unknown) => {
      following?.stop();
      if (!isToolContractError(error) || error.code !== ContractErrorCode.INVALID_TOOL_CALL || !refused(call)) throw error;
      const link = { id: call.id as string, name: call.name as string };
      return toolResultMessage(link, errorContent(ToolErrorCode.ARGUMENTS_INVALID, { text: error.message, cut: false }), true);
    },
  ) as Promise<ToolResultMessage>;
}

/** One tool as an adapter hands it to its framework: `parameters` is the framework's own. */
export interface FrameworkToolDescription {
  readonly name: string;
  readonly description: string;
  /** A fresh, unfrozen deep copy of the tool's JSON Schema: the framework may write into it. */
  readonly parameters: Record<string, unknown>;
}

/**
 * describeTools' descriptions, each with a schema of its own. Frameworks write into the schemas
 * they are given (LangChain's validator, `@cfworker/json-schema`, stamps `__absolute_uri__` on
 * every schema it compiles): a copy per tool, per adapter call, lets them, and nothing they
 * write reaches the registry's frozen schema or another framework's copy.
 */
export function describeForFramework(registry: ToolRegistry, withoutSchema: unknown): FrameworkToolDescription[] {
  const descriptions = describeTools(registry, { withoutSchema: withoutSchema as DescribeToolsOptions["withoutSchema"] });
  const owned: FrameworkToolDescription[] = [];
  for (let index = 0; index < descriptions.length; index += 1) {
    const { name, description, parameters } = descriptions[index] as { name: string; description: string; parameters: JsonSchema };
    // Our own plain JSON (describeTools copied it through own data properties): the clone runs no code of anyone's.
    owned[index] = { name, description, parameters: StructuredClone(parameters) as Record<string, unknown> };
  }
  return owned;
}

/**
 * An adapter's `onProgress` option (a function that is not a Proxy, else INVALID_ARGUMENT), as
 * the adapter calls it: whatever the app's listener does (throws, returns a promise that
 * rejects) is ignored, as CallOptions.onProgress promises, through whichever sink and executor
 * the report arrives.
 */
export function readProgressOption(value: unknown): ProgressListener | undefined {
  if (value === undefined) return undefined;
  const listener = checkProgressListener(value);
  return (progress) => deliverProgress(listener, progress);
}

// The signal a call's tool gets. An in-process tool gets the very signal, and anything it does
// to it (an own `aborted`, `reason`, `throwIfAborted` or `constructor`, Node's internal state
// reached through its symbols, listeners, freezing it, now or later through a reference it
// kept) must stay with its own call. So no call ever gets an object another call sees: a
// fresh signal when the framework passes none, and one that follows the framework's signal
// when that is shared by the framework's calls (a run's, an agent's). (One shared signal,
// handed out while it looked untouched, let a tool's own `constructor` on it fail every later
// such call in the process; and no check at hand-out time can see what a tool that kept it
// does to it afterwards.) On Node 20 this costs a trivial call a few microseconds
// (docs/adapters.md, "The call's signal: what it costs").

/**
 * A call's own signal that follows the framework's: aborted with its reason the moment it
 * aborts (already aborted: at once), until `stop` (the call settled). One linked watch per
 * call on the framework's signal (executor/signal.ts), which holds one listener however many
 * calls share it. A `signal` that is not a genuine AbortSignal is a ToolContractError(INVALID_ARGUMENT).
 */
class FollowingSignal extends AbortWatch {
  readonly #controller = new NativeAbortController();
  readonly signal: AbortSignal = AbortControllerPrototypeGetSignal(this.#controller);

  constructor(readonly framework: AbortSignal) {
    super();
    assertAbortSignal(framework);
    if (isAborted(framework)) AbortControllerPrototypeAbort(this.#controller, abortReason(framework));
    else startWatching(framework, this);
  }

  onAbort(): void {
    AbortControllerPrototypeAbort(this.#controller, abortReason(this.framework));
  }

  stop(): void {
    stopWatching(this);
  }
}
