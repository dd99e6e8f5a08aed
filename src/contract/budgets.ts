// Budgets: how much work the call snapshot and the serializer may do, and how long a result's
// content may be. Defaults live in constants.ts; this module validates what an operator or a
// tool author configures (up front, with upper bounds) and resolves it against the defaults.
// docs/contract.md: rule 4 — call snapshot (argument budgets), rule 11 — work budgets, rule 12 — content cap.
import { ContractErrorCode, Limits, type ToolContractErrorCode } from "./constants.js";
import { ToolContractError } from "./errors.js";
import { describeValue } from "./grammar.js";
import {
  isProxy,
  JSONStringify,
  NumberIsSafeInteger,
  ObjectFreeze,
  ObjectGetOwnPropertyDescriptor,
  ObjectHasOwn,
  ObjectKeys,
  ReflectOwnKeys,
  WeakMapPrototypeGet,
  WeakMapPrototypeSet,
} from "./primordials.js";
import { closestKey, quoteKey } from "./validators.js";

/**
 * The serializer's budgets for a tool's output (every field optional: unset fields keep the
 * executor's value, or the default). Configured per executor and per tool (`budgets` in the
 * definition; the tool's fields win).
 */
export interface OutputBudgets {
  /** Containers (objects, arrays, Maps, Sets) nested at most this deep. Default 32. */
  readonly maxDepth?: number;
  /** Values rendered, containers and primitives alike. Default 2048. */
  readonly maxNodes?: number;
  /** Members examined in all objects, arrays, Maps and Sets, omitted ones included. Default 4096. */
  readonly maxMembers?: number;
  /** Code points kept of any one string or key (longer ones are cut). Default 4096. */
  readonly maxStringCodePoints?: number;
  /** Magnitude of a BigInt, in bits. Default 4096. */
  readonly maxBigIntBits?: number;
  /** Length of a result's `content` in code points, truncation marker included. Default 4096. */
  readonly maxContentCodePoints?: number;
}

/**
 * The call snapshot's budgets for a call's `arguments`, checked before the value is listed
 * (a huge array is refused by its length alone). Configured per executor and per call (the
 * call's fields win), and per tool (`argumentBudgets` in the definition), which only tightens:
 * each of the tool's fields applies where it is lower than the executor's or the call's.
 */
export interface ArgumentBudgets {
  /** Containers nested at most this deep. Default 64. */
  readonly maxDepth?: number;
  /** Values (containers and primitives). Default 20,000. */
  readonly maxNodes?: number;
  /** UTF-16 code units of any one string or key. Default 1,048,576 (1 Mi). */
  readonly maxStringLength?: number;
  /** Total size: code units of every string and key, plus one per value. Default 4,194,304 (4 Mi). */
  readonly maxTotalSize?: number;
}

/**
 * How much non-text output one result may carry (every field optional). Configured per
 * executor and per tool (`attachmentBudgets` in the definition; the tool's fields win).
 */
export interface AttachmentBudgets {
  /** Attachments on one result, 0 to 256. Default 16. */
  readonly maxAttachments?: number;
  /** Total bytes of one result's attachments, 1 to 64 MiB. Default 8 MiB (8,388,608). */
  readonly maxAttachmentBytes?: number;
}

/** Every attachment budget set; what a result's attachments are checked against. */
export type ResolvedAttachmentBudgets = { readonly [K in keyof AttachmentBudgets]-?: number };
/** Every output budget set; what the serializer runs with. */
export type ResolvedOutputBudgets = { readonly [K in keyof OutputBudgets]-?: number };
/** Every argument budget set; what the call snapshot runs with. */
export type ResolvedArgumentBudgets = { readonly [K in keyof ArgumentBudgets]-?: number };

/** [lowest, highest] accepted for each budget: the highest keeps the worst admitted input bounded. */
const OUTPUT_RANGES: { readonly [K in keyof OutputBudgets]-?: readonly [number, number] } = {
  maxDepth: [1, 256],
  maxNodes: [1, 1_000_000],
  maxMembers: [1, 1_000_000],
  maxStringCodePoints: [1, 16_777_216],
  maxBigIntBits: [1, 1_048_576],
  // The truncation marker must fit, with room to spare.
  maxContentCodePoints: [Limits.TRUNCATION_MARKER.length + 1, 16_777_216],
};

const ARGUMENT_RANGES: { readonly [K in keyof ArgumentBudgets]-?: readonly [number, number] } = {
  maxDepth: [1, 1024],
  maxNodes: [1, 10_000_000],
  maxStringLength: [1, 536_870_888], // V8's longest string
  maxTotalSize: [1, 2_147_483_647],
};

const ATTACHMENT_RANGES: { readonly [K in keyof AttachmentBudgets]-?: readonly [number, number] } = {
  maxAttachments: [0, Limits.ATTACHMENTS_LIMIT],
  maxAttachmentBytes: [1, Limits.ATTACHMENT_BYTES_LIMIT],
};

export const DEFAULT_ATTACHMENT_BUDGETS: ResolvedAttachmentBudgets = ObjectFreeze({
  maxAttachments: Limits.MAX_ATTACHMENTS,
  maxAttachmentBytes: Limits.MAX_ATTACHMENT_BYTES,
});

export const DEFAULT_OUTPUT_BUDGETS: ResolvedOutputBudgets = ObjectFreeze({
  maxDepth: Limits.MAX_DEPTH,
  maxNodes: Limits.MAX_NODES,
  maxMembers: Limits.MAX_COLLECTION_VISITS,
  maxStringCodePoints: Limits.MAX_STRING_CODE_POINTS,
  maxBigIntBits: Limits.MAX_BIGINT_BITS,
  maxContentCodePoints: Limits.MAX_CONTENT_CODE_POINTS,
});

export const DEFAULT_ARGUMENT_BUDGETS: ResolvedArgumentBudgets = ObjectFreeze({
  maxDepth: Limits.MAX_ARGUMENT_DEPTH,
  maxNodes: Limits.MAX_ARGUMENT_NODES,
  maxStringLength: Limits.MAX_ARGUMENT_STRING_LENGTH,
  maxTotalSize: Limits.MAX_ARGUMENT_SIZE,
});

/**
 * Reads budgets an operator or tool author wrote: an object of own data properties, each a
 * known budget name with an integer in its range. Returns a frozen copy of the fields set.
 * Throws ToolContractError(`code`) naming `option` and the offending field and value.
 */
function readBudgets<K extends string>(
  value: unknown,
  option: string,
  ranges: { readonly [key in K]: readonly [number, number] },
  code: ToolContractErrorCode,
): { readonly [key in K]?: number } {
  if (typeof value !== "object" || value === null || isProxy(value)) {
    throw new ToolContractError(code, `${option} must be an object of budgets (got ${describeValue(value)})`);
  }
  // Null prototype: a setter planted on Object.prototype under a budget's name cannot swallow it.
  const copy = { __proto__: null } as unknown as { [key in K]?: number };
  const keys = ReflectOwnKeys(value);
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index] as PropertyKey;
    if (typeof key !== "string" || !ObjectHasOwn(ranges, key)) {
      const known = ReflectOwnKeys(ranges) as string[];
      const meant = typeof key === "string" ? closestKey(key, known) : undefined;
      throw new ToolContractError(
        code,
        `${option} has an unknown budget ${typeof key === "string" ? quoteKey(key) : "(a symbol)"}${meant === undefined ? "" : ` (did you mean ${JSONStringify(meant)}?)`}; known: ${JSONStringify(known)}`,
      );
    }
    const descriptor = ObjectGetOwnPropertyDescriptor(value, key);
    if (descriptor === undefined || !ObjectHasOwn(descriptor, "value")) {
      throw new ToolContractError(code, `${option}.${key} must be a data property, not an accessor`);
    }
    const [lowest, highest] = ranges[key as K];
    const budget: unknown = descriptor.value;
    if (budget === undefined) continue; // an explicit undefined keeps the inherited value
    if (typeof budget !== "number" || !NumberIsSafeInteger(budget) || budget < lowest || budget > highest) {
      throw new ToolContractError(code, `${option}.${key} must be an integer from ${lowest} to ${highest} (got ${describeValue(budget)})`);
    }
    copy[key as K] = budget;
  }
  return ObjectFreeze(copy);
}

/** Validates output budgets (INVALID_ARGUMENT unless another `code` is given); a frozen copy of the fields set. */
export function readOutputBudgets(
  value: unknown,
  option: string,
  code: ToolContractErrorCode = ContractErrorCode.INVALID_ARGUMENT,
): OutputBudgets {
  return readBudgets(value, option, OUTPUT_RANGES, code);
}

/** Validates argument budgets (INVALID_ARGUMENT unless another `code` is given); a frozen copy of the fields set. */
export function readArgumentBudgets(
  value: unknown,
  option: string,
  code: ToolContractErrorCode = ContractErrorCode.INVALID_ARGUMENT,
): ArgumentBudgets {
  return readBudgets(value, option, ARGUMENT_RANGES, code);
}

/** Validates attachment budgets (INVALID_ARGUMENT unless another `code` is given); a frozen copy of the fields set. */
export function readAttachmentBudgets(
  value: unknown,
  option: string,
  code: ToolContractErrorCode = ContractErrorCode.INVALID_ARGUMENT,
): AttachmentBudgets {
  return readBudgets(value, option, ATTACHMENT_RANGES, code);
}

/**
 * `base` with the fields `overrides` sets, frozen (both already validated: `overrides` is a
 * frozen copy of the fields set, from readOutputBudgets or readArgumentBudgets). Only its own
 * keys are read, and they are written onto a copy that already owns them, so nothing inherited
 * is consulted.
 */
export function resolveBudgets<T extends object>(base: T, overrides: { readonly [key in keyof T]?: T[key] } | undefined): T {
  if (overrides === undefined) return base;
  const merged = { ...base };
  const keys = ObjectKeys(overrides) as (keyof T)[];
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index] as keyof T;
    merged[key] = overrides[key] as T[keyof T];
  }
  return ObjectFreeze(merged);
}

const resolvedForTool = new WeakMap<OutputBudgets, { base: ResolvedOutputBudgets; resolved: ResolvedOutputBudgets }>();

/**
 * The budgets a tool's call runs with: the tool's own fields over the executor's. Memoized per
 * tool (for the last executor budgets seen), so a call allocates nothing.
 */
export function outputBudgetsFor(toolBudgets: OutputBudgets | undefined, base: ResolvedOutputBudgets): ResolvedOutputBudgets {
  if (toolBudgets === undefined) return base;
  const cached = WeakMapPrototypeGet(resolvedForTool, toolBudgets);
  if (cached !== undefined && cached.base === base) return cached.resolved;
  const resolved = resolveBudgets(base, toolBudgets);
  WeakMapPrototypeSet(resolvedForTool, toolBudgets, { base, resolved });
  return resolved;
}

const attachmentsForTool = new WeakMap<AttachmentBudgets, { base: ResolvedAttachmentBudgets; resolved: ResolvedAttachmentBudgets }>();

/** The attachment budgets a tool's call runs with: the tool's own fields over the executor's (memoized as outputBudgetsFor). */
export function attachmentBudgetsFor(
  toolBudgets: AttachmentBudgets | undefined,
  base: ResolvedAttachmentBudgets,
): ResolvedAttachmentBudgets {
  if (toolBudgets === undefined) return base;
  const cached = WeakMapPrototypeGet(attachmentsForTool, toolBudgets);
  if (cached !== undefined && cached.base === base) return cached.resolved;
  const resolved = resolveBudgets(base, toolBudgets);
  WeakMapPrototypeSet(attachmentsForTool, toolBudgets, { base, resolved });
  return resolved;
}

const argumentsForTool = new WeakMap<ArgumentBudgets, { base: ResolvedArgumentBudgets; resolved: ResolvedArgumentBudgets }>();

/**
 * The argument budgets a tool's call is snapshotted with: each of the tool's fields where it
 * is lower than `base` (the executor's, or the call's over them). A tool only tightens: the
 * operator's budgets are the ceiling whatever a tool module declares. Memoized per tool, for
 * the last `base` seen (an executor's budgets are one object; a call's own are made per call).
 */
export function argumentBudgetsFor(toolBudgets: ArgumentBudgets | undefined, base: ResolvedArgumentBudgets): ResolvedArgumentBudgets {
  if (toolBudgets === undefined) return base;
  const cached = WeakMapPrototypeGet(argumentsForTool, toolBudgets);
  if (cached !== undefined && cached.base === base) return cached.resolved;
  const merged: { -readonly [K in keyof ResolvedArgumentBudgets]: number } = { ...base };
  const keys = ObjectKeys(toolBudgets) as (keyof ArgumentBudgets)[];
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index] as keyof ArgumentBudgets;
    const limit = toolBudgets[key] as number;
    if (limit < merged[key]) merged[key] = limit;
  }
  const resolved: ResolvedArgumentBudgets = ObjectFreeze(merged);
  WeakMapPrototypeSet(argumentsForTool, toolBudgets, { base, resolved });
  return resolved;
}
