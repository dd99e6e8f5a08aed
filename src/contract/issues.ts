import { ArrayPrototypeJoin, JSONStringify, RegExpPrototypeExec } from "./primordials.js";
import { cutToCodePoints } from "./serialize.js";
import { validateInteger } from "./validators.js";

/** One problem with the arguments: where (a `$.items[2].qty` path) and what. */
export interface ArgumentIssue {
  readonly path: string;
  readonly message: string;
}

/** How many issues an error lists when the caller does not say. */
export const DEFAULT_MAX_LISTED_ISSUES = 8;
/** Upper bound for the `maxIssues` option: the message must stay short whatever is asked. */
export const MAX_LISTED_ISSUES_LIMIT = 64;

const MAX_PATH_CODE_POINTS = 128;
const MAX_ISSUE_MESSAGE_CODE_POINTS = 256;
// Segments beyond what a bounded path line can show are not formatted at all.
const MAX_FORMATTED_PATH_LENGTH = 256;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Reads and checks a `maxIssues` option (a ToolContractError for anything but 1..64). */
export function readMaxIssues(value: unknown, api: string): number {
  if (value === undefined) return DEFAULT_MAX_LISTED_ISSUES;
  validateInteger(value, `${api}: options.maxIssues`, 1, MAX_LISTED_ISSUES_LIMIT);
  return value;
}

/**
 * A path in the arguments as `$.items[2].qty`: an array index as `[2]`, an identifier key
 * as `.key`, any other key JSON-quoted (`$["a b"]`). `$` alone is the arguments object.
 */
export function formatPath(segments: readonly (string | number)[]): string {
  let text = "$";
  for (let index = 0; index < segments.length && text.length < MAX_FORMATTED_PATH_LENGTH; index += 1) {
    const segment = segments[index] as string | number;
    if (typeof segment === "number") {
      text += `[${segment}]`;
      continue;
    }
    const key = cutToCodePoints(segment, MAX_PATH_CODE_POINTS).text;
    text += RegExpPrototypeExec(IDENTIFIER, key) !== null ? `.${key}` : `[${JSONStringify(key)}]`;
  }
  return text;
}

/**
 * "Invalid arguments (N issues):" followed by at most `listed.length` lines
 * "  - $.path: message", and "  - … and K more" when `total` exceeds what is listed.
 * With `exact: false`, `total` is only a lower bound (the library stopped counting) and the
 * text says so.
 */
export function describeIssues(listed: readonly ArgumentIssue[], total: number, exact = true): string {
  const count = `${exact ? "" : "at least "}${total} ${total === 1 ? "issue" : "issues"}`;
  const lines: string[] = [`Invalid arguments (${count}):`];
  for (let index = 0; index < listed.length; index += 1) {
    const issue = listed[index] as ArgumentIssue;
    lines[lines.length] = `  - ${bounded(issue.path, MAX_PATH_CODE_POINTS)}: ${bounded(issue.message, MAX_ISSUE_MESSAGE_CODE_POINTS)}`;
  }
  if (total > listed.length) lines[lines.length] = `  - … and ${exact ? "" : "at least "}${total - listed.length} more`;
  else if (!exact) lines[lines.length] = "  - … and possibly more";
  return ArrayPrototypeJoin(lines, "\n");
}

function bounded(text: string, maxCodePoints: number): string {
  const cut = cutToCodePoints(text, maxCodePoints);
  return cut.cut ? cut.text + "…" : cut.text;
}
