// The reference model of serializeToolOutput: the exact outcome (accepted with this content,
// or refused) for the value a description stands for, written from the contract
// (docs/contract.md, rule 10 — safe serialization, rule 11 — work budgets, rule 12 — content
// cap) and the rendering and budget tables in docs/guarantees.md. The one implementation
// choice it mirrors (a Date counts as a node, not a container) is marked where it happens.
import { Limits } from "toolgate";
import { type Desc, hugeString, keyString } from "./hostile-values.js";

const MAX = Limits.MAX_CONTENT_CODE_POINTS;
const MARKER = Limits.TRUNCATION_MARKER;

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
export function expectedOutcome(d: Desc): { ok: true; content: string } | { ok: false } {
  if (d.t === "str" || d.t === "huge") {
    const { text, cut } = cutCodePoints(d.t === "str" ? d.s : hugeString(d.h), Limits.MAX_STRING_CODE_POINTS);
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
  if (walk.nodes > Limits.MAX_NODES) throw new ModelRefusal();
}
function visits(walk: ModelWalk, count: number): void {
  walk.visits += count;
  if (walk.visits > Limits.MAX_COLLECTION_VISITS) throw new ModelRefusal();
}
/** An object value at `depth` containers: refused past the depth budget, else one node. */
function objectNode(walk: ModelWalk, depth: number): void {
  if (depth >= Limits.MAX_DEPTH) throw new ModelRefusal();
  node(walk);
}
function modelQuote(walk: ModelWalk, text: string): string {
  const bounded = cutCodePoints(text, Limits.MAX_STRING_CODE_POINTS);
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
      const limit = 1n << BigInt(Limits.MAX_BIGINT_BITS);
      if (d.v >= limit || d.v <= -limit) throw new ModelRefusal();
      return d.v.toString();
    }
    case "undef":
    case "sym":
    case "fn":
      return undefined; // omitted, as JSON.stringify omits them
    case "cycle":
      node(walk);
      return depth === 0 ? "null" : JSON.stringify(Limits.CIRCULAR_MARKER);
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
