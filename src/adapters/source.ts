// What the framework adapters run calls through: a ToolRegistry (in-process,
// `executeToolCall`) or any ToolExecutor (in-process, worker pool, queue). One resolver,
// so every adapter reads a source the same way.
// docs/adapters.md (every adapter takes a registry or an executor).
import { getEventListeners } from "node:events";
import { DEFAULT_ARGUMENT_BUDGETS, type ResolvedArgumentBudgets } from "../contract/budgets.js";
import { ContractErrorCode } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import {
  AbortControllerPrototypeGetSignal,
  AbortSignalPrototype,
  ArrayPrototypeIncludes,
  EventTargetPrototype,
  NativeAbortController,
  ObjectGetPrototypeOf,
  ObjectHasOwn,
  ObjectIsExtensible,
  ObjectPrototype,
  PromiseResolve,
  ReflectApply,
  ReflectOwnKeys,
} from "../contract/primordials.js";
import type { ToolResultMessage } from "../contract/results.js";
import { registeredTools, type ToolRegistry } from "../contract/tools.js";
import { executeToolCallParts } from "../executor/in-process.js";
import type { AdapterCall } from "../executor/pipeline.js";
import type { ToolExecutor } from "../executor/tool-executor.js";
import { argumentBudgetsOf } from "../executor/tool-executor.js";

/** What an adapter takes: a registry (calls run in-process) or an executor. */
export type ToolCallSource = ToolRegistry | Pick<ToolExecutor, "registry" | "executeToolCall">;

/** A source, read once: its registry, and how one call runs through it. */
export interface ResolvedSource {
  readonly registry: ToolRegistry;
  /**
   * Runs the call `{ type: "toolCall", id, name, arguments: args }` (what the framework
   * passed), with the adapter's progress listener as its one option when it has one. Gives
   * the result itself when the call completed synchronously in-process, else a native
   * promise; an executor's own `executeToolCall` may also throw. `accepted`: what the
   * adapter's precheck accepted, used in-process only (an executor validates on its own).
   */
  readonly run: (call: AdapterCall) => ToolResultMessage | Promise<ToolResultMessage>;
  /** The argument budgets `run` applies (before a tool's own): an executor's, or the defaults for a registry or a wrapper. */
  readonly argumentBudgets: ResolvedArgumentBudgets;
}

/** Reads `source` once (its `registry` and `executeToolCall`); a ToolContractError(INVALID_ARGUMENT) for anything else. */
export function resolveSource(source: unknown, api: string): ResolvedSource {
  if (isToolRegistry(source)) {
    return {
      registry: source,
      // The call and its options are toolgate's own here: the pipeline takes their parts as they are.
      run: (call) => executeToolCallParts(source, call),
      argumentBudgets: DEFAULT_ARGUMENT_BUDGETS,
    };
  }
  if (typeof source === "object" && source !== null) {
    const registry: unknown = (source as { readonly registry?: unknown }).registry;
    const run: unknown = (source as { readonly executeToolCall?: unknown }).executeToolCall;
    if (isToolRegistry(registry) && typeof run === "function") {
      return {
        registry,
        // Whatever it hands back (a thenable too) is read as `await` would.
        run: ({ id, name, args, signal, onProgress }) =>
          PromiseResolve(
            ReflectApply(run, source, [
              { type: "toolCall", id, name, arguments: args },
              signal,
              onProgress === undefined ? undefined : { onProgress },
            ]) as Promise<ToolResultMessage>,
          ),
        argumentBudgets: argumentBudgetsOf(source),
      };
    }
  }
  throw new ToolContractError(
    ContractErrorCode.INVALID_ARGUMENT,
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

/**
 * A signal that never aborts, for frameworks that pass none. Making one costs microseconds
 * (Node 20), as much as the rest of a trivial call, so calls share one while nothing has been
 * left on it: an in-process tool sees the signal itself, and a tool that keeps an abort
 * listener on it (or a signal made by `AbortSignal.any` from it, which Node keeps on it) would
 * otherwise pile them up over every later call. The shared signal is handed out only while it
 * holds at most one abort listener (the boundary's own watcher, added once per signal: see
 * executor/abort-watch.ts) and no such dependants; else a fresh one replaces it, so a signal
 * never carries more than one leftover per call running at once.
 */
export function neverAbortedSignal(): AbortSignal {
  const current = shared;
  if (current !== undefined && untouched(current)) return current;
  const fresh = AbortControllerPrototypeGetSignal(new NativeAbortController());
  shared = fresh;
  return fresh;
}

let shared: AbortSignal | undefined;

// Captured at load, as the primordials are.
const countListeners = getEventListeners;

/** The own keys `AbortSignal.any` adds to a source signal (where Node keeps its dependants), found once on a probe. */
const DEPENDANTS_KEYS: readonly (string | symbol)[] = (() => {
  const probe = AbortControllerPrototypeGetSignal(new NativeAbortController());
  const before = ReflectOwnKeys(probe);
  AbortSignal.any([probe]); // at load, like the captures above
  const added: (string | symbol)[] = [];
  const after = ReflectOwnKeys(probe);
  for (let index = 0; index < after.length; index += 1) {
    const key = after[index] as string | symbol;
    if (!ArrayPrototypeIncludes(before, key)) added[added.length] = key;
  }
  return added;
})();

/** Nothing but the boundary's watcher is on `signal`, and nothing changed its shape. */
function untouched(signal: AbortSignal): boolean {
  // Frozen, it would make a later tool's `AbortSignal.any([signal])` throw; another prototype, lie to it.
  if (!ObjectIsExtensible(signal) || ObjectGetPrototypeOf(signal) !== AbortSignalPrototype) return false;
  for (let index = 0; index < DEPENDANTS_KEYS.length; index += 1) {
    if (ObjectHasOwn(signal, DEPENDANTS_KEYS[index] as string | symbol)) return false;
  }
  // getEventListeners calls a `listeners` method when it finds one on the signal or up its chain
  // (an emitter's way): one put there by a tool, or planted on a prototype, would run here.
  if (listenersPlanted(signal)) return false;
  return countListeners(signal, "abort").length <= 1;
}

/**
 * A `listeners` on the signal (an AbortSignal, as checked) or anywhere up its chain. Once the
 * chain's links are the intrinsic ones (AbortSignal.prototype, EventTarget.prototype,
 * Object.prototype: no Proxy on it), `in` looks it up without running anything.
 */
function listenersPlanted(signal: AbortSignal): boolean {
  return (
    ObjectGetPrototypeOf(AbortSignalPrototype) !== EventTargetPrototype ||
    ObjectGetPrototypeOf(EventTargetPrototype) !== ObjectPrototype ||
    "listeners" in signal
  );
}
