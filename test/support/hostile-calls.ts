// Hostile tool calls for property tests (fast-check), used by the call-snapshot and
// call-isolation properties (docs/contract.md, rule 4 — call snapshot). A CallDesc says how
// each field of a call-like object is made (data, hidden, getter, missing), its shape
// (null prototype, inherited fields, array, class instance, frozen, Proxy) and its arguments
// (a hostile-value description or a raw generated value); buildCall() makes it, and
// expectValidCall() is the reference for whether executeToolCall must accept it.
import fc from "fast-check";
import { Limits } from "toolgate";
import { build, type Desc, descArbitraries, type Item, type Prop, type PropKind, Widget } from "./hostile-values.js";
import { countingFunction, countingHandler, hit } from "./user-code.js";

/** The tool names the call properties register (see their makeRegistry). */
export const REGISTERED = ["echo", "picky", "boom", "later"] as const;

export type FieldHow = "data" | "hidden" | "getter" | "missing";
export interface CallField {
  readonly how: FieldHow;
  readonly v: unknown;
}
export interface CallDesc {
  readonly shape: "object" | "nullProto" | "inherited" | "array" | "class" | "frozen";
  readonly proxy: boolean;
  readonly type: CallField;
  readonly id: CallField;
  readonly name: CallField;
  /** A description (built per run, may be hostile) or an arbitrary raw value. */
  readonly args: { readonly how: FieldHow; readonly d: Desc } | CallField;
  readonly extra: boolean;
}

const argsDescs = descArbitraries({ lone: true, deep: { min: 60, max: 70 }, hostility: 1 });
export const jsonArgsDescs = descArbitraries({ lone: true, deep: { min: 60, max: 70 }, hostility: 0 });
export const anythingValue = fc.anything({
  maxDepth: 2,
  withBigInt: true,
  withBoxedValues: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withNullPrototype: true,
  withObjectString: true,
  withSparseArray: true,
  withTypedArray: true,
});
const fieldHow = fc.constantFrom<FieldHow>("data", "data", "data", "data", "data", "data", "hidden", "getter", "missing");
function field(value: fc.Arbitrary<unknown>): fc.Arbitrary<CallField> {
  return fc.record({ how: fieldHow, v: fc.oneof({ weight: 6, arbitrary: value }, { weight: 1, arbitrary: anythingValue }) });
}
export const idString = fc.oneof(
  { weight: 4, arbitrary: fc.string({ minLength: 1, maxLength: 12, unit: "binary" }) },
  { weight: 1, arbitrary: fc.constantFrom("", "call-1") },
);
const wildCall: fc.Arbitrary<CallDesc> = fc.record({
  shape: fc.constantFrom<CallDesc["shape"]>("object", "object", "object", "nullProto", "frozen", "inherited", "array", "class"),
  proxy: fc.boolean(),
  type: field(fc.constant("toolCall")),
  id: field(idString),
  name: field(fc.oneof(fc.constantFrom(...REGISTERED), idString)),
  args: fc.oneof(
    { weight: 6, arbitrary: fc.record({ how: fieldHow, d: argsDescs.object }) },
    { weight: 1, arbitrary: field(fc.jsonValue()) },
  ),
  extra: fc.boolean(),
});
/** Mostly well-formed calls, whose arguments may still hide one non-JSON value deep inside. */
const plausibleCall: fc.Arbitrary<CallDesc> = fc.record({
  shape: fc.constantFrom<CallDesc["shape"]>("object", "nullProto", "frozen"),
  proxy: fc.constant(false),
  type: fc.record({ how: fc.constantFrom<FieldHow>("data", "hidden"), v: fc.constant("toolCall") }),
  id: fc.record({ how: fc.constant<FieldHow>("data"), v: idString }),
  name: fc.record({
    how: fc.constant<FieldHow>("data"),
    v: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...REGISTERED) }, { weight: 1, arbitrary: idString }),
  }),
  args: fc.oneof(
    { weight: 4, arbitrary: fc.record({ how: fc.constant<FieldHow>("data"), d: jsonArgsDescs.object }) },
    { weight: 1, arbitrary: fc.record({ how: fc.constant<FieldHow>("data"), d: argsDescs.object }) },
    {
      weight: 1,
      arbitrary: fc.record({ how: fc.constant<FieldHow>("data"), v: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })) }),
    },
  ),
  extra: fc.boolean(),
});
export const callDesc = fc.oneof({ weight: 3, arbitrary: plausibleCall }, { weight: 2, arbitrary: wildCall });

export function argsValue(args: CallDesc["args"]): unknown {
  return "d" in args ? build(args.d, []) : args.v;
}

export function buildCall(c: CallDesc): unknown {
  const fields: [string, FieldHow, unknown][] = [
    ["type", c.type.how, c.type.v],
    ["id", c.id.how, c.id.v],
    ["name", c.name.how, c.name.v],
    ["arguments", c.args.how, argsValue(c.args)],
  ];
  let record: object;
  if (c.shape === "inherited") {
    const prototype: Record<string, unknown> = {};
    for (const [key, , value] of fields) {
      Object.defineProperty(prototype, key, {
        get() {
          hit(`inherited call.${key}`);
          return value;
        },
      });
    }
    return Object.create(prototype);
  }
  if (c.shape === "array") record = [];
  else if (c.shape === "class") record = new Widget("call");
  else if (c.shape === "nullProto") record = Object.create(null);
  else record = {};
  for (const [key, how, value] of fields) {
    if (how === "missing") continue;
    if (how === "getter") {
      Object.defineProperty(record, key, {
        get() {
          hit(`call.${key} getter`);
          return value;
        },
        enumerable: true,
      });
    } else {
      Object.defineProperty(record, key, { value, writable: true, enumerable: how === "data", configurable: true });
    }
  }
  if (c.extra) {
    Object.defineProperty(record, "extra", { get: countingFunction("call.extra getter"), enumerable: true });
    Object.defineProperty(record, "toJSON", { value: countingFunction("call.toJSON"), enumerable: true });
  }
  if (c.shape === "frozen") Object.freeze(record);
  return c.proxy ? new Proxy(record, countingHandler("call proxy")) : record;
}

/** Would snapshotJson accept this argument value at `depth` containers? (rule 4 — call snapshot) */
export function snapshotable(d: Desc, depth: number): boolean {
  const container = (): boolean => depth < Limits.MAX_ARGUMENT_DEPTH;
  switch (d.t) {
    case "str":
    case "huge":
    case "bool":
    case "null":
      return true;
    case "num":
      return Number.isFinite(d.n);
    case "cycle":
      return depth === 0; // with no container around, it builds null
    case "obj":
      return container() && !d.symbolKey && d.props.every((p) => p.kind === "data" && snapshotable(p.d, depth + 1));
    case "arr":
      return container() && !d.extra && d.items.every((item) => item.k === "v" && snapshotable(item.d, depth + 1));
    case "sparse": {
      const present = new Map<number, Desc>();
      for (const [index, member] of d.set) if (index < d.length) present.set(index, member);
      return container() && present.size === d.length && [...present.values()].every((member) => snapshotable(member, depth + 1));
    }
    case "exotic":
      // Typed arrays and boxed primitives are refused whatever their prototype, as the
      // serializer refuses them: no JSON value is one.
      return false;
    default:
      return false; // undefined, BigInt, symbol, function, Date, Map, Set, Proxy, class instance
  }
}

export function expectValidCall(c: CallDesc): boolean {
  const dataField = (f: { readonly how: FieldHow }): boolean => f.how === "data" || f.how === "hidden";
  if (c.proxy || !["object", "nullProto", "frozen"].includes(c.shape)) return false;
  if (![c.type, c.id, c.name, c.args].every(dataField)) return false;
  if (c.type.v !== "toolCall") return false;
  if (typeof c.id.v !== "string" || c.id.v.length === 0) return false;
  if (typeof c.name.v !== "string" || c.name.v.length === 0) return false;
  if ("d" in c.args) return snapshotable(c.args.d, 0);
  const v = c.args.v;
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  return rawSnapshotable(v, 0);
}

/** snapshotable() for raw generated data (fc.jsonValue / fc.anything: no accessors, no Proxies). */
function rawSnapshotable(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value);
    case "object":
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (depth >= Limits.MAX_ARGUMENT_DEPTH) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  const keys = Reflect.ownKeys(value);
  const member = (key: string | symbol): boolean => {
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    return typeof key === "string" && descriptor !== undefined && "value" in descriptor && descriptor.enumerable === true;
  };
  if (Array.isArray(value)) {
    if (prototype !== Array.prototype || keys.length !== value.length + 1) return false;
    return Array.from({ length: value.length }, (_, index) => index).every(
      (index) => member(String(index)) && rawSnapshotable(value[index], depth + 1),
    );
  }
  if (prototype !== Object.prototype && prototype !== null) return false;
  return keys.every((key) => member(key) && rawSnapshotable((value as Record<string, unknown>)[key as string], depth + 1));
}

/** One thing that makes otherwise JSON arguments malformed (rule 4 — call snapshot). */
export type Defect =
  | { readonly at: "prop"; readonly kind: Exclude<PropKind, "data"> }
  | { readonly at: "item"; readonly kind: "hole" | "getter" }
  | { readonly at: "value"; readonly d: Desc };

const emptyObject: Desc = { t: "obj", nullProto: false, props: [], symbolKey: false };
export const defect: fc.Arbitrary<Defect> = fc.oneof(
  fc.constantFrom<Exclude<PropKind, "data">>("hidden", "getter", "setter").map((kind): Defect => ({ at: "prop", kind })),
  fc.constantFrom<"hole" | "getter">("hole", "getter").map((kind): Defect => ({ at: "item", kind })),
  fc
    .constantFrom<Desc>(
      { t: "undef" },
      { t: "num", n: Number.NaN },
      { t: "num", n: Infinity },
      { t: "num", n: -Infinity },
      { t: "big", v: 1n },
      { t: "sym" },
      { t: "fn" },
      { t: "date", ms: 0, hostile: false },
      { t: "map", entries: [], hostile: false },
      { t: "set", items: [], hostile: false },
      { t: "proxy", target: emptyObject, revoked: false },
      { t: "proxy", target: emptyObject, revoked: true },
      { t: "cls", props: [] },
      { t: "cycle", up: 0 },
      { t: "cycle", up: 1 },
      { t: "sparse", length: 3, set: [[1, { t: "null" }]] },
      { t: "arr", items: [], extra: true },
      { t: "obj", nullProto: false, props: [], symbolKey: true },
      { t: "exotic", kind: "nullProtoArray" },
      { t: "exotic", kind: "arrayProtoObject" },
      { t: "exotic", kind: "arraySubclass" },
      { t: "exotic", kind: "typedArray" },
      { t: "exotic", kind: "boxedString" },
      { t: "exotic", kind: "arguments" },
      { t: "exotic", kind: "customProto" },
    )
    .map((d): Defect => ({ at: "value", d })),
);

/** `root` with `flaw` added to its `pick`-th object or array (pre-order, through data members). */
export function withDefect(root: Desc, pick: number, flaw: Defect): Desc {
  let containers = 0;
  const count = (d: Desc): void => {
    if (d.t === "obj") {
      containers += 1;
      for (const p of d.props) if (p.kind === "data") count(p.d);
    } else if (d.t === "arr") {
      containers += 1;
      for (const item of d.items) if (item.k === "v") count(item.d);
    }
  };
  count(root);
  let target = pick % Math.max(containers, 1);
  const visit = (d: Desc): Desc => {
    if (d.t !== "obj" && d.t !== "arr") return d;
    const here = target === 0;
    target -= 1;
    if (d.t === "obj") {
      const props = d.props.map((p): Prop => (p.kind === "data" ? { ...p, d: visit(p.d) } : p));
      if (!here) return { ...d, props };
      const prop: Prop =
        flaw.at === "value"
          ? { key: "defect", kind: "data", d: flaw.d }
          : { key: "defect", kind: flaw.kind === "hole" ? "getter" : flaw.kind, d: { t: "null" } };
      return { ...d, props: [...props, prop] };
    }
    const items = d.items.map((item): Item => (item.k === "v" ? { k: "v", d: visit(item.d) } : item));
    if (!here) return { ...d, items };
    if (flaw.at === "prop") return { ...d, items, extra: true };
    return { ...d, items: [...items, flaw.at === "item" ? { k: flaw.kind } : { k: "v", d: flaw.d }] };
  };
  return visit(root);
}
