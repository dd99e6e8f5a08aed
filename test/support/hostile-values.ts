// Hostile output values for property tests (fast-check), used by the serializer and realm
// properties (docs/contract.md, rules 10–12). Generated inputs are *descriptions*: plain data
// that fast-check can print and shrink. Each run builds the hostile value from its
// description with build(), wiring every piece of user code in it to the counter in
// ./user-code.ts. The reference model of what the serializer must make of a description is
// in ./serializer-model.ts.
import fc from "fast-check";
import { Limits } from "toolgate";
import { countingFunction, countingHandler, hit, resetHits } from "./user-code.js";

// 300 runs per property keeps each file at a few seconds; raise it for a soak run:
// TOOLGATE_PROPERTY_RUNS=5000 npx vitest run test/contract/properties-serializer.test.ts
export const RUNS = Number(process.env.TOOLGATE_PROPERTY_RUNS ?? 300);

// ---------------------------------------------------------------------------------------
// Descriptions of values
// ---------------------------------------------------------------------------------------

/** A string of `cps` code points made by repeating `pieces` (> 4096 code points when huge). */
export interface HugeSpec {
  readonly pieces: readonly string[];
  readonly cps: number;
}
export type Key = string | HugeSpec;
export type PropKind = "data" | "getter" | "setter" | "hidden";
export interface Prop {
  readonly key: Key;
  readonly kind: PropKind;
  readonly d: Desc;
}
export type Item = { readonly k: "v"; readonly d: Desc } | { readonly k: "hole" } | { readonly k: "getter" };
export type ExoticKind =
  | "nullProtoArray"
  | "arrayProtoObject"
  | "arraySubclass"
  | "mapSubclass"
  | "typedArray"
  | "typedSwapped"
  | "emptyTypedSwapped"
  | "boxedString"
  | "boxedStringSwapped"
  | "boxedNumberSwapped"
  | "regexp"
  | "error"
  | "promise"
  | "weakMap"
  | "arguments"
  | "customProto";

export type Desc =
  | { readonly t: "str"; readonly s: string }
  | { readonly t: "huge"; readonly h: HugeSpec }
  | { readonly t: "num"; readonly n: number }
  | { readonly t: "bool"; readonly b: boolean }
  | { readonly t: "null" }
  | { readonly t: "undef" }
  | { readonly t: "big"; readonly v: bigint }
  | { readonly t: "sym" }
  | { readonly t: "fn" }
  | { readonly t: "date"; readonly ms: number; readonly hostile: boolean }
  | { readonly t: "obj"; readonly nullProto: boolean; readonly props: readonly Prop[]; readonly symbolKey: boolean }
  | { readonly t: "arr"; readonly items: readonly Item[]; readonly extra: boolean }
  | { readonly t: "sparse"; readonly length: number; readonly set: readonly (readonly [number, Desc])[] }
  | { readonly t: "map"; readonly entries: readonly (readonly [Desc, Desc])[]; readonly hostile: boolean }
  | { readonly t: "set"; readonly items: readonly Desc[]; readonly hostile: boolean }
  | { readonly t: "proxy"; readonly target: Desc; readonly revoked: boolean }
  | { readonly t: "cls"; readonly props: readonly Prop[] }
  | { readonly t: "cycle"; readonly up: number }
  | { readonly t: "exotic"; readonly kind: ExoticKind };

const hugeCache = new WeakMap<HugeSpec, string>();
export function hugeString(h: HugeSpec): string {
  const cached = hugeCache.get(h);
  if (cached !== undefined) return cached;
  const units = h.pieces.flatMap((piece) => [...piece]);
  const out: string[] = [];
  for (let index = 0; out.length < h.cps; index += 1) out.push(units[index % units.length] as string);
  const text = out.join("");
  hugeCache.set(h, text);
  return text;
}
export function keyString(key: Key): string {
  return typeof key === "string" ? key : hugeString(key);
}

/** Map keys / Set members must be distinct values, or the collection would collapse them. */
function memberTag(d: Desc): unknown {
  switch (d.t) {
    case "str":
      return "s:" + d.s;
    case "huge":
      return "s:" + hugeString(d.h);
    case "num":
      return "n:" + (d.n === 0 ? 0 : d.n); // SameValueZero: -0 is 0; every NaN is NaN
    case "bool":
      return "b:" + d.b;
    case "null":
    case "undef":
    case "cycle": // at most one cycle member: two could resolve to the same ancestor
      return d.t;
    case "big":
      return "g:" + d.v;
    default:
      return d; // a fresh object (or symbol, or function) every time it is built
  }
}

interface ArbOptions {
  /** Generate lone surrogates in strings too. */
  readonly lone: boolean;
  /** Nesting of the generated deep chains. */
  readonly deep: { readonly min: number; readonly max: number };
  /** Weight of hostile / non-JSON shapes (0 = only JSON-like shapes). */
  readonly hostility: number;
}

function charArbitrary(lone: boolean): fc.Arbitrary<string> {
  const units: fc.WeightedArbitrary<string>[] = [
    { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
    { weight: 2, arbitrary: fc.constantFrom('"', "\\", "/", "\u001f", " ", "\u007f", "\u2028", "é", "中", "\uFEFF", "\uFFFD") },
    { weight: 2, arbitrary: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)) }, // control characters
    // Astral characters whose high surrogate is in D800-DB7F: a split pair leaves a lone one.
    { weight: 3, arbitrary: fc.integer({ min: 0x10000, max: 0xeffff }).map((c) => String.fromCodePoint(c)) },
  ];
  if (lone) {
    // Lone high surrogates only from DB80-DBFF, so any lone D800-DB7F in the output is a split pair.
    units.push({ weight: 1, arbitrary: fc.integer({ min: 0xdb80, max: 0xdbff }).map((c) => String.fromCharCode(c)) });
    units.push({ weight: 1, arbitrary: fc.integer({ min: 0xdc00, max: 0xdfff }).map((c) => String.fromCharCode(c)) });
  }
  return fc.oneof(...units);
}

export function descArbitraries(options: ArbOptions): { root: fc.Arbitrary<Desc>; object: fc.Arbitrary<Desc> } {
  const char = charArbitrary(options.lone);
  const smallString = fc.string({ unit: char, maxLength: 8 });
  const huge: fc.Arbitrary<HugeSpec> = fc.record({
    pieces: fc.array(fc.string({ unit: char, minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 4 }),
    // Around the string budget (4096), well past it, and long enough to fill the content cap in a few members.
    cps: fc.oneof(fc.integer({ min: 4090, max: 4100 }), fc.integer({ min: 3000, max: 9000 }), fc.integer({ min: 200, max: 2500 })),
  });
  const key: fc.Arbitrary<Key> = fc.oneof(
    { weight: 6, arbitrary: smallString },
    { weight: 3, arbitrary: fc.constantFrom("toJSON", "__proto__", "constructor", "valueOf", "0", "1", "10", "length", "a", "b", "") },
    { weight: 1, arbitrary: huge },
  );
  const bits = Limits.MAX_BIGINT_BITS;
  const limit = 1n << BigInt(bits);
  const bigint = fc.oneof(
    fc.bigInt({ min: -(1n << 80n), max: 1n << 80n }),
    fc.constantFrom(limit, -limit, limit - 1n, -(limit - 1n)), // exactly on the budget's edge
    fc.tuple(fc.integer({ min: bits - 2, max: bits + 2 }), fc.boolean(), fc.bigInt({ min: -2n, max: 2n })).map(([b, negative, offset]) => {
      const magnitude = (1n << BigInt(b)) + offset;
      return negative ? -magnitude : magnitude;
    }),
  );
  const h = options.hostility;
  const number = fc.oneof(
    { weight: 3, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
    { weight: 3, arbitrary: fc.integer() },
    { weight: 2, arbitrary: fc.constantFrom(-0, 0, 1e21, 5e-324, Number.MAX_VALUE, -1e-7) },
    { weight: h, arbitrary: fc.constantFrom(Number.NaN, Infinity, -Infinity) },
  );

  const leaf: fc.Arbitrary<Desc> = fc.oneof(
    { weight: 5, arbitrary: smallString.map((s): Desc => ({ t: "str", s })) },
    { weight: 2, arbitrary: huge.map((hs): Desc => ({ t: "huge", h: hs })) },
    { weight: 4, arbitrary: number.map((n): Desc => ({ t: "num", n })) },
    { weight: 1, arbitrary: fc.boolean().map((b): Desc => ({ t: "bool", b })) },
    { weight: 1, arbitrary: fc.constant<Desc>({ t: "null" }) },
    { weight: h, arbitrary: fc.constant<Desc>({ t: "undef" }) },
    { weight: h, arbitrary: bigint.map((v): Desc => ({ t: "big", v })) },
    { weight: h, arbitrary: fc.constant<Desc>({ t: "sym" }) },
    { weight: h, arbitrary: fc.constant<Desc>({ t: "fn" }) },
  );

  const tree = fc.letrec<{ value: Desc; container: Desc; object: Desc }>((tie) => {
    const value = tie("value");
    const propKind =
      h === 0 ? fc.constant<PropKind>("data") : fc.constantFrom<PropKind>("data", "data", "data", "getter", "setter", "hidden");
    const props = fc
      .record({
        props: fc.uniqueArray(fc.record({ key, kind: propKind, d: value }), { maxLength: 6, selector: (p) => keyString(p.key) }),
        toJSON: h === 0 ? fc.constant(false) : fc.boolean(),
      })
      .map(({ props: list, toJSON }): Prop[] =>
        toJSON && !list.some((p) => keyString(p.key) === "toJSON") ? [...list, { key: "toJSON", kind: "data", d: { t: "fn" } }] : list,
      );
    const object = fc
      .record({ nullProto: fc.boolean(), props, symbolKey: h === 0 ? fc.constant(false) : fc.boolean() })
      .map((o): Desc => ({ t: "obj", ...o }));
    const item: fc.Arbitrary<Item> = fc.oneof(
      { weight: 8, arbitrary: value.map((d): Item => ({ k: "v", d })) },
      { weight: h, arbitrary: fc.constant<Item>({ k: "hole" }) },
      { weight: h, arbitrary: fc.constant<Item>({ k: "getter" }) },
    );
    // Objects with many keys (past the point where a small-object key sort may switch strategy).
    const wideObject = fc
      .record({
        nullProto: fc.boolean(),
        props: fc.uniqueArray(fc.record({ key, kind: propKind, d: leaf }), {
          minLength: 12,
          maxLength: 48,
          selector: (p) => keyString(p.key),
        }),
      })
      .map((o): Desc => ({ t: "obj", nullProto: o.nullProto, props: o.props, symbolKey: false }));
    const array = fc
      .record({ items: fc.array(item, { maxLength: 6 }), extra: h === 0 ? fc.constant(false) : fc.boolean() })
      .map((a): Desc => ({ t: "arr", ...a }));
    // Wide arrays of primitives: past the 128-node budget, and (with sparse) the visit budget.
    const wide = fc
      .array(leaf, { minLength: 100, maxLength: 300 })
      .map((list): Desc => ({ t: "arr", items: list.map((d): Item => ({ k: "v", d })), extra: false }));
    const sparse = fc
      .record({
        // Around the visit budget (256) and the node budget (128), small, and huge (refused in O(1)).
        length: fc.oneof(
          fc.integer({ min: 0, max: 8 }),
          fc.integer({ min: Limits.MAX_NODES - 4, max: Limits.MAX_NODES + 4 }),
          fc.integer({ min: Limits.MAX_COLLECTION_VISITS - 4, max: Limits.MAX_COLLECTION_VISITS + 4 }),
          fc.constantFrom(1_000_000, 2 ** 32 - 1),
        ),
        set: fc.array(fc.tuple(fc.nat(300), value), { maxLength: 3 }),
      })
      .map((s): Desc => ({ t: "sparse", ...s }));
    const map = fc
      .record({
        entries: fc.uniqueArray(fc.tuple(value, value), { maxLength: 4, selector: ([k]) => memberTag(k) }),
        hostile: fc.boolean(),
      })
      .map((m): Desc => ({ t: "map", ...m }));
    const set = fc
      .record({ items: fc.uniqueArray(value, { maxLength: 4, selector: memberTag }), hostile: fc.boolean() })
      .map((s): Desc => ({ t: "set", ...s }));
    const deepChain = fc
      .tuple(fc.integer(options.deep), fc.constantFrom("arr", "obj", "map", "set"), value)
      .map(([levels, kind, inner]): Desc => {
        let d = inner;
        for (let level = 0; level < levels; level += 1) {
          if (kind === "arr") d = { t: "arr", items: [{ k: "v", d }], extra: false };
          else if (kind === "obj") d = { t: "obj", nullProto: level % 2 === 0, props: [{ key: "k", kind: "data", d }], symbolKey: false };
          else if (kind === "map") d = { t: "map", entries: [[{ t: "str", s: "k" }, d]], hostile: false };
          else d = { t: "set", items: [d], hostile: false };
        }
        return d;
      });
    const date = fc
      .record({
        ms: fc.oneof(fc.constant(Number.NaN), fc.double({ min: -8.64e15, max: 8.64e15, noNaN: true }).map(Math.trunc)),
        hostile: fc.boolean(),
      })
      .map((d): Desc => ({ t: "date", ...d }));
    const exotic = fc
      .constantFrom<ExoticKind>(
        "nullProtoArray",
        "arrayProtoObject",
        "arraySubclass",
        "mapSubclass",
        "typedArray",
        "typedSwapped",
        "emptyTypedSwapped",
        "boxedString",
        "boxedStringSwapped",
        "boxedNumberSwapped",
        "regexp",
        "error",
        "promise",
        "weakMap",
        "arguments",
        "customProto",
      )
      .map((kind): Desc => ({ t: "exotic", kind }));
    return {
      value: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        { weight: 6, arbitrary: leaf },
        { weight: 4, arbitrary: tie("container") },
        { weight: h, arbitrary: fc.nat(40).map((up): Desc => ({ t: "cycle", up })) },
      ),
      object,
      container: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        { weight: 4, arbitrary: object },
        { weight: 3, arbitrary: array },
        { weight: 1, arbitrary: deepChain },
        { weight: 1, arbitrary: wide },
        { weight: 1, arbitrary: wideObject },
        { weight: h, arbitrary: sparse },
        { weight: h, arbitrary: map },
        { weight: h, arbitrary: set },
        { weight: h, arbitrary: date },
        { weight: h, arbitrary: exotic },
        { weight: h, arbitrary: tie("object").map((o): Desc => ({ t: "cls", props: o.t === "obj" ? o.props : [] })) },
        {
          weight: h,
          arbitrary: fc
            .record({ target: fc.oneof(object, array, map, set), revoked: fc.boolean() })
            .map((p): Desc => ({ t: "proxy", ...p })),
        },
      ),
    };
  });
  // At the top, mostly containers (a top-level string is the plain-text path, a cycle there is null).
  const root = fc.oneof({ weight: 1, arbitrary: tree.value }, { weight: 4, arbitrary: tree.container });
  return { root, object: tree.object };
}

// ---------------------------------------------------------------------------------------
// Building a value from its description
// ---------------------------------------------------------------------------------------

export type Order = (count: number) => number[];
const insertionOrder: Order = (count) => Array.from({ length: count }, (_, index) => index);
/** A deterministic shuffle of property insertion order (plain objects only). */
export function shuffledOrder(seed: number): Order {
  return (count) => {
    const order = insertionOrder(count);
    let state = seed >>> 0 || 1;
    for (let index = count - 1; index > 0; index -= 1) {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      const other = state % (index + 1);
      [order[index], order[other]] = [order[other] as number, order[index] as number];
    }
    return order;
  };
}

function defineProps(target: object, props: readonly Prop[], ancestors: object[], order: Order, where: string): void {
  for (const index of order(props.length)) {
    const prop = props[index] as Prop;
    const key = keyString(prop.key);
    const label = `${where}.${key.slice(0, 16)}`;
    switch (prop.kind) {
      case "data":
      case "hidden":
        Object.defineProperty(target, key, {
          value: build(prop.d, ancestors, order),
          writable: true,
          enumerable: prop.kind === "data",
          configurable: true,
        });
        break;
      case "getter":
        Object.defineProperty(target, key, {
          get() {
            hit(`getter ${label}`);
            return "from a getter";
          },
          enumerable: true,
          configurable: true,
        });
        break;
      case "setter":
        Object.defineProperty(target, key, {
          set() {
            hit(`setter ${label}`);
          },
          enumerable: true,
          configurable: true,
        });
        break;
    }
  }
}

const COLLECTION_METHODS = ["entries", "keys", "values", "forEach", "get", "has", "set", "add", "delete", "clear", "toJSON"] as const;
function overrideCollection(collection: Map<unknown, unknown> | Set<unknown>, where: string): void {
  for (const method of COLLECTION_METHODS) {
    Object.defineProperty(collection, method, { value: countingFunction(`${where}.${method}`), enumerable: true });
  }
  Object.defineProperty(collection, Symbol.iterator, { value: countingFunction(`${where}[Symbol.iterator]`) });
  Object.defineProperty(collection, "size", {
    get() {
      hit(`${where}.size`);
      return 0;
    },
  });
}

export class Widget {
  constructor(readonly label: string) {}
  get computed(): string {
    hit("Widget.computed");
    return "computed";
  }
  toJSON(): unknown {
    hit("Widget.toJSON");
    return { faked: true };
  }
}
class ArraySubclass extends Array<unknown> {}
class MapSubclass extends Map<unknown, unknown> {}

function buildExotic(kind: ExoticKind): unknown {
  switch (kind) {
    case "nullProtoArray":
      return Object.setPrototypeOf([1, 2], null);
    case "arrayProtoObject":
      return Object.create(Array.prototype);
    case "arraySubclass":
      return ArraySubclass.from([1, 2]);
    case "mapSubclass":
      return new MapSubclass([[1, 2]]);
    case "typedArray":
      return new Uint8Array([1, 2, 3]);
    case "typedSwapped":
      return Object.setPrototypeOf(new Uint8Array([1, 2, 3]), Object.prototype);
    case "emptyTypedSwapped":
      return Object.setPrototypeOf(new Uint8Array(0), Object.prototype);
    case "boxedString":
      return new String("boxed");
    case "boxedStringSwapped":
      return Object.setPrototypeOf(new String("boxed"), Object.prototype);
    case "boxedNumberSwapped":
      return Object.setPrototypeOf(new Number(42), Object.prototype);
    case "regexp":
      return /x/g;
    case "error":
      return new Error("an error");
    case "promise":
      return Promise.resolve(1);
    case "weakMap":
      return new WeakMap();
    case "arguments":
      return (function argumentsObject(..._rest: unknown[]) {
        // biome-ignore lint/complexity/noArguments: the hostile value under test is an arguments object.
        return arguments;
      })(1, "x");
    case "customProto":
      return Object.create({ inherited: countingFunction("customProto.inherited") });
  }
}

/** Builds the value a description stands for. `ancestors`: the containers around it. */
export function build(d: Desc, ancestors: object[], order: Order = insertionOrder): unknown {
  switch (d.t) {
    case "str":
      return d.s;
    case "huge":
      return hugeString(d.h);
    case "num":
      return d.n;
    case "bool":
      return d.b;
    case "null":
      return null;
    case "undef":
      return undefined;
    case "big":
      return d.v;
    case "sym":
      return Symbol("generated");
    case "fn":
      return countingFunction("a function member");
    case "date": {
      const date = new Date(d.ms);
      if (d.hostile) {
        for (const method of ["toJSON", "toISOString", "getTime", "valueOf", "toString"]) {
          Object.defineProperty(date, method, { value: countingFunction(`Date.${method}`) });
        }
        Object.defineProperty(date, Symbol.toPrimitive, { value: countingFunction("Date[Symbol.toPrimitive]") });
      }
      return date;
    }
    case "obj": {
      const object: object = d.nullProto ? Object.create(null) : {};
      ancestors.push(object);
      defineProps(object, d.props, ancestors, order, "object");
      if (d.symbolKey) {
        Object.defineProperty(object, Symbol("key"), { value: countingFunction("symbol-keyed member"), enumerable: true });
      }
      ancestors.pop();
      return object;
    }
    case "arr": {
      const array: unknown[] = [];
      array.length = d.items.length;
      ancestors.push(array);
      d.items.forEach((item, index) => {
        if (item.k === "v") {
          Object.defineProperty(array, index, {
            value: build(item.d, ancestors, order),
            writable: true,
            enumerable: true,
            configurable: true,
          });
        } else if (item.k === "getter") {
          Object.defineProperty(array, index, {
            get() {
              hit(`array getter [${index}]`);
              return "from a getter";
            },
            enumerable: true,
            configurable: true,
          });
        }
      });
      if (d.extra) {
        Object.defineProperty(array, "toJSON", { value: countingFunction("array.toJSON"), enumerable: true });
        Object.defineProperty(array, "extra", { value: "not an index", enumerable: true });
        Object.defineProperty(array, Symbol.iterator, { value: countingFunction("array[Symbol.iterator]") });
      }
      ancestors.pop();
      return array;
    }
    case "sparse": {
      const array: unknown[] = [];
      array.length = d.length;
      ancestors.push(array);
      for (const [index, member] of d.set) if (index < d.length) array[index] = build(member, ancestors, order);
      ancestors.pop();
      return array;
    }
    case "map": {
      const map = new Map<unknown, unknown>();
      ancestors.push(map);
      for (const [k, v] of d.entries) map.set(build(k, ancestors, order), build(v, ancestors, order));
      ancestors.pop();
      if (d.hostile) overrideCollection(map, "map");
      return map;
    }
    case "set": {
      const set = new Set<unknown>();
      ancestors.push(set);
      for (const member of d.items) set.add(build(member, ancestors, order));
      ancestors.pop();
      if (d.hostile) overrideCollection(set, "set");
      return set;
    }
    case "proxy": {
      const target = build(d.target, ancestors, order) as object;
      if (!d.revoked) return new Proxy(target, countingHandler("proxy"));
      const { proxy, revoke } = Proxy.revocable(target, countingHandler("revoked proxy"));
      revoke(); // every operation on it now throws
      return proxy;
    }
    case "cls": {
      const widget = new Widget("w");
      defineProps(widget, d.props, ancestors, order, "widget");
      return widget;
    }
    case "cycle":
      return ancestors.length === 0 ? null : ancestors[ancestors.length - 1 - (d.up % ancestors.length)];
    case "exotic":
      return buildExotic(d.kind);
  }
}

export function buildFresh(d: Desc, order: Order = insertionOrder): unknown {
  const value = build(d, [], order);
  resetHits(); // building runs no hook, but start every check from zero regardless
  return value;
}

/** Every string a description contains (values, keys, Map keys...), as built. */
export function stringsOf(d: Desc, out: string[] = []): string[] {
  const props = (list: readonly Prop[]): void => {
    for (const p of list) {
      out.push(keyString(p.key));
      stringsOf(p.d, out);
    }
  };
  switch (d.t) {
    case "str":
      out.push(d.s);
      break;
    case "huge":
      out.push(hugeString(d.h));
      break;
    case "obj":
    case "cls":
      props(d.props);
      break;
    case "arr":
      for (const item of d.items) if (item.k === "v") stringsOf(item.d, out);
      break;
    case "sparse":
      for (const [, member] of d.set) stringsOf(member, out);
      break;
    case "map":
      for (const [k, v] of d.entries) stringsOf(v, stringsOf(k, out));
      break;
    case "set":
      for (const member of d.items) stringsOf(member, out);
      break;
    case "proxy":
      stringsOf(d.target, out);
      break;
    default:
      break;
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// The generators the output properties share
// ---------------------------------------------------------------------------------------

const hostile = descArbitraries({ lone: true, deep: { min: 28, max: 40 }, hostility: 2 });
const hostileWellFormed = descArbitraries({ lone: false, deep: { min: 28, max: 40 }, hostility: 2 });
const jsonLike = descArbitraries({ lone: true, deep: { min: 28, max: 40 }, hostility: 0 });

/** Values exactly at each budget, or one past it (the model says which are refused). */
const atTheBudgets: fc.Arbitrary<Desc> = (() => {
  const primitive = fc.oneof(
    fc.string({ maxLength: 4 }).map((s): Desc => ({ t: "str", s })),
    fc.integer().map((n): Desc => ({ t: "num", n })),
    fc.constant<Desc>({ t: "null" }),
  );
  const over = fc.constantFrom(0, 1);
  const omitted = fc.constantFrom<Desc>({ t: "undef" }, { t: "fn" }, { t: "sym" });
  // 256 collection visits: k omitted members (visited, not rendered) plus a sparse array of holes.
  const visits = fc.tuple(fc.array(omitted, { maxLength: 40 }), over).map(([members, extra]): Desc => {
    const props: Prop[] = members.map((d, index) => ({ key: `m${index}`, kind: "data", d }));
    const length = Limits.MAX_COLLECTION_VISITS - props.length - 1 + extra;
    return {
      t: "obj",
      nullProto: false,
      props: [...props, { key: "holes", kind: "data", d: { t: "sparse", length, set: [] } }],
      symbolKey: false,
    };
  });
  // 128 nodes: an array and its rendered members.
  const nodes = fc.tuple(fc.array(primitive, { minLength: Limits.MAX_NODES + 1, maxLength: Limits.MAX_NODES + 1 }), over).map(
    ([members, extra]): Desc => ({
      t: "arr",
      items: members.slice(0, Limits.MAX_NODES - 1 + extra).map((d): Item => ({ k: "v", d })),
      extra: false,
    }),
  );
  // 32 nested containers of any kind.
  const depth = fc
    .tuple(
      fc.array(fc.constantFrom("arr", "obj", "map", "set"), { minLength: Limits.MAX_DEPTH + 1, maxLength: Limits.MAX_DEPTH + 1 }),
      over,
      primitive,
    )
    .map(
      ([kinds, extra, inner]): Desc =>
        kinds.slice(0, Limits.MAX_DEPTH + extra).reduce<Desc>((d, kind) => {
          if (kind === "arr") return { t: "arr", items: [{ k: "v", d }], extra: false };
          if (kind === "obj") return { t: "obj", nullProto: false, props: [{ key: "k", kind: "data", d }], symbolKey: false };
          if (kind === "map") return { t: "map", entries: [[{ t: "null" }, d]], hostile: false };
          return { t: "set", items: [d], hostile: false };
        }, inner),
    );
  const limit = 1n << BigInt(Limits.MAX_BIGINT_BITS);
  const bigint = fc
    .tuple(over, fc.boolean())
    .map(([extra, negative]): Desc => ({ t: "big", v: (negative ? -1n : 1n) * (limit - 1n + BigInt(extra)) }));
  // 4096 code points in a string (astral characters count once), alone or as a member.
  const string = fc.tuple(fc.constantFrom("a", "😀", "a😀", "\u0000"), over, fc.boolean()).map(([piece, extra, nested]): Desc => {
    const d: Desc = { t: "huge", h: { pieces: [piece], cps: Limits.MAX_STRING_CODE_POINTS + extra } };
    return nested ? { t: "arr", items: [{ k: "v", d }], extra: false } : d;
  });
  return fc.oneof(visits, nodes, depth, bigint, string);
})();

export const anyDesc = fc.oneof(hostile.root, hostileWellFormed.root, jsonLike.root, atTheBudgets);
