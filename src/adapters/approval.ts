// The adapters' per-call "a person must approve this" option, shared by the AI SDK and
// OpenAI Agents adapters: it routes a call into the framework's own human-in-the-loop flow
// (the SDK's approval request / the run's interruption), so the app's approval UI works
// unchanged. toolgate's executor hook `beforeExecute` still runs for every approved call.
// docs/adapters.md — Approval.
import { ContractErrorCode, Limits, ToolErrorCode } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { describeValue } from "../contract/grammar.js";
import { isProxy, ObjectFreeze } from "../contract/primordials.js";
import { errorContent } from "../contract/results.js";
import { cutToCodePoints } from "../contract/serialize.js";

/** A model's call, as the adapters' `needsApproval` option sees it (before it runs). */
export interface ToolgateApprovalRequest {
  readonly toolCallId: string;
  readonly toolName: string;
  /** The arguments as the framework parsed them: model data, not yet validated. */
  readonly arguments: unknown;
}

/**
 * Decides whether a call waits for a person's approval in the framework's own flow: `true`
 * to ask, `false` to run it at once. A throw, or anything but a boolean, asks (fails closed).
 */
export type ToolgateNeedsApproval = (request: ToolgateApprovalRequest) => boolean | PromiseLike<boolean>;

/** `options.needsApproval` as `readOptions` read it (an own data property): a function or absent. */
export function checkNeedsApproval(value: unknown, api: string): ToolgateNeedsApproval | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "function" || isProxy(value)) {
    throw new ToolContractError(
      ContractErrorCode.INVALID_ARGUMENT,
      `${api}: options.needsApproval must be a function, not a Proxy (got ${describeValue(value)})`,
    );
  }
  return value as ToolgateNeedsApproval;
}

/** Runs the operator's predicate; only a plain `false` lets the call skip approval. */
export async function askNeedsApproval(needsApproval: ToolgateNeedsApproval, request: ToolgateApprovalRequest): Promise<boolean> {
  try {
    return (await needsApproval(request)) !== false;
  } catch {
    return true; // an approval policy that fails asks a person rather than letting the call through
  }
}

/**
 * What the model reads for a call a person rejected: toolgate's `TOOL_CALL_DENIED` error
 * content, `{"error":{"code":"TOOL_CALL_DENIED","message":reason}}` (the executor's
 * `beforeExecute` denial reads the same). Give it as the framework's rejection message/reason.
 */
export function toolCallDenied(reason: string): string {
  // As a `beforeExecute` denial's: a non-empty string cut to the string budget, else the generic text.
  const failure =
    typeof reason === "string" && reason.length > 0 ? cutToCodePoints(reason, Limits.MAX_STRING_CODE_POINTS) : DENIED_WITHOUT_REASON;
  return errorContent(ToolErrorCode.CALL_DENIED, failure);
}

const DENIED_WITHOUT_REASON = ObjectFreeze({ text: "the call was denied", cut: false });
