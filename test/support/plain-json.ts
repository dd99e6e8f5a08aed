// Reference JSON helpers for data the test owns (plain objects and arrays, read through
// plain property access): canonical sorted-key JSON, and the node count and container depth
// the serializer's budgets are stated in.

/** keys sorted (UTF-16 order), -0 -> 0: what JSON.parse(content) must deep-equal. */
export function sortedJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedJson);
  if (value !== null && typeof value === "object") {
    const copy: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      Object.defineProperty(copy, key, {
        value: sortedJson((value as Record<string, unknown>)[key]),
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
    return copy;
  }
  return Object.is(value, -0) ? 0 : value;
}

/** Canonical JSON (sorted keys), read through plain property access: for data we own. */
export function canon(value: unknown): string {
  if (Array.isArray(value)) return "[" + value.map(canon).join(",") + "]";
  if (value !== null && typeof value === "object") {
    return (
      "{" +
      Object.keys(value)
        .sort()
        .map((key) => JSON.stringify(key) + ":" + canon((value as Record<string, unknown>)[key]))
        .join(",") +
      "}"
    );
  }
  return JSON.stringify(value) ?? "null";
}

export function jsonNodes(value: unknown): number {
  if (Array.isArray(value)) return 1 + value.reduce((sum: number, member) => sum + jsonNodes(member), 0);
  if (value !== null && typeof value === "object")
    return 1 + Object.values(value).reduce((sum: number, member) => sum + jsonNodes(member), 0);
  return 1;
}
export function jsonContainerDepth(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  return 1 + Object.values(value).reduce((deepest: number, member) => Math.max(deepest, jsonContainerDepth(member)), 0);
}
