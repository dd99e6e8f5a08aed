// Assertion helpers shared by the tests: the invariants every result and every content string
// must satisfy (docs/contract.md, rule 12 — content cap, rule 13 — frozen, linked results;
// rule 4 — call snapshot for INVALID_TOOL_CALL), and the ToolContractError a call or a create() rejects with.
import { ContractErrorCode, isToolContractError, Limits, type ToolContractError, type ToolResultMessage } from "toolgate";
import { expect } from "vitest";
import { codePoints, settle } from "./helpers.js";

const MAX = Limits.MAX_CONTENT_CODE_POINTS;
const MARKER = Limits.TRUNCATION_MARKER;

/** A lone high surrogate in D800-DB7F: generated inputs only hold those inside pairs. */
function hasSplitPair(text: string): boolean {
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    if (unit >= 0xd800 && unit <= 0xdb7f) {
      const next = text.charCodeAt(index + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return true;
      index += 1;
    }
  }
  return false;
}

/** The content invariants of rule 12 — content cap that hold for every input. */
export function expectBoundedContent(content: string, inputWellFormed: boolean): void {
  const length = codePoints(content);
  expect(length).toBeLessThanOrEqual(MAX);
  if (content.endsWith(MARKER)) expect(length).toBe(MAX);
  expect(hasSplitPair(content)).toBe(false);
  if (inputWellFormed) expect(content.isWellFormed()).toBe(true);
}

export function expectLinkedResult(result: ToolResultMessage, id: unknown, name: unknown): void {
  expect(Object.isFrozen(result)).toBe(true);
  expect(Object.keys(result).sort()).toEqual(["content", "id", "isError", "role", "toolCallId", "toolName"]);
  expect(result.role).toBe("toolResult");
  expect(typeof id).toBe("string");
  expect(result.toolCallId).toBe(id);
  expect(result.toolName).toBe(name);
  expect(result.id).toBe("tool-result-" + String(id));
  expect(typeof result.isError).toBe("boolean");
  expect(typeof result.content).toBe("string");
  expect(codePoints(result.content)).toBeLessThanOrEqual(MAX);
  if (result.content.endsWith(MARKER)) expect(codePoints(result.content)).toBe(MAX);
}

export function expectInvalidCall(error: unknown): void {
  expect(isToolContractError(error)).toBe(true);
  expect((error as { code?: unknown }).code).toBe(ContractErrorCode.INVALID_TOOL_CALL);
}

/**
 * The ToolContractError `pending` rejects with. Fails the test when it resolves instead, after
 * closing what it resolved to if that has a close() (an executor or host must not outlive it).
 */
export async function contractError(pending: Promise<unknown>): Promise<ToolContractError> {
  const settled = await settle(pending);
  if (settled.ok) {
    const made = settled.value as { close?: unknown } | null | undefined;
    if (typeof made?.close === "function") await (made as { close(): Promise<void> }).close();
    throw new Error("expected a rejection with a ToolContractError");
  }
  expect(isToolContractError(settled.reason)).toBe(true);
  return settled.reason as ToolContractError;
}

/** The ToolContractError with `code` that `pending` rejects with (fails the test when it resolves). */
export async function expectContractError(pending: Promise<unknown>, code: string): Promise<ToolContractError> {
  const error = await contractError(pending);
  expect(error.code).toBe(code);
  return error;
}
