// The options of `WorkerToolExecutor.create`, read once and checked up front: every number
// has a lower and an upper bound, and a bad value is a ToolContractError(INVALID_ARGUMENT)
// naming the option and the value. Nothing later reads the caller's object again.
// docs/contract.md: rule W3 — timeout and termination (every delay bounded).
import { availableParallelism } from "node:os";
import type { ResourceLimits } from "node:worker_threads";
import { describeValue } from "../contract/grammar.js";
import {
  ArrayIsArray,
  isProxy,
  NumberIsFinite,
  ObjectFreeze,
  ObjectGetOwnPropertyDescriptor,
  ObjectHasOwn,
} from "../contract/primordials.js";
import { integerOr, invalidArgument, MAX_DELAY_MS, readOwnOption, validateObject, validateOptionKeys } from "../contract/validators.js";
import { EXECUTOR_OPTION_KEYS, HOOKS_ELSEWHERE } from "../executor/pipeline.js";
import type { ExecutorOptions } from "../executor/tool-executor.js";
import { type ToolModuleSpecifier, toolModuleUrl } from "./tool-modules.js";

/**
 * Options of `WorkerToolExecutor.create`: the ones every executor takes (`timeoutMs`,
 * `hooks`; `app` is refused, see `setup()` in docs/worker.md) and the pool's own.
 */
export interface WorkerToolExecutorOptions extends ExecutorOptions {
  /** Tool modules: ES modules whose default export is an array of tool definitions (at most 256). */
  readonly modules: readonly ToolModuleSpecifier[];
  /** Threads kept alive, 0 to `maxThreads` (default 1, so the first call does not wait for a thread to boot). */
  readonly minThreads?: number;
  /**
   * Calls running at once, 1 to 256 (default `os.availableParallelism()`). Threads: as many,
   * plus up to as many again, briefly, while tasks whose calls were aborted or timed out wind
   * down (the next call does not wait for their grace period).
   */
  readonly maxThreads?: number;
  /** Milliseconds an idle thread above `minThreads` lives on (default 30 000: bursts reuse threads). */
  readonly idleTimeout?: number;
  /** After an abort or timeout, how long a tool may keep running before its thread is terminated (default 1000). */
  readonly abortGraceMs?: number;
  /** How long a new thread may take to import each tool module (default 10 000). */
  readonly moduleLoadTimeoutMs?: number;
  /** How long a tool module's `setup()` may take in each thread (default 10 000). */
  readonly setupTimeoutMs?: number;
  /**
   * A module (URL, file URL string or path) every worker thread imports before the tool
   * modules, within `moduleLoadTimeoutMs`: where a loader is registered for that thread, so
   * it can import tool modules written in TypeScript (see docs/worker.md). Default: none.
   */
  readonly loader?: ToolModuleSpecifier;
  /** Passed to every worker thread; exceeding them ends that call with TOOL_EXECUTION_FAILED. */
  readonly resourceLimits?: ResourceLimits;
}

/** The options after checking: plain numbers, defaults filled in. */
export interface ResolvedOptions {
  readonly modules: readonly ToolModuleSpecifier[];
  readonly minThreads: number;
  readonly maxThreads: number;
  readonly idleTimeout: number;
  readonly abortGraceMs: number;
  readonly moduleLoadTimeoutMs: number;
  readonly setupTimeoutMs: number;
  /** The loader's import URL. */
  readonly loader: string | undefined;
  readonly resourceLimits: ResourceLimits | undefined;
}

/** Every delay option's bound (see validators.ts): Node runs a timer of 2^31 ms or more after 1 ms. */
export { MAX_DELAY_MS };
export const MAX_THREADS = 256;
export const MAX_MODULES = 256;
/** Characters of the `loader` string (a path or URL longer than this is a mistake, not a module). */
export const MAX_SPECIFIER_LENGTH = 4096;
/** Megabytes, for each `resourceLimits` field (1 TiB). */
export const MAX_RESOURCE_LIMIT_MB = 2 ** 20;

const RESOURCE_LIMIT_FIELDS = ["maxOldGenerationSizeMb", "maxYoungGenerationSizeMb", "codeRangeSizeMb", "stackSizeMb"] as const;

/** Every option of `WorkerToolExecutor.create`: the ones every executor takes, then the pool's own. */
export const WORKER_OPTION_KEYS: readonly string[] = ObjectFreeze([
  ...EXECUTOR_OPTION_KEYS,
  // the pool's own
  "modules",
  "minThreads",
  "maxThreads",
  "idleTimeout",
  "abortGraceMs",
  "moduleLoadTimeoutMs",
  "setupTimeoutMs",
  "loader",
  "resourceLimits",
]);

/** The pool's own options (the shared ones are `readExecutorOptions`'); an unknown key of either is refused. */
export function resolveOptions(options: unknown): ResolvedOptions {
  validateObject(options, "options");
  validateOptionKeys(options, "options", WORKER_OPTION_KEYS, HOOKS_ELSEWHERE);
  const read = (name: string): unknown => readOwnOption(options, name, "options");
  const maxThreads = integerOr(read("maxThreads"), "options.maxThreads", { min: 1, max: MAX_THREADS, fallback: availableParallelism() });
  const minThreads = integerOr(read("minThreads"), "options.minThreads", { min: 0, max: MAX_THREADS, fallback: Math.min(1, maxThreads) });
  if (minThreads > maxThreads) invalidArgument(`options.minThreads (${minThreads}) must not exceed options.maxThreads (${maxThreads})`);
  return ObjectFreeze({
    modules: moduleList(read("modules")),
    minThreads,
    maxThreads,
    idleTimeout: integerOr(read("idleTimeout"), "options.idleTimeout", { min: 0, max: MAX_DELAY_MS, fallback: 30_000 }),
    abortGraceMs: integerOr(read("abortGraceMs"), "options.abortGraceMs", { min: 0, max: MAX_DELAY_MS, fallback: 1000 }),
    moduleLoadTimeoutMs: integerOr(read("moduleLoadTimeoutMs"), "options.moduleLoadTimeoutMs", {
      min: 1,
      max: MAX_DELAY_MS,
      fallback: 10_000,
    }),
    setupTimeoutMs: integerOr(read("setupTimeoutMs"), "options.setupTimeoutMs", { min: 1, max: MAX_DELAY_MS, fallback: 10_000 }),
    loader: loader(read("loader")),
    resourceLimits: resourceLimits(read("resourceLimits")),
  });
}
function moduleList(value: unknown): ToolModuleSpecifier[] {
  if (!ArrayIsArray(value) || isProxy(value) || value.length === 0 || value.length > MAX_MODULES) {
    invalidArgument(`options.modules must be a non-empty array of at most ${MAX_MODULES} tool module URLs or paths`);
  }
  const modules: ToolModuleSpecifier[] = [];
  for (let index = 0; index < value.length; index += 1) {
    const descriptor = ObjectGetOwnPropertyDescriptor(value, index);
    if (descriptor === undefined || !ObjectHasOwn(descriptor, "value"))
      invalidArgument(`options.modules[${index}] is a hole or an accessor`);
    modules[index] = descriptor.value as ToolModuleSpecifier;
  }
  return modules;
}

/** The loader as an import URL: a URL, or a non-empty string of at most MAX_SPECIFIER_LENGTH characters. */
function loader(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const fits =
    (typeof value === "string" && value.length > 0 && value.length <= MAX_SPECIFIER_LENGTH) || (!isProxy(value) && value instanceof URL);
  if (!fits) {
    invalidArgument(
      `options.loader must be a URL, a file URL string or a path of 1 to ${MAX_SPECIFIER_LENGTH} characters (got ${describeValue(value)})`,
    );
  }
  return toolModuleUrl(value as ToolModuleSpecifier);
}

function resourceLimits(value: unknown): ResourceLimits | undefined {
  if (value === undefined) return undefined;
  validateObject(value, "options.resourceLimits");
  validateOptionKeys(value, "options.resourceLimits", RESOURCE_LIMIT_FIELDS);
  const limits: Record<string, number> = {};
  for (let index = 0; index < RESOURCE_LIMIT_FIELDS.length; index += 1) {
    const field = RESOURCE_LIMIT_FIELDS[index] as (typeof RESOURCE_LIMIT_FIELDS)[number];
    const limit = readOwnOption(value, field, "options.resourceLimits");
    if (limit === undefined) continue;
    if (typeof limit !== "number" || !NumberIsFinite(limit) || limit <= 0 || limit > MAX_RESOURCE_LIMIT_MB) {
      invalidArgument(
        `options.resourceLimits.${field} must be a number above 0 and at most ${MAX_RESOURCE_LIMIT_MB} (got ${describeValue(limit)})`,
      );
    }
    limits[field] = limit;
  }
  return ObjectFreeze(limits);
}
