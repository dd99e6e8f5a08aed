// What the framework adapters run calls through: a ToolRegistry (in-process,
// `executeToolCall`) or any ToolExecutor (in-process, worker pool, queue). One resolver,
// so every adapter reads a source the same way.
// docs/adapters.md (every adapter takes a registry or an executor).
import { DEFAULT_ARGUMENT_BUDGETS, type ResolvedArgumentBudgets } from "../contract/budgets.js";
import { COURSE_TOOL_INVALID_ARGUMENT } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { AbortControllerPrototypeGetSignal, NativeAbortController, ReflectApply } from "../contract/primordials.js";
import type { CourseToolResultMessage } from "../contract/results.js";
import { registeredTools, type ToolRegistry } from "../contract/tools.js";
import { executeToolCall } from "../executor/in-process.js";
import type { CallOptions, ToolExecutor } from "../executor/tool-executor.js";
import { argumentBudgetsOf } from "../executor/tool-executor.js";

/** What an adapter takes: a registry (calls run in-process) or an executor. */
export type ToolCallSource = ToolRegistry | Pick<ToolExecutor, "registry" | "executeToolCall">;

/** A source, read once: its registry, and how one call runs through it. */
export interface ResolvedSource {
  readonly registry: ToolRegistry;
  readonly run: (call: unknown, signal: AbortSignal, options?: CallOptions) => Promise<CourseToolResultMessage>;
  /** The argument budgets `run` applies (before a tool's own): an executor's, or the defaults for a registry or a wrapper. */
  readonly argumentBudgets: ResolvedArgumentBudgets;
}

/** Reads `source` once (its `registry` and `executeToolCall`); a ToolContractError(INVALID_ARGUMENT) for anything else. */
export function resolveSource(source: unknown, api: string): ResolvedSource {
  if (isToolRegistry(source)) {
    return {
      registry: source,
      run: (call, signal, options) => executeToolCall(source, call, signal, options),
      argumentBudgets: DEFAULT_ARGUMENT_BUDGETS,
    };
  }
  if (typeof source === "object" && source !== null) {
    const registry: unknown = (source as { readonly registry?: unknown }).registry;
    const run: unknown = (source as { readonly executeToolCall?: unknown }).executeToolCall;
    if (isToolRegistry(registry) && typeof run === "function") {
      return {
        registry,
        run: (call, signal, options) => ReflectApply(run, source, [call, signal, options]) as Promise<CourseToolResultMessage>,
        argumentBudgets: argumentBudgetsOf(source),
      };
    }
  }
  throw new ToolContractError(
    COURSE_TOOL_INVALID_ARGUMENT,
    `${api}: expected a ToolRegistry or an executor with a \`registry\` (ToolRegistry) and an \`executeToolCall(call, signal, options)\` method`,
  );
}

function isToolRegistry(value: unknown): value is ToolRegistry {
  try {
    registeredTools(value);
    return true;
  } catch {
    return false;
  }
}

/** A signal that never aborts, for frameworks that pass none. */
export function neverAbortedSignal(): AbortSignal {
  return AbortControllerPrototypeGetSignal(new NativeAbortController());
}
