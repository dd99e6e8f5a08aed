// The two error classes that cross the boundary as rejections, and how they are recognised.
// docs/contract.md: rule 9 — failure classification.
import type { ToolContractErrorCode } from "./constants.js";
import {
  globalThisRef,
  isProxy,
  isWeakSet,
  ObjectDefineProperty,
  ObjectGetOwnPropertyDescriptor,
  SymbolFor,
  WeakSetPrototypeAdd,
  WeakSetPrototypeHas,
} from "./primordials.js";

// Ownership of ToolContractError is module-local on purpose: only errors this copy of
// toolgate made are "ours"; a look-alike thrown by a tool is just an ordinary error.
const contractErrors = new WeakSet<object>();

/**
 * The caller broke the contract (a malformed call, a bad definition, a duplicate name,
 * a wrong argument to the API). Thrown or used as a rejection; never turned into a result.
 */
export class ToolContractError extends Error {
  /** Stable, machine-readable reason. */
  readonly code: ToolContractErrorCode;

  constructor(code: ToolContractErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    WeakSetPrototypeAdd(contractErrors, this);
  }
}
ObjectDefineProperty(ToolContractError.prototype, "name", { value: "ToolContractError", writable: true, configurable: true });

/** True only for errors made by this module's `ToolContractError` constructor. */
export function isToolContractError(value: unknown): value is ToolContractError {
  return typeof value === "object" && value !== null && WeakSetPrototypeHas(contractErrors, value);
}

// NonRecoverableToolError instances are registered realm-wide, under a Symbol.for key, so a
// second (reloaded or duplicated) copy of this module recognises the first copy's errors.
// Any code in the realm can reach this registry: it is a classification aid, not a security
// boundary.
const REGISTRY_KEY = SymbolFor("toolgate.NonRecoverableToolError.registry");

function realmRegistry(): WeakSet<object> {
  const existing = ObjectGetOwnPropertyDescriptor(globalThisRef, REGISTRY_KEY);
  const value: unknown = existing !== undefined && "value" in existing ? existing.value : undefined;
  if (isWeakSet(value) && !isProxy(value)) return value as WeakSet<object>;
  const created = new WeakSet<object>();
  if (existing === undefined) {
    ObjectDefineProperty(globalThisRef, REGISTRY_KEY, { value: created, writable: false, enumerable: false, configurable: false });
  }
  // If something else squats on the key, this copy keeps a registry of its own.
  return created;
}
const nonRecoverableErrors = realmRegistry();

/**
 * A verified invariant violation or programming error that must stop the agent run.
 * Thrown by a tool (or its validator), it escapes the boundary: the call rejects with it
 * instead of producing an error result. Subclasses are recognised too; objects that only
 * copy its fields or prototype are not.
 */
export class NonRecoverableToolError extends Error {
  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
    WeakSetPrototypeAdd(nonRecoverableErrors, this);
  }
}
ObjectDefineProperty(NonRecoverableToolError.prototype, "name", {
  value: "NonRecoverableToolError",
  writable: true,
  configurable: true,
});

/** True only for errors made by a `NonRecoverableToolError` constructor of this realm. */
export function isNonRecoverableToolError(value: unknown): value is NonRecoverableToolError {
  return typeof value === "object" && value !== null && WeakSetPrototypeHas(nonRecoverableErrors, value);
}
