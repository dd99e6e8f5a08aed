// Which TypeBox schema stands behind which validate function. Kept in its own module so
// both `toolgate/typebox` (which records) and `toolgate/pi` (which looks up and, for
// wrapped Pi tools, records too) share one table without exporting the setter publicly.
// docs/adapters.md — Validators, Use it with Pi.
import type { TSchema } from "typebox";
import { WeakMapPrototypeGet, WeakMapPrototypeSet } from "../contract/primordials.js";

const schemas = new WeakMap<object, TSchema>();

/** Remembers that `validate` checks arguments against `schema`. */
export function recordTypeBoxSchema(validate: object, schema: TSchema): void {
  WeakMapPrototypeSet(schemas, validate, schema);
}

/** The schema recorded for `validate`, if it was made from a TypeBox schema. */
export function typeBoxSchemaOf(validate: unknown): TSchema | undefined {
  if ((typeof validate !== "function" && typeof validate !== "object") || validate === null) return undefined;
  return WeakMapPrototypeGet(schemas, validate);
}
