// The serializer in a hostile realm (docs/contract.md, rule 10 — safe serialization, and the
// primordials habit under "How the code keeps the rules"): with the built-ins it could be
// tempted to use patched to count every call (prototypes, iterators, JSON,
// Function.prototype), serializing any generated value consults none of them and gives the
// same outcome as in a clean realm. A file of its own: patching prototypes over and over slows
// the engine's later property lookups, and no other test should pay for it.
import fc from "fast-check";
import { type SerializationOutcome, serializeToolOutput } from "toolgate";
import { afterEach, describe, expect, it } from "vitest";
import { anyDesc, buildFresh, RUNS } from "../support/hostile-values.js";
import { hits, resetHits } from "../support/user-code.js";

afterEach(resetHits);

describe("rule 10 — safe serialization: serializeToolOutput in a realm with patched built-ins (property)", () => {
  it("never consults patched built-ins (a hostile realm): prototypes, iterators, JSON, Function.prototype", () => {
    let envHits = 0;
    const envLog: string[] = [];
    const apply = Reflect.apply;
    const defineProperty = Object.defineProperty;
    const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
    const targets: [object, PropertyKey][] = [];
    const methods = (owner: object, names: PropertyKey[]): void => {
      for (const name of names) targets.push([owner, name]);
    };
    methods(Object.prototype, ["toJSON", "toString", "valueOf", "hasOwnProperty"]);
    methods(Object, ["keys", "getOwnPropertyDescriptor", "getPrototypeOf", "hasOwn", "entries", "values"]);
    methods(Array.prototype, [Symbol.iterator, "toJSON", "sort", "join", "map", "forEach", "push", "slice", "keys", "values", "entries"]);
    methods(Array, ["isArray"]);
    methods(Object.getPrototypeOf([][Symbol.iterator]()) as object, ["next"]);
    methods(Map.prototype, [Symbol.iterator, "entries", "keys", "values", "forEach", "get", "has", "size"]);
    methods(Object.getPrototypeOf(new Map().entries()) as object, ["next"]);
    methods(Set.prototype, [Symbol.iterator, "entries", "keys", "values", "forEach", "has", "size"]);
    methods(Object.getPrototypeOf(new Set().values()) as object, ["next"]);
    methods(Date.prototype, ["toJSON", "toISOString", "getTime", "valueOf", "toString"]);
    methods(BigInt.prototype, ["toString", "valueOf", "toLocaleString"]);
    methods(Number.prototype, ["toString", "valueOf"]);
    methods(Number, ["isFinite"]);
    methods(String.prototype, ["toWellFormed", "slice", "charCodeAt", "codePointAt", Symbol.iterator, "toString", "valueOf"]);
    methods(Symbol.prototype, ["toString", "valueOf"]);
    methods(RegExp.prototype, ["exec", "test"]);
    methods(JSON, ["stringify"]);
    methods(Function.prototype, ["call", "apply", "bind", "toString"]);
    const patches = targets.map(([owner, name]) => {
      const original = getOwnPropertyDescriptor(owner, name);
      const label = String(name);
      let patched: PropertyDescriptor;
      if (original?.get !== undefined) {
        const get = original.get;
        patched = {
          get(this: unknown) {
            envHits += 1;
            if (envLog.length < 8) envLog[envLog.length] = `get ${label}`;
            return apply(get, this, []);
          },
          configurable: true,
        };
      } else {
        const inner = original?.value as ((...args: unknown[]) => unknown) | undefined;
        patched = {
          value: function patchedBuiltin(this: unknown, ...args: unknown[]) {
            envHits += 1;
            if (envLog.length < 8) envLog[envLog.length] = label;
            return inner === undefined ? undefined : apply(inner, this, args);
          },
          writable: true,
          configurable: true,
        };
      }
      return { owner, name, original, patched };
    });
    // Indexed loops only: for-of would itself go through the patched iterators.
    const patch = (): void => {
      for (let index = 0; index < patches.length; index += 1) {
        const p = patches[index] as (typeof patches)[number];
        defineProperty(p.owner, p.name, p.patched);
      }
    };
    const restore = (): void => {
      for (let index = 0; index < patches.length; index += 1) {
        const p = patches[index] as (typeof patches)[number];
        if (p.original === undefined) delete (p.owner as Record<PropertyKey, unknown>)[p.name];
        else defineProperty(p.owner, p.name, p.original);
      }
    };
    fc.assert(
      fc.property(anyDesc, (d) => {
        const value = buildFresh(d);
        const expected = serializeToolOutput(value);
        envHits = 0;
        envLog.length = 0;
        let outcome: SerializationOutcome;
        let counted = -1;
        try {
          patch();
          outcome = serializeToolOutput(value);
          counted = envHits;
        } finally {
          restore();
        }
        expect(envLog).toEqual([]);
        expect(counted).toBe(0);
        expect(hits).toBe(0);
        expect(outcome).toStrictEqual(expected);
      }),
      { numRuns: RUNS },
    );
  });
});
