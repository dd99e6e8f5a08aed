// A durable call's identity: its key, made from the run id and the call id, and its
// fingerprint, made from the tool name and toolgate's frozen snapshot of the arguments.
// Both are SHA-256 in hex: bounded and safe as a Redis key part whatever the ids hold.
// docs/durable.md — Keys and fingerprints.
import { createHash } from "node:crypto";
import type { JsonValue } from "../contract/call.js";
import { ArrayIsArray, ArrayPrototypeJoin, ArrayPrototypeSort, JSONStringify, ObjectKeys } from "../contract/primordials.js";

/**
 * The key of (runId, callId): both hashed as their UTF-16 code units (so two ids that differ
 * only in a lone surrogate stay two keys), each after its length, so no pair can be read as
 * another pair.
 */
export function durableKeyOf(runId: string, callId: string): string {
  const hash = createHash("sha256");
  hash.update(`${runId.length}:`, "latin1");
  hash.update(runId, "utf16le");
  hash.update(`:${callId.length}:`, "latin1");
  hash.update(callId, "utf16le");
  return hash.digest("hex");
}

/** What a tool sees as `context.idempotencyKey`: one per key, the same for every attempt and process. */
export function idempotencyKeyOf(key: string): string {
  return `tg:${key}`;
}

/**
 * The fingerprint of a call: SHA-256 of the tool name and the canonical JSON of its arguments
 * (RFC 8785's rules as they apply to a snapshot: members sorted by their UTF-16 code units,
 * numbers in ECMAScript's shortest spelling, -0 as 0), so the same JSON with another key order
 * or another spelling of a number (1.0, 1e0) is the same call. The snapshot is frozen own data
 * of JSON values only (the call snapshot made it), nested at most the argument budget's
 * maxDepth (1024 at most), so the walk reads no accessor and cannot run out of stack.
 */
export function fingerprintOf(toolName: string, args: Readonly<Record<string, JsonValue>>): string {
  const parts: string[] = [];
  canonical(args, parts);
  const hash = createHash("sha256");
  hash.update(JSONStringify(toolName), "utf16le");
  hash.update("\n", "latin1");
  hash.update(ArrayPrototypeJoin(parts, ""), "utf16le");
  return hash.digest("hex");
}

function canonical(value: JsonValue, parts: string[]): void {
  if (value === null || typeof value !== "object") {
    // JSON.stringify spells a number the ECMAScript way, -0 as "0"; a string with RFC 8785's escapes.
    parts[parts.length] = JSONStringify(value);
    return;
  }
  if (ArrayIsArray(value)) {
    parts[parts.length] = "[";
    for (let index = 0; index < value.length; index += 1) {
      if (index > 0) parts[parts.length] = ",";
      canonical(value[index] as JsonValue, parts);
    }
    parts[parts.length] = "]";
    return;
  }
  // Sorted by code units (the default sort of strings), as RFC 8785 asks.
  const keys = ArrayPrototypeSort(ObjectKeys(value));
  parts[parts.length] = "{";
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index] as string;
    if (index > 0) parts[parts.length] = ",";
    parts[parts.length] = JSONStringify(key);
    parts[parts.length] = ":";
    canonical(value[key] as JsonValue, parts);
  }
  parts[parts.length] = "}";
}
