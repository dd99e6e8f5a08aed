// The call snapshot is isolated from its caller (docs/contract.md, rule 4 — call snapshot):
// whatever the caller does to its call object and the arguments under it — while the
// validator runs, and after executeToolCall returned its promise — the validator and the
// tool see the arguments as they were when the call started.
import fc from "fast-check";
import { defineTool, executeToolCall, serializeToolOutput, ToolRegistry } from "toolgate";
import { afterEach, describe, expect, it } from "vitest";
import { expectLinkedResult } from "../support/assertions.js";
import { settle } from "../support/helpers.js";
import { idString } from "../support/hostile-calls.js";
import { RUNS } from "../support/hostile-values.js";
import { canon } from "../support/plain-json.js";
import { countingFunction, hits, resetHits } from "../support/user-code.js";

afterEach(resetHits);

describe("rule 4 — call snapshot: mutating the caller's call changes nothing seen (property)", () => {
  type MutationOp = "set" | "delete" | "push" | "clear" | "getter" | "proto" | "freeze";
  interface Mutation {
    readonly target: number;
    readonly op: MutationOp;
    readonly pick: number;
    readonly key: string;
    readonly value: unknown;
  }
  const mutation: fc.Arbitrary<Mutation> = fc.record({
    target: fc.nat(),
    op: fc.constantFrom<MutationOp>("set", "set", "delete", "push", "clear", "getter", "proto", "freeze"),
    pick: fc.nat(),
    key: fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom("id", "name", "type", "arguments", "__proto__", "0")),
    value: fc.jsonValue({ maxDepth: 2 }),
  });

  /** The caller's call object and every container under its arguments, in a stable order. */
  function containersOf(root: object): object[] {
    const found: object[] = [];
    const visit = (value: unknown): void => {
      if (value === null || typeof value !== "object" || found.includes(value)) return;
      found.push(value);
      for (const key of Object.keys(value)) {
        const descriptor = Object.getOwnPropertyDescriptor(value, key); // never through a getter we added
        if (descriptor !== undefined && "value" in descriptor) visit(descriptor.value);
      }
    };
    visit(root);
    return found;
  }

  function mutate(root: object, list: readonly Mutation[]): void {
    for (const m of list) {
      const containers = containersOf(root);
      const target = containers[m.target % containers.length] as object;
      const keys = Object.keys(target);
      const existing = keys.length > 0 && m.pick % 2 === 0 ? (keys[m.pick % keys.length] as string) : m.key;
      const data = (value: unknown): PropertyDescriptor => ({ value, writable: true, enumerable: true, configurable: true });
      switch (m.op) {
        case "set":
          Reflect.defineProperty(target, existing, data(m.value));
          break;
        case "delete":
          Reflect.deleteProperty(target, existing);
          break;
        case "push":
          if (Array.isArray(target)) Reflect.set(target, target.length, m.value);
          else Reflect.defineProperty(target, m.key + "+", data(m.value));
          break;
        case "clear":
          if (Array.isArray(target)) Reflect.set(target, "length", 0);
          else for (const key of keys) Reflect.deleteProperty(target, key);
          break;
        case "getter":
          Reflect.defineProperty(target, existing, {
            get: countingFunction("getter added after the call started"),
            enumerable: true,
            configurable: true,
          });
          break;
        case "proto":
          Reflect.setPrototypeOf(target, m.pick % 2 === 0 ? null : { injected: m.value });
          break;
        case "freeze":
          Object.freeze(target);
          break;
      }
    }
  }

  const callArguments = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 6 });

  it("mutating the caller's call (during validation and after the call returned) changes nothing the validator or tool sees", async () => {
    await fc.assert(
      fc.asyncProperty(
        callArguments,
        idString.filter((id) => id.length > 0),
        fc.array(mutation, { maxLength: 6 }),
        fc.array(mutation, { maxLength: 6 }),
        async (args, id, duringValidation, afterReturn) => {
          // A private copy: the property mutates it, and fast-check may replay generated values.
          const call = { type: "toolCall", id, name: "recorder", arguments: structuredClone(args) };
          const original = canon(args);
          const seen: { validate?: string; validateRef?: unknown; executeSync?: string; executeLate?: string; contextId?: string } = {};
          let release!: () => void;
          const gate = new Promise<void>((resolve) => {
            release = resolve;
          });
          const registry = new ToolRegistry([
            defineTool({
              name: "recorder",
              description: "records what it sees",
              validate: (received: unknown) => {
                seen.validate = canon(received);
                seen.validateRef = received;
                mutate(call, duringValidation); // the caller changes its call while the boundary runs
                return { ok: true as const, value: received };
              },
              execute: async (received: unknown, context) => {
                seen.executeSync = canon(received);
                seen.contextId = context.toolCallId;
                await gate; // the caller mutates again before the tool looks a second time
                seen.executeLate = canon(received);
                return received;
              },
            }),
          ]);
          resetHits();
          const pending = settle(executeToolCall(registry, call, new AbortController().signal));
          mutate(call, afterReturn);
          release();
          const settled = await pending;
          expect(hits).toBe(0);
          if (!settled.ok) throw settled.reason;
          expect(seen.validate).toBe(original);
          expect(canon(seen.validateRef)).toBe(original); // what the validator got never changed later
          expect(seen.executeSync).toBe(original);
          expect(seen.executeLate).toBe(original);
          expect(seen.contextId).toBe(id);
          expectLinkedResult(settled.value, id, "recorder");
          const direct = serializeToolOutput(JSON.parse(original));
          expect(settled.value.isError).toBe(!direct.ok);
          if (direct.ok) expect(settled.value.content).toBe(direct.content);
        },
      ),
      { numRuns: RUNS },
    );
  });
});
