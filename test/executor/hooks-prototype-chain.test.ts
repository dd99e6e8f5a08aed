// Hooks are read through their prototype chain (a class instance's methods are inherited), and
// every link of that chain is read without running anyone's code: a Proxy anywhere on it is
// refused when the executor is made, as a Proxy hooks object is, never walked past with the
// hooks beyond it silently skipped (issue 41, defect 5). So is a chain too long to read whole.
// docs/operations.md — Hooks: approval and telemetry.
import { ContractErrorCode, InProcessToolExecutor, isToolContractError, type ToolExecutorHooks, ToolRegistry } from "toolgate";
import { WorkerToolExecutor } from "toolgate/worker";
import { describe, expect, it } from "vitest";
import { call, neverAborted } from "../support/helpers.js";
import { refusalOf } from "../support/refusal.js";

const registry = () =>
  new ToolRegistry([
    { name: "pay", description: "Pays.", validate: (args: unknown) => ({ ok: true as const, value: args }), execute: () => "paid" },
  ]);

const deny = () => ({ allow: false as const, reason: "not without approval" });

/** A Proxy that counts every trap that runs on it (none may). */
function countingProxy<T extends object>(target: T): { proxy: T; traps: string[] } {
  const traps: string[] = [];
  const handler: ProxyHandler<T> = {};
  for (const trap of ["get", "has", "ownKeys", "getOwnPropertyDescriptor", "getPrototypeOf", "defineProperty", "set", "apply"] as const) {
    (handler as Record<string, unknown>)[trap] = (...args: unknown[]) => {
      traps.push(trap);
      return (Reflect[trap] as (...rest: unknown[]) => unknown)(...args);
    };
  }
  return { proxy: new Proxy(target, handler), traps };
}

/** The hooks, each with a Proxy somewhere on its chain and `beforeExecute` (a denial) beyond it. */
function hostileChains() {
  const direct = countingProxy({ beforeExecute: deny });
  const created = Object.create(direct.proxy) as ToolExecutorHooks;

  const base = countingProxy({ beforeExecute: deny });
  class Base {}
  Object.setPrototypeOf(Base.prototype, base.proxy);
  class Hooks extends Base {}
  const instance = new Hooks() as ToolExecutorHooks;

  const far = countingProxy({ beforeExecute: deny });
  const threeUp = Object.create(Object.create(Object.create(far.proxy))) as ToolExecutorHooks;

  return [
    ["Object.create(new Proxy({ beforeExecute }, {}))", created, direct.traps, 1],
    ["a class instance whose base prototype is a Proxy", instance, base.traps, 3],
    ["a Proxy three links up", threeUp, far.traps, 3],
  ] as const;
}

describe("docs/operations.md — Hooks: a Proxy anywhere on the hooks' prototype chain is refused (issue 41, defect 5)", () => {
  for (const [label, hooks, traps, links] of hostileChains()) {
    it(`${label}: refused (INVALID_ARGUMENT) when the executor is made, without any trap running`, () => {
      expect(refusalOf(() => new InProcessToolExecutor(registry(), { hooks }))).toEqual([
        ContractErrorCode.INVALID_ARGUMENT,
        `options.hooks must have no Proxy on its prototype chain (got one ${links} links up)`,
      ]);
      expect(traps).toEqual([]);
    });
  }

  it("the worker pool reads hooks the same way: refused before a thread starts", async () => {
    const [, hooks, traps] = hostileChains()[1];
    const modules = [new URL("../fixtures/framework-e2e-tools.mjs", import.meta.url).href];
    const made = Promise.resolve()
      .then(() => WorkerToolExecutor.create({ modules, hooks, minThreads: 1, maxThreads: 1 }))
      .then(
        async (executor) => {
          await executor.close();
          return "accepted";
        },
        (error: unknown) => (isToolContractError(error) ? [error.code, error.message] : error),
      );
    expect(await made).toEqual([
      ContractErrorCode.INVALID_ARGUMENT,
      "options.hooks must have no Proxy on its prototype chain (got one 3 links up)",
    ]);
    expect(traps).toEqual([]);
  });

  it("a prototype chain longer than 32 links is refused, not cut short (a hook beyond the cut would be skipped)", () => {
    let hooks: object = { beforeExecute: deny };
    for (let link = 0; link < 40; link += 1) hooks = Object.create(hooks);
    expect(refusalOf(() => new InProcessToolExecutor(registry(), { hooks: hooks as ToolExecutorHooks }))).toEqual([
      ContractErrorCode.INVALID_ARGUMENT,
      "options.hooks has a prototype chain longer than 32 links",
    ]);
  });

  it("without a Proxy, an inherited beforeExecute is found and decides, however far up (within 32 links)", async () => {
    class Guard {
      beforeExecute() {
        return deny();
      }
    }
    class Audited extends Guard {}
    let hooks: object = new (class extends Audited {})();
    for (let link = 0; link < 25; link += 1) hooks = Object.create(hooks);
    const executor = new InProcessToolExecutor(registry(), { hooks: hooks as ToolExecutorHooks });
    const result = await executor.executeToolCall(call("pay"), neverAborted());
    expect(JSON.parse(result.content)).toEqual({ error: { code: "TOOL_CALL_DENIED", message: "not without approval" } });
    await executor.close();
  });
});
