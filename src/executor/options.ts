// The options every executor shares, read once and checked up front: an executor's
// (`timeoutMs`, `hooks`, `app`, the argument, output and attachment budgets) when it is made, a call's (`timeoutMs`, `app`,
// `argumentBudgets`) when it starts.
// Only own data properties are read, so a getter or a Proxy never runs during a call.
// docs/contract.md: rule W1 — tool modules (every option validated up front); docs/operations.md — Timeouts, Application context; docs/guarantees.md — Budgets.
import type { ToolApp } from "../contract/app.js";
import {
  type ArgumentBudgets,
  DEFAULT_ARGUMENT_BUDGETS,
  DEFAULT_ATTACHMENT_BUDGETS,
  DEFAULT_OUTPUT_BUDGETS,
  type ResolvedArgumentBudgets,
  type ResolvedAttachmentBudgets,
  type ResolvedOutputBudgets,
  readArgumentBudgets,
  readAttachmentBudgets,
  readOutputBudgets,
  resolveBudgets,
} from "../contract/budgets.js";
import { COURSE_TOOL_INVALID_ARGUMENT } from "../contract/constants.js";
import { ObjectFreeze } from "../contract/primordials.js";
import { checkTimeoutMs } from "../contract/timeout.js";
import { readOwnOption, validateObject, validateOptionKeys } from "../contract/validators.js";
import { type ResolvedHooks, resolveHooks } from "./hooks.js";
import { checkProgressListener, type ProgressListener } from "./progress.js";

/** An executor's resolved options: what its pipeline applies to every call. */
export interface PipelineSettings {
  readonly timeoutMs: number | undefined;
  readonly hooks: ResolvedHooks | undefined;
  readonly app: ToolApp | undefined;
  /** The executor's argument budgets over the defaults; a call's own override them. */
  readonly argumentBudgets: ResolvedArgumentBudgets;
  /** The executor's output budgets over the defaults; a tool's own override them. */
  readonly outputBudgets: ResolvedOutputBudgets;
  /** The executor's attachment budgets over the defaults; a tool's own override them. */
  readonly attachmentBudgets: ResolvedAttachmentBudgets;
}

/** One call's (or one batch's) resolved options. */
export interface CallSettings {
  readonly timeoutMs: number | undefined;
  readonly app: ToolApp | undefined;
  /** Checked, not yet resolved: they apply over the executor's. */
  readonly argumentBudgets: ArgumentBudgets | undefined;
  readonly onProgress: ProgressListener | undefined;
}

/** What an executor made without options applies. */
export const DEFAULT_PIPELINE_SETTINGS: PipelineSettings = ObjectFreeze({
  timeoutMs: undefined,
  hooks: undefined,
  app: undefined,
  argumentBudgets: DEFAULT_ARGUMENT_BUDGETS,
  outputBudgets: DEFAULT_OUTPUT_BUDGETS,
  attachmentBudgets: DEFAULT_ATTACHMENT_BUDGETS,
});

const NO_CALL_OPTIONS: CallSettings = ObjectFreeze({
  timeoutMs: undefined,
  app: undefined,
  argumentBudgets: undefined,
  onProgress: undefined,
});

/** The options every executor takes (each executor may add its own). */
export const EXECUTOR_OPTION_KEYS: readonly string[] = ObjectFreeze([
  "timeoutMs",
  "hooks",
  "app",
  "argumentBudgets",
  "outputBudgets",
  "attachmentBudgets",
]);
/** The options of one call (`CallOptions`). */
const CALL_OPTION_KEYS: readonly string[] = ObjectFreeze(["timeoutMs", "app", "argumentBudgets", "onProgress"]);
/** The options of a batch (`BatchOptions`): a call's, and `concurrency`. */
// Written out, not spread: a module of toolgate may first load after a tool module patched Array.prototype.
const BATCH_OPTION_KEYS: readonly string[] = ObjectFreeze(["timeoutMs", "app", "argumentBudgets", "onProgress", "concurrency"]);

/** A hook given where an executor's or a call's options are read: where it belongs. */
export const HOOKS_ELSEWHERE: { readonly [key: string]: string } = ObjectFreeze({
  __proto__: null,
  beforeExecute: "hooks.beforeExecute",
  onCallStart: "hooks.onCallStart",
  onCallEnd: "hooks.onCallEnd",
  onThreadKilled: "hooks.onThreadKilled",
  onHookError: "hooks.onHookError",
} as unknown as { readonly [key: string]: string });

/**
 * Reads `ExecutorOptions` (absent: none); a ToolContractError(INVALID_ARGUMENT) naming a bad
 * one, or an unknown key. `known`: every option the executor takes (the shared ones, then its
 * own, which it reads itself).
 */
export function readExecutorOptions(options: unknown, known: readonly string[] = EXECUTOR_OPTION_KEYS): PipelineSettings {
  if (options === undefined) return DEFAULT_PIPELINE_SETTINGS;
  validateObject(options, "options");
  validateOptionKeys(options, "options", known, HOOKS_ELSEWHERE);
  const timeoutMs = readOwnOption(options, "timeoutMs", "options");
  const hooks = readOwnOption(options, "hooks", "options");
  const argumentBudgets = readOwnOption(options, "argumentBudgets", "options");
  const outputBudgets = readOwnOption(options, "outputBudgets", "options");
  const attachmentBudgets = readOwnOption(options, "attachmentBudgets", "options");
  return ObjectFreeze({
    timeoutMs: timeoutMs === undefined ? undefined : checkTimeoutMs(timeoutMs, "options.timeoutMs", COURSE_TOOL_INVALID_ARGUMENT),
    hooks: hooks === undefined ? undefined : resolveHooks(hooks),
    app: readOwnOption(options, "app", "options") as ToolApp | undefined,
    argumentBudgets: resolveBudgets(
      DEFAULT_ARGUMENT_BUDGETS,
      argumentBudgets === undefined ? undefined : readArgumentBudgets(argumentBudgets, "options.argumentBudgets"),
    ),
    outputBudgets: resolveBudgets(
      DEFAULT_OUTPUT_BUDGETS,
      outputBudgets === undefined ? undefined : readOutputBudgets(outputBudgets, "options.outputBudgets"),
    ),
    attachmentBudgets: resolveBudgets(
      DEFAULT_ATTACHMENT_BUDGETS,
      attachmentBudgets === undefined ? undefined : readAttachmentBudgets(attachmentBudgets, "options.attachmentBudgets"),
    ),
  });
}

/** Reads `CallOptions` (`what`: "call options"), or the per-call part of `BatchOptions` ("batch options", which may also hold `concurrency`). */
export function readCallOptions(options: unknown, what: string): CallSettings {
  if (options === undefined) return NO_CALL_OPTIONS;
  validateObject(options, what);
  validateOptionKeys(options, what, what === "batch options" ? BATCH_OPTION_KEYS : CALL_OPTION_KEYS, HOOKS_ELSEWHERE);
  const timeoutMs = readOwnOption(options, "timeoutMs", "options");
  const app = readOwnOption(options, "app", "options") as ToolApp | undefined;
  const argumentBudgets = readOwnOption(options, "argumentBudgets", "options");
  const onProgress = readOwnOption(options, "onProgress", "options");
  if (timeoutMs === undefined && app === undefined && argumentBudgets === undefined && onProgress === undefined) return NO_CALL_OPTIONS;
  return {
    timeoutMs: timeoutMs === undefined ? undefined : checkTimeoutMs(timeoutMs, "options.timeoutMs", COURSE_TOOL_INVALID_ARGUMENT),
    app,
    argumentBudgets: argumentBudgets === undefined ? undefined : readArgumentBudgets(argumentBudgets, "options.argumentBudgets"),
    onProgress: onProgress === undefined ? undefined : checkProgressListener(onProgress),
  };
}

/** A call's argument budgets: its own over the executor's. */
export function callArgumentBudgets(settings: PipelineSettings | undefined, options: CallSettings): ResolvedArgumentBudgets {
  const base = settings === undefined ? DEFAULT_ARGUMENT_BUDGETS : settings.argumentBudgets;
  return options.argumentBudgets === undefined ? base : resolveBudgets(base, options.argumentBudgets);
}
