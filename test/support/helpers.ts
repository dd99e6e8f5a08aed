// Shared test helpers: calls, temp files, polling. No assertions live here.
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JsonValue, ToolCall, ToolResultMessage } from "toolgate";

export function call(name: string, args: Record<string, JsonValue> = {}, id = `call-${name}`): ToolCall {
  return { type: "toolCall", id, name, arguments: args };
}

export const neverAborted = (): AbortSignal => new AbortController().signal;

export const codePoints = (text: string): number => [...text].length;

export function errorOf(result: ToolResultMessage): { code: string; message: string } {
  return (JSON.parse(result.content) as { error: { code: string; message: string } }).error;
}

/** Compiled fixture modules (the build compiles test/fixtures to dist/test/fixtures). */
export const fixture = (name: string): URL => new URL(`../../dist/test/fixtures/${name}.js`, import.meta.url);

/** A fresh directory for files that tools write as observable side effects. */
export const scratchDir = (): string => mkdtempSync(join(tmpdir(), "toolgate-test-"));

/** Waits until `path` exists (a tool's side effect in another thread), or gives up after `ms`. */
export async function waitForFile(path: string, ms = 5000): Promise<string | undefined> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    // Non-empty: a writer in another thread or process may have created the file and not yet written it.
    if (existsSync(path)) {
      const text = readFileSync(path, "utf8");
      if (text.length > 0) return text;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return undefined;
}

/** Settles `promise` and reports how, for assertions on rejections by identity. */
export async function settle<T>(promise: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; reason: unknown }> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (reason: unknown) => ({ ok: false as const, reason }),
  );
}
