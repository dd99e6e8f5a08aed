// Property-based tests (fast-check) for the two untrusted-input boundaries of toolgate:
// the output serializer (SPEC rules 10-12) and executeToolCall's call snapshot (rules 4, 13).
//
// Generated inputs are *descriptions* (plain data that fast-check can print and shrink);
// each run builds the hostile value from its description, with every piece of user code in
// it (getters, setters, Proxy traps, toJSON, own Map/Set methods, functions, class methods)
// wired to one counter. A description also has a reference model: the exact outcome the
// serializer must produce, written from the contract (SPEC rules 10-12, the README's
// rendering table and budgets); the one implementation choice it mirrors is marked below.
//
// Checked by breaking src/ on purpose (in a scratch copy): calling getters, honouring toJSON,
// using a Map's own entries(), dropping the cap or the key sort, splitting surrogate pairs,
// off-by-one budgets, unfrozen or mislinked results, shallow or lenient call snapshots and
// unescaped control characters each make at least one property fail.
import fc from "fast-check";
import {
  COURSE_TOOL_CIRCULAR_MARKER,
  COURSE_TOOL_INVALID_TOOL_CALL,
  COURSE_TOOL_MAX_ARGUMENT_DEPTH,
  COURSE_TOOL_MAX_BIGINT_BITS,
  COURSE_TOOL_MAX_COLLECTION_VISITS,
  COURSE_TOOL_MAX_CONTENT_CODE_POINTS,
  COURSE_TOOL_MAX_DEPTH,
  COURSE_TOOL_MAX_NODES,
  COURSE_TOOL_MAX_STRING_CODE_POINTS,
  COURSE_TOOL_TRUNCATION_MARKER,
  type CourseToolResultMessage,
  defineTool,
  executeToolCall,
  isToolContractError,
  type SerializationOutcome,
  serializeToolOutput,
  ToolRegistry,
} from "toolgate";
import { afterEach, describe, expect, it } from "vitest";

const MAX = COURSE_TOOL_MAX_CONTENT_CODE_POINTS;
const MARKER = COURSE_TOOL_TRUNCATION_MARKER;
// 300 runs per property keeps the file at a few seconds; raise it for a soak run:
// TOOLGATE_PROPERTY_RUNS=5000 npx vitest run test/properties.test.ts
const RUNS = Number(process.env.TOOLGATE_PROPERTY_RUNS ?? 300);

// ---------------------------------------------------------------------------------------
// The user-code counter. Every hook in a generated value calls hit(); no boundary may.
// ---------------------------------------------------------------------------------------

let hits = 0;
const hitLog: string[] = [];
function hit(where: string): void {
  hits += 1;
  if (hitLog.length < 8) hitLog[hitLog.length] = where; // no method call: built-ins may be patched
}
function resetHits(): void {
  hits = 0;
  hitLog.length = 0;
}
afterEach(resetHits);

function countingFunction(where: string): () => string {
  return function counted() {
    hit(where);
    return "user code ran";
  };
}

/** A Proxy handler whose every trap counts and then behaves like the target. */
function countingHandler(where: string): ProxyHandler<object> {
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

// ---------------------------------------------------------------------------------------
// Descriptions of values
// ---------------------------------------------------------------------------------------

/** A string of `cps` code points made by repeating `pieces` (> 4096 code points when huge). */
interface HugeSpec {
  readonly pieces: readonly string[];
  readonly cps: number;
}
type Key = string | HugeSpec;
type PropKind = "data" | "getter" | "setter" | "hidden";
interface Prop {
  readonly key: Key;
  readonly kind: PropKind;
  readonly d: Desc;
}
type Item = { readonly k: "v"; readonly d: Desc } | { readonly k: "hole" } | { readonly k: "getter" };
type ExoticKind =
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

type Desc =
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
function hugeString(h: HugeSpec): string {
  const cached = hugeCache.get(h);
  if (cached !== undefined) return cached;
  const units = h.pieces.flatMap((piece) => [...piece]);
  const out: string[] = [];
  for (let index = 0; out.length < h.cps; index += 1) out.push(units[index % units.length] as string);
  const text = out.join("");
  hugeCache.set(h, text);
  return text;
}
function keyString(key: Key): string {
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

function descArbitraries(options: ArbOptions): { root: fc.Arbitrary<Desc>; object: fc.Arbitrary<Desc> } {
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
  const bits = COURSE_TOOL_MAX_BIGINT_BITS;
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
          fc.integer({ min: COURSE_TOOL_MAX_NODES - 4, max: COURSE_TOOL_MAX_NODES + 4 }),
          fc.integer({ min: COURSE_TOOL_MAX_COLLECTION_VISITS - 4, max: COURSE_TOOL_MAX_COLLECTION_VISITS + 4 }),
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

type Order = (count: number) => number[];
const insertionOrder: Order = (count) => Array.from({ length: count }, (_, index) => index);
/** A deterministic shuffle of property insertion order (plain objects only). */
function shuffledOrder(seed: number): Order {
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

class Widget {
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
function build(d: Desc, ancestors: object[], order: Order = insertionOrder): unknown {
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

function buildFresh(d: Desc, order: Order = insertionOrder): unknown {
  const value = build(d, [], order);
  resetHits(); // building runs no hook, but start every check from zero regardless
  return value;
}

/** Every string a description contains (values, keys, Map keys...), as built. */
function stringsOf(d: Desc, out: string[] = []): string[] {
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
// The reference model of the serializer (from SPEC rules 10-12 and the budgets' docs)
// ---------------------------------------------------------------------------------------

class ModelRefusal {}

function cutCodePoints(text: string, max: number): { text: string; cut: boolean } {
  const points = [...text]; // code points; a lone surrogate counts as one
  return points.length > max ? { text: points.slice(0, max).join(""), cut: true } : { text, cut: false };
}

/** The final content rule: <= 4096 code points, or exactly 4096 ending with the marker. */
function capModel(text: string, cut: boolean): string {
  const points = [...text];
  if (!cut && points.length <= MAX) return text;
  return points.slice(0, MAX - [...MARKER].length).join("") + MARKER;
}

interface ModelWalk {
  nodes: number;
  visits: number;
  cut: boolean;
}

/** What serializeToolOutput must return for the value `d` describes. */
function expectedOutcome(d: Desc): { ok: true; content: string } | { ok: false } {
  if (d.t === "str" || d.t === "huge") {
    const { text, cut } = cutCodePoints(d.t === "str" ? d.s : hugeString(d.h), COURSE_TOOL_MAX_STRING_CODE_POINTS);
    return { ok: true, content: capModel(text.toWellFormed(), cut) };
  }
  if (d.t === "undef") return { ok: true, content: "" };
  if (d.t === "fn" || d.t === "sym") return { ok: false };
  const walk: ModelWalk = { nodes: 0, visits: 0, cut: false };
  try {
    const text = modelRender(walk, d, 0) ?? "null";
    return { ok: true, content: capModel(text, walk.cut) };
  } catch (error) {
    if (error instanceof ModelRefusal) return { ok: false };
    throw error;
  }
}

function node(walk: ModelWalk): void {
  walk.nodes += 1;
  if (walk.nodes > COURSE_TOOL_MAX_NODES) throw new ModelRefusal();
}
function visits(walk: ModelWalk, count: number): void {
  walk.visits += count;
  if (walk.visits > COURSE_TOOL_MAX_COLLECTION_VISITS) throw new ModelRefusal();
}
/** An object value at `depth` containers: refused past the depth budget, else one node. */
function objectNode(walk: ModelWalk, depth: number): void {
  if (depth >= COURSE_TOOL_MAX_DEPTH) throw new ModelRefusal();
  node(walk);
}
function modelQuote(walk: ModelWalk, text: string): string {
  const bounded = cutCodePoints(text, COURSE_TOOL_MAX_STRING_CODE_POINTS);
  if (bounded.cut) walk.cut = true;
  return JSON.stringify(bounded.text); // escapes lone surrogates
}

/** The rendering of `d` as a member at `depth` containers deep; undefined = omitted. */
function modelRender(walk: ModelWalk, d: Desc, depth: number): string | undefined {
  switch (d.t) {
    case "str":
      node(walk);
      return modelQuote(walk, d.s);
    case "huge":
      node(walk);
      return modelQuote(walk, hugeString(d.h));
    case "num":
      node(walk);
      return JSON.stringify(d.n); // -0 -> 0, NaN / Infinity -> null
    case "bool":
      node(walk);
      return String(d.b);
    case "null":
      node(walk);
      return "null";
    case "big": {
      node(walk);
      const limit = 1n << BigInt(COURSE_TOOL_MAX_BIGINT_BITS);
      if (d.v >= limit || d.v <= -limit) throw new ModelRefusal();
      return d.v.toString();
    }
    case "undef":
    case "sym":
    case "fn":
      return undefined; // omitted, as JSON.stringify omits them
    case "cycle":
      node(walk);
      return depth === 0 ? "null" : JSON.stringify(COURSE_TOOL_CIRCULAR_MARKER);
    case "proxy":
      throw new ModelRefusal();
    case "date":
      // A Date is a value, not a container: it counts as a node but not against the depth.
      node(walk);
      return Number.isNaN(d.ms) ? "null" : JSON.stringify(new Date(d.ms).toISOString());
    case "cls":
      objectNode(walk, depth);
      throw new ModelRefusal();
    case "exotic":
      objectNode(walk, depth);
      switch (d.kind) {
        case "emptyTypedSwapped":
        case "boxedNumberSwapped":
          return "{}"; // a plain-prototype object with no own enumerable keys
        case "arguments":
          visits(walk, 2);
          node(walk);
          node(walk);
          return '{"0":1,"1":"x"}';
        default:
          throw new ModelRefusal();
      }
    case "obj": {
      objectNode(walk, depth);
      const enumerable = d.props.filter((p) => p.kind !== "hidden");
      visits(walk, enumerable.length);
      const sorted = [...enumerable].sort((a, b) => {
        const x = keyString(a.key);
        const y = keyString(b.key);
        return x < y ? -1 : x > y ? 1 : 0;
      });
      const members: string[] = [];
      for (const prop of sorted) {
        if (prop.kind !== "data") continue; // accessors are skipped, never called
        const member = modelRender(walk, prop.d, depth + 1);
        if (member !== undefined) members.push(modelQuote(walk, keyString(prop.key)) + ":" + member);
      }
      return "{" + members.join(",") + "}";
    }
    case "arr": {
      objectNode(walk, depth);
      visits(walk, d.items.length);
      return "[" + d.items.map((item) => (item.k === "v" ? (modelRender(walk, item.d, depth + 1) ?? "null") : "null")).join(",") + "]";
    }
    case "sparse": {
      objectNode(walk, depth);
      visits(walk, d.length);
      const present = new Map<number, Desc>();
      for (const [index, member] of d.set) if (index < d.length) present.set(index, member);
      const members: string[] = [];
      for (let index = 0; index < d.length; index += 1) {
        const member = present.get(index);
        members.push(member === undefined ? "null" : (modelRender(walk, member, depth + 1) ?? "null"));
      }
      return "[" + members.join(",") + "]";
    }
    case "map": {
      objectNode(walk, depth);
      visits(walk, d.entries.length);
      return (
        "[" +
        d.entries
          .map(([k, v]) => {
            const key = modelRender(walk, k, depth + 1) ?? "null";
            return "[" + key + "," + (modelRender(walk, v, depth + 1) ?? "null") + "]";
          })
          .join(",") +
        "]"
      );
    }
    case "set": {
      objectNode(walk, depth);
      visits(walk, d.items.length);
      return "[" + d.items.map((member) => modelRender(walk, member, depth + 1) ?? "null").join(",") + "]";
    }
  }
}

// ---------------------------------------------------------------------------------------
// Helpers for assertions
// ---------------------------------------------------------------------------------------

function codePoints(text: string): number {
  return [...text].length;
}

/** A lone high surrogate in D800-DB7F: generated inputs only hold those inside pairs. */
function hasSplitPair(text: string): boolean {
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    if (unit >= 0xd800 && unit <= 0xdb7f) {
      const next = text.charCodeAt(index + 1);
      if (!(next >= 0xdc00 && next <= 0xdfff)) return true;
      index += 1;
    }
  }
  return false;
}

/** The content invariants of rule 12 that hold for every input. */
function expectBoundedContent(content: string, inputWellFormed: boolean): void {
  const length = codePoints(content);
  expect(length).toBeLessThanOrEqual(MAX);
  if (content.endsWith(MARKER)) expect(length).toBe(MAX);
  expect(hasSplitPair(content)).toBe(false);
  if (inputWellFormed) expect(content.isWellFormed()).toBe(true);
}

/** keys sorted (UTF-16 order), -0 -> 0: what JSON.parse(content) must deep-equal. */
function sortedJson(value: unknown): unknown {
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
function canon(value: unknown): string {
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

function jsonNodes(value: unknown): number {
  if (Array.isArray(value)) return 1 + value.reduce((sum: number, member) => sum + jsonNodes(member), 0);
  if (value !== null && typeof value === "object")
    return 1 + Object.values(value).reduce((sum: number, member) => sum + jsonNodes(member), 0);
  return 1;
}
function jsonContainerDepth(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  return 1 + Object.values(value).reduce((deepest: number, member) => Math.max(deepest, jsonContainerDepth(member)), 0);
}

// ---------------------------------------------------------------------------------------
// 1. The serializer
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
    const length = COURSE_TOOL_MAX_COLLECTION_VISITS - props.length - 1 + extra;
    return {
      t: "obj",
      nullProto: false,
      props: [...props, { key: "holes", kind: "data", d: { t: "sparse", length, set: [] } }],
      symbolKey: false,
    };
  });
  // 128 nodes: an array and its rendered members.
  const nodes = fc.tuple(fc.array(primitive, { minLength: COURSE_TOOL_MAX_NODES + 1, maxLength: COURSE_TOOL_MAX_NODES + 1 }), over).map(
    ([members, extra]): Desc => ({
      t: "arr",
      items: members.slice(0, COURSE_TOOL_MAX_NODES - 1 + extra).map((d): Item => ({ k: "v", d })),
      extra: false,
    }),
  );
  // 32 nested containers of any kind.
  const depth = fc
    .tuple(
      fc.array(fc.constantFrom("arr", "obj", "map", "set"), { minLength: COURSE_TOOL_MAX_DEPTH + 1, maxLength: COURSE_TOOL_MAX_DEPTH + 1 }),
      over,
      primitive,
    )
    .map(
      ([kinds, extra, inner]): Desc =>
        kinds.slice(0, COURSE_TOOL_MAX_DEPTH + extra).reduce<Desc>((d, kind) => {
          if (kind === "arr") return { t: "arr", items: [{ k: "v", d }], extra: false };
          if (kind === "obj") return { t: "obj", nullProto: false, props: [{ key: "k", kind: "data", d }], symbolKey: false };
          if (kind === "map") return { t: "map", entries: [[{ t: "null" }, d]], hostile: false };
          return { t: "set", items: [d], hostile: false };
        }, inner),
    );
  const limit = 1n << BigInt(COURSE_TOOL_MAX_BIGINT_BITS);
  const bigint = fc
    .tuple(over, fc.boolean())
    .map(([extra, negative]): Desc => ({ t: "big", v: (negative ? -1n : 1n) * (limit - 1n + BigInt(extra)) }));
  // 4096 code points in a string (astral characters count once), alone or as a member.
  const string = fc.tuple(fc.constantFrom("a", "😀", "a😀", "\u0000"), over, fc.boolean()).map(([piece, extra, nested]): Desc => {
    const d: Desc = { t: "huge", h: { pieces: [piece], cps: COURSE_TOOL_MAX_STRING_CODE_POINTS + extra } };
    return nested ? { t: "arr", items: [{ k: "v", d }], extra: false } : d;
  });
  return fc.oneof(visits, nodes, depth, bigint, string);
})();

const anyDesc = fc.oneof(hostile.root, hostileWellFormed.root, jsonLike.root, atTheBudgets);

describe("serializeToolOutput on arbitrary hostile values (properties)", () => {
  it("never throws, never runs user code, and keeps content within 4096 code points without splitting a pair", () => {
    fc.assert(
      fc.property(anyDesc, (d) => {
        const value = buildFresh(d);
        let outcome: SerializationOutcome;
        try {
          outcome = serializeToolOutput(value);
        } catch (error) {
          throw new Error(`serializeToolOutput threw: ${String(error)}`);
        }
        expect(hitLog).toEqual([]);
        expect(hits).toBe(0);
        if (outcome.ok) {
          expect(typeof outcome.content).toBe("string");
          expectBoundedContent(
            outcome.content,
            stringsOf(d).every((s) => s.isWellFormed()),
          );
        } else {
          expect(typeof outcome.message).toBe("string");
          expect(outcome.message.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("matches the reference model exactly: accepted or refused, and the exact content", () => {
    fc.assert(
      fc.property(anyDesc, (d) => {
        const outcome = serializeToolOutput(buildFresh(d));
        const expected = expectedOutcome(d);
        expect(outcome.ok).toBe(expected.ok);
        // Compared as JSON string literals, so an unescaped control character shows in the diff.
        if (outcome.ok && expected.ok) expect(JSON.stringify(outcome.content)).toBe(JSON.stringify(expected.content));
      }),
      { numRuns: RUNS },
    );
  });

  it("is deterministic: the same value twice, a rebuilt value, and any key insertion order give the same outcome", () => {
    fc.assert(
      fc.property(anyDesc, fc.integer(), (d, seed) => {
        const value = buildFresh(d);
        const first = serializeToolOutput(value);
        expect(serializeToolOutput(value)).toStrictEqual(first);
        expect(serializeToolOutput(buildFresh(d))).toStrictEqual(first);
        expect(serializeToolOutput(buildFresh(d, shuffledOrder(seed)))).toStrictEqual(first);
        expect(hits).toBe(0);
      }),
      { numRuns: RUNS },
    );
  });

  const jsonWithinBudgets = fc
    .oneof(fc.jsonValue({ maxDepth: 8 }), fc.jsonValue({ maxDepth: 8, stringUnit: "binary" }))
    .filter((value) => jsonNodes(value) <= COURSE_TOOL_MAX_NODES && jsonContainerDepth(value) <= COURSE_TOOL_MAX_DEPTH)
    .filter((value) => typeof value !== "string"); // a top-level string is content verbatim, not JSON

  it("renders JSON-safe values within the budgets as JSON with sorted keys", () => {
    fc.assert(
      fc.property(jsonWithinBudgets, (value) => {
        const outcome = serializeToolOutput(value);
        if (!outcome.ok) throw new Error(`refused a JSON value within budgets: ${outcome.message}`);
        const reference = canon(value); // sorted keys in UTF-16 order (JSON.stringify would put integer keys first)
        if (codePoints(reference) <= MAX) {
          expect(outcome.content).toBe(reference);
          expect(JSON.parse(outcome.content)).toStrictEqual(sortedJson(value));
        } else {
          // Long keys can push a small value past 4096 code points: a prefix of the reference.
          expect(codePoints(outcome.content)).toBe(MAX);
          expect(outcome.content.endsWith(MARKER)).toBe(true);
          expect(reference.startsWith(outcome.content.slice(0, -MARKER.length))).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
  });
});

// ---------------------------------------------------------------------------------------
// 2. executeToolCall on arbitrary call-like inputs
// ---------------------------------------------------------------------------------------

const REGISTERED = ["echo", "picky", "boom", "later"] as const;

function makeRegistry(): ToolRegistry {
  return new ToolRegistry([
    defineTool({
      name: "echo",
      description: "returns its arguments",
      validate: (args: unknown) => ({ ok: true as const, value: args }),
      execute: (args: unknown) => args,
    }),
    defineTool({
      name: "picky",
      description: "refuses every argument",
      validate: (args: unknown) => ({ ok: false as const, error: { refused: args } }),
      execute: () => {
        throw new Error("picky must never execute");
      },
    }),
    defineTool({
      name: "boom",
      description: "throws",
      validate: (args: unknown) => ({ ok: true as const, value: args }),
      execute: () => {
        throw new TypeError("boom");
      },
    }),
    defineTool({
      name: "later",
      description: "resolves asynchronously",
      validate: (args: unknown) => ({ ok: true as const, value: args }),
      execute: async (args: unknown) => {
        await null;
        return { later: args };
      },
    }),
  ]);
}

type FieldHow = "data" | "hidden" | "getter" | "missing";
interface CallField {
  readonly how: FieldHow;
  readonly v: unknown;
}
interface CallDesc {
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
const jsonArgsDescs = descArbitraries({ lone: true, deep: { min: 60, max: 70 }, hostility: 0 });
const anythingValue = fc.anything({
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
const idString = fc.oneof(
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
const callDesc = fc.oneof({ weight: 3, arbitrary: plausibleCall }, { weight: 2, arbitrary: wildCall });

function argsValue(args: CallDesc["args"]): unknown {
  return "d" in args ? build(args.d, []) : args.v;
}

function buildCall(c: CallDesc): unknown {
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

/** Would snapshotJson accept this argument value at `depth` containers? (SPEC rule 4) */
function snapshotable(d: Desc, depth: number): boolean {
  const container = (): boolean => depth < COURSE_TOOL_MAX_ARGUMENT_DEPTH;
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

function expectValidCall(c: CallDesc): boolean {
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
  if (depth >= COURSE_TOOL_MAX_ARGUMENT_DEPTH) return false;
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

/** One thing that makes otherwise JSON arguments malformed (SPEC rule 4). */
type Defect =
  | { readonly at: "prop"; readonly kind: Exclude<PropKind, "data"> }
  | { readonly at: "item"; readonly kind: "hole" | "getter" }
  | { readonly at: "value"; readonly d: Desc };

const emptyObject: Desc = { t: "obj", nullProto: false, props: [], symbolKey: false };
const defect: fc.Arbitrary<Defect> = fc.oneof(
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
function withDefect(root: Desc, pick: number, flaw: Defect): Desc {
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

type Settled = { ok: true; result: CourseToolResultMessage } | { ok: false; error: unknown };
async function settle(promise: Promise<CourseToolResultMessage>): Promise<Settled> {
  try {
    return { ok: true, result: await promise };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Arrays and own enumerable string-keyed members copied into plain objects (for well-formed arguments). */
function plainCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plainCopy);
  if (value === null || typeof value !== "object") return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const member = plainCopy((value as Record<string, unknown>)[key]);
    Object.defineProperty(copy, key, { value: member, writable: true, enumerable: true, configurable: true });
  }
  return copy;
}

function expectLinkedResult(result: CourseToolResultMessage, id: unknown, name: unknown): void {
  expect(Object.isFrozen(result)).toBe(true);
  expect(Object.keys(result).sort()).toEqual(["content", "id", "isError", "role", "toolCallId", "toolName"]);
  expect(result.role).toBe("toolResult");
  expect(typeof id).toBe("string");
  expect(result.toolCallId).toBe(id);
  expect(result.toolName).toBe(name);
  expect(result.id).toBe("tool-result-" + String(id));
  expect(typeof result.isError).toBe("boolean");
  expect(typeof result.content).toBe("string");
  expect(codePoints(result.content)).toBeLessThanOrEqual(MAX);
  if (result.content.endsWith(MARKER)) expect(codePoints(result.content)).toBe(MAX);
}

function expectInvalidCall(error: unknown): void {
  expect(isToolContractError(error)).toBe(true);
  expect((error as { code?: unknown }).code).toBe(COURSE_TOOL_INVALID_TOOL_CALL);
}

describe("executeToolCall on arbitrary call-like inputs (properties)", () => {
  it("arbitrary values: a linked frozen result or INVALID_TOOL_CALL, nothing else", async () => {
    const registry = makeRegistry();
    await fc.assert(
      fc.asyncProperty(anythingValue, async (input) => {
        const settled = await settle(executeToolCall(registry, input, new AbortController().signal));
        if (settled.ok) {
          const record = input as Record<string, unknown>;
          expectLinkedResult(settled.result, record.id, record.name);
        } else {
          expectInvalidCall(settled.error);
        }
        // Without an own "type" data property equal to "toolCall" it cannot be a call.
        const type = typeof input === "object" && input !== null ? Object.getOwnPropertyDescriptor(input, "type") : undefined;
        if (type?.value !== "toolCall") expect(settled.ok).toBe(false);
      }),
      { numRuns: RUNS },
    );
  });

  it("generated calls (accessors, Proxies, non-JSON and sparse arguments): resolve exactly when well-formed, no user code runs", async () => {
    const registry = makeRegistry();
    await fc.assert(
      fc.asyncProperty(callDesc, async (c) => {
        const call = buildCall(c);
        resetHits();
        const settled = await settle(executeToolCall(registry, call, new AbortController().signal));
        expect(hitLog).toEqual([]);
        expect(hits).toBe(0);
        const valid = expectValidCall(c);
        if (!settled.ok) {
          expectInvalidCall(settled.error);
          expect(valid).toBe(false);
          return;
        }
        expect(valid).toBe(true);
        const result = settled.result;
        expectLinkedResult(result, c.id.v, c.name.v);
        const name = c.name.v as string;
        const args = plainCopy(argsValue(c.args)); // a fresh plain copy of the (valid) arguments
        if (name === "echo") {
          const direct = serializeToolOutput(args);
          expect(result.isError).toBe(!direct.ok);
          if (direct.ok) expect(result.content).toBe(direct.content);
          else expect(result.content.startsWith('{"error":{"code":"TOOL_OUTPUT_SERIALIZATION_FAILED"')).toBe(true);
        } else if (name === "picky") {
          expect(result.isError).toBe(true);
          expect(result.content.startsWith('{"error":{"code":"TOOL_ARGUMENTS_INVALID"')).toBe(true);
        } else if (name === "boom") {
          expect(result.isError).toBe(true);
          expect(result.content).toBe('{"error":{"code":"TOOL_EXECUTION_FAILED","message":"TypeError: boom"}}');
        } else if (name === "later") {
          const direct = serializeToolOutput({ later: args });
          expect(result.isError).toBe(!direct.ok);
          if (direct.ok) expect(result.content).toBe(direct.content);
        } else {
          expect(result.isError).toBe(true);
          expect(result.content.startsWith('{"error":{"code":"TOOL_NOT_FOUND"')).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("one defect anywhere in otherwise JSON arguments (accessor, hole, non-enumerable, non-JSON value, cycle...) gives INVALID_TOOL_CALL", async () => {
    const registry = makeRegistry();
    await fc.assert(
      fc.asyncProperty(jsonArgsDescs.object, fc.nat(), defect, fc.constantFrom(...REGISTERED), async (base, pick, flaw, name) => {
        const args = withDefect(base, pick, flaw);
        expect(snapshotable(args, 0)).toBe(false); // the generator really made a malformed call
        const call = { type: "toolCall", id: "call-1", name, arguments: build(args, []) };
        resetHits();
        const settled = await settle(executeToolCall(registry, call, new AbortController().signal));
        expect(hitLog).toEqual([]);
        expect(settled.ok).toBe(false);
        if (!settled.ok) expectInvalidCall(settled.error);
      }),
      { numRuns: RUNS },
    );
  });

  // -------------------------------------------------------------------------------------
  // 3. Mutating the caller's call after executeToolCall started changes nothing seen
  // -------------------------------------------------------------------------------------

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
          if (!settled.ok) throw settled.error;
          expect(seen.validate).toBe(original);
          expect(canon(seen.validateRef)).toBe(original); // what the validator got never changed later
          expect(seen.executeSync).toBe(original);
          expect(seen.executeLate).toBe(original);
          expect(seen.contextId).toBe(id);
          expectLinkedResult(settled.result, id, "recorder");
          const direct = serializeToolOutput(JSON.parse(original));
          expect(settled.result.isError).toBe(!direct.ok);
          if (direct.ok) expect(settled.result.content).toBe(direct.content);
        },
      ),
      { numRuns: RUNS },
    );
  });
});

// ---------------------------------------------------------------------------------------
// 4. A hostile realm. Last in the file: patching prototypes over and over slows the engine's
// later property lookups, and nothing after this should pay for it.
// ---------------------------------------------------------------------------------------

describe("serializeToolOutput in a realm with patched built-ins (property)", () => {
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
