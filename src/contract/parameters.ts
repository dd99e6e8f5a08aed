// Schema-first definitions: what stands behind a tool's arguments. A definition gives
// either `validate` (a function) or `parameters` (a Standard Schema v1), never both, and
// optionally `jsonSchema`, the JSON Schema shown to the model. Everything is read once, at
// definition time; the JSON Schema a library generates is made on first use and kept.
// docs/contract.md: rule 1 — definition snapshot.
import { ContractErrorCode } from "./constants.js";
import { ToolContractError } from "./errors.js";
import { describeValue } from "./grammar.js";
import { DEFAULT_MAX_LISTED_ISSUES } from "./issues.js";
import {
  ArrayIsArray,
  ArrayPrototype,
  isProxy,
  NumberIsFinite,
  ObjectDefineProperty,
  ObjectFreeze,
  ObjectGetOwnPropertyDescriptor,
  ObjectGetPrototypeOf,
  ObjectHasOwn,
  ObjectPrototype,
  ReflectOwnKeys,
  WeakMapPrototypeGet,
  WeakMapPrototypeSet,
} from "./primordials.js";
import { readStandardSchema, standardSchemaValidator } from "./standard-schema.js";
import type { ValidationDecision } from "./tools.js";

/** A JSON Schema object (draft 2020-12), deeply frozen when toolgate hands it out. */
export type JsonSchema = { readonly [key: string]: unknown };

/** The JSON Schema draft every generated schema targets. */
export const JSON_SCHEMA_TARGET = "draft-2020-12";

/** Where a tool's JSON Schema comes from: given (already copied), or made on first use. */
interface SchemaSource {
  readonly given: JsonSchema | undefined;
  readonly generate: (() => unknown) | undefined;
}

/** What `defineTool` keeps of a definition's schema fields. */
export interface ToolArguments {
  /** The validator the snapshot wraps: the definition's own (unchecked until called), or one made from `parameters`. */
  readonly validate: (args: unknown) => ValidationDecision<unknown>;
  readonly source: SchemaSource;
}

const sources = new WeakMap<object, SchemaSource>();
const generated = new WeakMap<object, JsonSchema>();
// JSON Schemas that validator factories (validatorFromTypeBox) know for the functions they make.
const validatorSchemas = new WeakMap<object, () => unknown>();

// Bounds on a JSON Schema copy: deep or huge schemas are refused, not walked without end.
const MAX_SCHEMA_DEPTH = 64;
const MAX_SCHEMA_NODES = 20_000;

/**
 * Reads the schema fields of the definition of tool `name` (values already read once, as
 * own properties): exactly one of `validate` / `parameters`, and `jsonSchema` when given.
 * Throws ToolContractError(INVALID_TOOL_DEFINITION) naming the tool otherwise.
 */
export function readToolArguments(name: string, validate: unknown, parameters: unknown, jsonSchema: unknown): ToolArguments {
  if (validate !== undefined && parameters !== undefined) {
    invalid(`tool "${name}": give either "validate" or "parameters", not both`);
  }
  const given = jsonSchema === undefined ? undefined : copyJsonSchema(jsonSchema, `tool "${name}": jsonSchema`);
  if (parameters !== undefined) {
    if (looksLikeTypeBox(parameters)) {
      invalid(`tool "${name}": parameters is a TypeBox schema; wrap it with typeboxParameters(schema) from "toolgate/typebox"`);
    }
    const parts = readStandardSchema(parameters, `tool "${name}": parameters`);
    const input = parts.jsonSchemaInput;
    return {
      validate: standardSchemaValidator(parts, DEFAULT_MAX_LISTED_ISSUES),
      source: { given, generate: input === undefined ? undefined : () => input({ target: JSON_SCHEMA_TARGET }) },
    };
  }
  if (validate === undefined) {
    invalid(`tool "${name}": needs an own "validate" function or an own "parameters" schema (inherited ones are not read)`);
  }
  if (typeof validate !== "function" || isProxy(validate)) invalid(`tool "${name}": validate must be a function`);
  return { validate: validate as ToolArguments["validate"], source: { given, generate: WeakMapPrototypeGet(validatorSchemas, validate) } };
}

/** Remembers where the JSON Schema of a `defineTool` snapshot comes from. */
export function recordToolSchema(tool: object, source: SchemaSource): void {
  WeakMapPrototypeSet(sources, tool, source);
}

/** For validator factories: the JSON Schema of the arguments `validate` accepts. */
export function recordValidatorJsonSchema(validate: object, schema: () => unknown): void {
  WeakMapPrototypeSet(validatorSchemas, validate, schema);
}

/**
 * The JSON Schema of a tool snapshot (frozen; the same object on every call), or
 * `undefined` when it has none. A library that cannot describe its schema gives a
 * ToolContractError(INVALID_TOOL_DEFINITION) naming the tool.
 */
export function toolJsonSchema(tool: { readonly name: string }): JsonSchema | undefined {
  const source = WeakMapPrototypeGet(sources, tool);
  if (source === undefined) return undefined;
  if (source.given !== undefined) return source.given;
  if (source.generate === undefined) return undefined;
  const cached = WeakMapPrototypeGet(generated, tool);
  if (cached !== undefined) return cached;
  let schema: unknown;
  try {
    schema = source.generate();
  } catch (error) {
    throw new ToolContractError(
      ContractErrorCode.INVALID_TOOL_DEFINITION,
      `tool "${tool.name}": its schema library could not make a JSON Schema`,
      {
        cause: error,
      },
    );
  }
  const copy = copyJsonSchema(schema, `tool "${tool.name}": the generated JSON Schema`);
  WeakMapPrototypeSet(generated, tool, copy);
  return copy;
}

/**
 * A deeply frozen copy of a JSON Schema: plain objects, arrays and JSON primitives only,
 * read through own data properties. Symbol-keyed and non-enumerable properties (TypeBox's
 * `~kind` markers) are left out, as JSON leaves them out; an accessor, a Proxy, a function,
 * a cycle, or more than the depth and size bounds is refused with INVALID_TOOL_DEFINITION.
 */
export function copyJsonSchema(value: unknown, what: string): JsonSchema {
  if (typeof value !== "object" || value === null || ArrayIsArray(value)) invalid(`${what} must be a JSON Schema object`);
  return copyNode({ what, ancestors: [], nodes: 0 }, value, 0) as JsonSchema;
}

/** One schema copy's state: what it is called in messages, the containers above, the values counted. */
interface SchemaCopy {
  readonly what: string;
  readonly ancestors: object[];
  nodes: number;
}

function copyNode(walk: SchemaCopy, value: unknown, depth: number): unknown {
  const { what, ancestors } = walk;
  walk.nodes += 1;
  if (walk.nodes > MAX_SCHEMA_NODES) invalid(`${what} has more than ${MAX_SCHEMA_NODES} values`);
  if (typeof value === "string" || typeof value === "boolean" || value === null) return value;
  if (typeof value === "number") {
    if (!NumberIsFinite(value)) invalid(`${what} holds a number that is not finite`);
    return value;
  }
  if (typeof value !== "object") invalid(`${what} holds ${describeValue(value)}, which is not JSON`);
  if (isProxy(value)) invalid(`${what} holds a Proxy`);
  if (depth >= MAX_SCHEMA_DEPTH) invalid(`${what} nests deeper than ${MAX_SCHEMA_DEPTH} levels`);
  for (let index = 0; index < depth; index += 1) if (ancestors[index] === value) invalid(`${what} is circular`);
  ancestors[depth] = value;
  const prototype: unknown = ObjectGetPrototypeOf(value);
  if (ArrayIsArray(value)) {
    if (prototype !== ArrayPrototype) invalid(`${what} holds an array with an unusual prototype`);
    const length = value.length;
    const copy: unknown[] = [];
    for (let index = 0; index < length; index += 1) {
      const descriptor = ObjectGetOwnPropertyDescriptor(value, index);
      if (descriptor === undefined || !ObjectHasOwn(descriptor, "value")) invalid(`${what} holds an array with a hole or an accessor`);
      copy[index] = copyNode(walk, descriptor.value, depth + 1);
    }
    return ObjectFreeze(copy);
  }
  if (prototype !== ObjectPrototype && prototype !== null) invalid(`${what} holds an object that is not a plain object`);
  const keys = ReflectOwnKeys(value);
  const copy: Record<string, unknown> = {};
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index];
    if (typeof key !== "string") continue;
    const descriptor = ObjectGetOwnPropertyDescriptor(value, key);
    if (descriptor === undefined || descriptor.enumerable !== true) continue;
    if (!ObjectHasOwn(descriptor, "value")) invalid(`${what} has an accessor at "${key}"`);
    if (descriptor.value === undefined) continue;
    // defineProperty: "__proto__" and keys with setters up the chain stay ordinary keys.
    ObjectDefineProperty(copy, key, {
      value: copyNode(walk, descriptor.value, depth + 1),
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return ObjectFreeze(copy);
}

/** A TypeBox 1.x schema (its non-enumerable `~kind` marker) that is not a Standard Schema. */
export function looksLikeTypeBox(value: unknown): boolean {
  if (typeof value !== "object" || value === null || isProxy(value)) return false;
  return ObjectGetOwnPropertyDescriptor(value, "~kind") !== undefined && ObjectGetOwnPropertyDescriptor(value, "~standard") === undefined;
}

function invalid(message: string): never {
  throw new ToolContractError(ContractErrorCode.INVALID_TOOL_DEFINITION, message);
}
