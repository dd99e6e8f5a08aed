// The options of `WorkerToolExecutor.create`, read once and checked up front: every number
// has a lower and an upper bound, and a bad value is a ToolContractError(INVALID_ARGUMENT)
// naming the option and the value. Nothing later reads the caller's object again.
import { availableParallelism } from "node:os";
import type { ResourceLimits } from "node:worker_threads";
import { COURSE_TOOL_INVALID_ARGUMENT } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { readDataProperty } from "../contract/failure.js";
import {
  ArrayIsArray,
  isProxy,
  NumberIsFinite,
  ObjectFreeze,
  ObjectGetOwnPropertyDescriptor,
  ObjectHasOwn,
} from "../contract/primordials.js";
import type { ToolModuleSpecifier } from "./tool-modules.js";

/** Options of `WorkerToolExecutor.create`. */
export interface WorkerToolExecutorOptions {
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
  /** Per-call limit in milliseconds; expiry gives a TOOL_EXECUTION_TIMEOUT result (default: none). */
  readonly timeoutMs?: number;
  /** How long a new thread may take to import the tool modules (default 10 000). */
  readonly moduleLoadTimeoutMs?: number;
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
  readonly timeoutMs: number | undefined;
  readonly moduleLoadTimeoutMs: number;
  readonly resourceLimits: ResourceLimits | undefined;
}

/** Node runs a timer of 2^31 ms or more after 1 ms: every delay option stays below. */
export const MAX_DELAY_MS = 2 ** 31 - 1;
export const MAX_THREADS = 256;
export const MAX_MODULES = 256;
/** Megabytes, for each `resourceLimits` field (1 TiB). */
export const MAX_RESOURCE_LIMIT_MB = 2 ** 20;

const RESOURCE_LIMIT_FIELDS = ["maxOldGenerationSizeMb", "maxYoungGenerationSizeMb", "codeRangeSizeMb", "stackSizeMb"] as const;

export function resolveOptions(options: unknown): ResolvedOptions {
  if (typeof options !== "object" || options === null || isProxy(options)) invalid("options must be an object");
  const read = (name: string): unknown => ownData(options, name);
  const maxThreads = integer("maxThreads", read("maxThreads"), 1, MAX_THREADS, availableParallelism());
  const minThreads = integer("minThreads", read("minThreads"), 0, MAX_THREADS, Math.min(1, maxThreads));
  if (minThreads > maxThreads) invalid(`options.minThreads (${minThreads}) must not exceed options.maxThreads (${maxThreads})`);
  const timeout = read("timeoutMs");
  return ObjectFreeze({
    modules: moduleList(read("modules")),
    minThreads,
    maxThreads,
    idleTimeout: integer("idleTimeout", read("idleTimeout"), 0, MAX_DELAY_MS, 30_000),
    abortGraceMs: integer("abortGraceMs", read("abortGraceMs"), 0, MAX_DELAY_MS, 1000),
    timeoutMs: timeout === undefined ? undefined : integer("timeoutMs", timeout, 1, MAX_DELAY_MS, 0),
    moduleLoadTimeoutMs: integer("moduleLoadTimeoutMs", read("moduleLoadTimeoutMs"), 1, MAX_DELAY_MS, 10_000),
    resourceLimits: resourceLimits(read("resourceLimits")),
  });
}

/** An own data property, or undefined (an accessor is never called). */
function ownData(object: object, name: string): unknown {
  const descriptor = ObjectGetOwnPropertyDescriptor(object, name);
  return descriptor !== undefined && ObjectHasOwn(descriptor, "value") ? descriptor.value : undefined;
}

function moduleList(value: unknown): ToolModuleSpecifier[] {
  if (!ArrayIsArray(value) || isProxy(value) || value.length === 0 || value.length > MAX_MODULES) {
    invalid(`options.modules must be a non-empty array of at most ${MAX_MODULES} tool module URLs or paths`);
  }
  const modules: ToolModuleSpecifier[] = [];
  for (let index = 0; index < value.length; index += 1) {
    const descriptor = ObjectGetOwnPropertyDescriptor(value, index);
    if (descriptor === undefined || !ObjectHasOwn(descriptor, "value")) invalid(`options.modules[${index}] is a hole or an accessor`);
    modules[index] = descriptor.value as ToolModuleSpecifier;
  }
  return modules;
}

function resourceLimits(value: unknown): ResourceLimits | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || isProxy(value)) invalid("options.resourceLimits must be an object");
  const limits: Record<string, number> = {};
  for (let index = 0; index < RESOURCE_LIMIT_FIELDS.length; index += 1) {
    const field = RESOURCE_LIMIT_FIELDS[index] as (typeof RESOURCE_LIMIT_FIELDS)[number];
    const limit = readDataProperty(value, field);
    if (limit === undefined) continue;
    if (typeof limit !== "number" || !NumberIsFinite(limit) || limit <= 0 || limit > MAX_RESOURCE_LIMIT_MB) {
      invalid(`options.resourceLimits.${field} must be a number above 0 and at most ${MAX_RESOURCE_LIMIT_MB} (got ${show(limit)})`);
    }
    limits[field] = limit;
  }
  return ObjectFreeze(limits);
}

function integer(name: string, value: unknown, minimum: number, maximum: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < minimum || value > maximum) {
    invalid(`options.${name} must be an integer from ${minimum} to ${maximum} (got ${show(value)})`);
  }
  return value;
}

const show = (value: unknown): string => (typeof value === "number" ? String(value) : typeof value);

function invalid(message: string): never {
  throw new ToolContractError(COURSE_TOOL_INVALID_ARGUMENT, message);
}
