// The serializer benchmark's three inputs. Each stays inside the serializer's budgets
// (<= 128 values, <= 256 collection members, depth <= 32, content <= 4096 code points), so
// toolgate renders it in full and its output equals safe-stable-stringify's byte for byte.

/** A small seeded PRNG (mulberry32): the shapes are the same on every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 100 keys, inserted in shuffled order (so a sorting serializer has real work), mixed values. */
export function flat100(): Record<string, unknown> {
  const next = random(100);
  const keys = Array.from({ length: 100 }, (_, index) => `field_${String(index).padStart(3, "0")}`);
  for (let index = keys.length - 1; index > 0; index -= 1) {
    const other = Math.floor(next() * (index + 1));
    [keys[index], keys[other]] = [keys[other] as string, keys[index] as string];
  }
  const object: Record<string, unknown> = {};
  keys.forEach((key, index) => {
    object[key] = index % 3 === 0 ? Math.round(next() * 1e6) / 100 : index % 3 === 1 ? `value ${index}` : index % 2 === 0;
  });
  return object;
}

/** An order-like document: 121 values, 121 collection members, depth 4. */
export function nested120(): Record<string, unknown> {
  const next = random(120);
  return {
    orderId: "ord_7f3a9c",
    customer: { id: 4211, name: "Ada Lovelace", email: "ada@example.com", tags: ["vip", "eu", "newsletter"] },
    items: Array.from({ length: 14 }, (_, index) => ({
      sku: `SKU-${1000 + index}`,
      qty: 1 + Math.floor(next() * 5),
      price: Math.round(next() * 10_000) / 100,
      options: { color: ["red", "green", "blue"][index % 3], size: ["S", "M", "L", "XL"][index % 4] },
    })),
    totals: { subtotal: 812.4, tax: 162.48, total: 974.88 },
    meta: { createdAt: "2025-01-31T12:00:00.000Z", source: "api", flags: [true, false, true, false] },
  };
}

/** A 4000-character string with quotes, backslashes, newlines and tabs (about 1 in 100 characters escaped), in an object. */
export function string4000(): Record<string, unknown> {
  const words = ["tool", "boundary", "model", "call", "result", "worker", "signal", "abort", "content", "budget"];
  const escapes = ['"', "\\", "\n", "\t"];
  let text = "";
  for (let index = 0; text.length < 4000; index += 1) {
    text += (words[index % words.length] as string) + (index % 13 === 12 ? (escapes[index % escapes.length] as string) : " ");
  }
  return { path: "/var/log/app.log", text: text.slice(0, 4000) };
}

/** What the serializer budgets count: values (nodes), collection members, and depth. */
export function measureShape(value: unknown, depth = 0): { nodes: number; members: number; depth: number } {
  if (typeof value !== "object" || value === null) return { nodes: 1, members: 0, depth };
  const children = Array.isArray(value) ? value : Object.values(value);
  const total = { nodes: 1, members: children.length, depth: depth + 1 };
  for (const child of children) {
    const inner = measureShape(child, depth + 1);
    total.nodes += inner.nodes;
    total.members += inner.members;
    total.depth = Math.max(total.depth, inner.depth);
  }
  return total;
}

export const SHAPES = { flat100, nested120, string4000 } as const;
export type ShapeName = keyof typeof SHAPES;
