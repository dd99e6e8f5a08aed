// The user-code counter for property tests. Every hook planted in a generated hostile value
// (getter, setter, Proxy trap, toJSON, own Map/Set method, function, class method) calls
// hit(); the boundary under test must never run one, so a test asserts the count stays 0.
// Register `afterEach(resetHits)` in each test file that uses it.

/** How many hooks ran since the last reset (a live binding). */
export let hits = 0;
/** The first 8 hooks that ran, by where they were planted. */
export const hitLog: string[] = [];
export function hit(where: string): void {
  hits += 1;
  if (hitLog.length < 8) hitLog[hitLog.length] = where; // no method call: built-ins may be patched
}
export function resetHits(): void {
  hits = 0;
  hitLog.length = 0;
}

export function countingFunction(where: string): () => string {
  return function counted() {
    hit(where);
    return "user code ran";
  };
}

/** A Proxy handler whose every trap counts and then behaves like the target. */
export function countingHandler(where: string): ProxyHandler<object> {
  const traps = [
    "apply",
    "construct",
    "defineProperty",
    "deleteProperty",
    "get",
    "getOwnPropertyDescriptor",
    "getPrototypeOf",
    "has",
    "isExtensible",
    "ownKeys",
    "preventExtensions",
    "set",
    "setPrototypeOf",
  ] as const;
  const handler: Record<string, unknown> = {};
  for (const trap of traps) {
    const reflect = Reflect[trap] as (...args: unknown[]) => unknown;
    handler[trap] = (...args: unknown[]) => {
      hit(`${where} trap ${trap}`);
      return reflect(...args);
    };
  }
  return handler as ProxyHandler<object>;
}
