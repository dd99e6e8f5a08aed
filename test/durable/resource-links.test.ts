// A durable record keeps a result's resource links with its attachments (src/durable/record.ts):
// encoded beside them, read back field by field within their limits (a damaged link makes the
// record damaged, never replayed), and adopted whole (adoptAttachments) before a replay.
import { InProcessToolExecutor, imageContent, resourceLink, ToolRegistry, withAttachments } from "toolgate";
import { describe, expect, test } from "vitest";
import { adoptAttachments } from "../../dist/src/contract/results.js";
import { encodeOutcome, readOutcome } from "../../dist/src/durable/record.js";
import { call, neverAborted } from "../support/helpers.js";
import { makeStore, redisUrl, type StoreKind, unique } from "./kit.js";

const MAX_BYTES = 1024;
const link = {
  type: "resourceLink",
  uri: "https://example.com/a.pdf",
  name: "a.pdf",
  mimeType: "application/pdf",
  description: "A",
} as const;
const image = { type: "image", mimeType: "image/png", data: new Uint8Array([0x89, 0x50, 0x4e, 0x47]) } as const;

describe("durable records: resource links", () => {
  test("kept in order beside attachments, and read back as they were", () => {
    const bare = { type: "resourceLink", uri: "file:///src/main.rs", name: "main.rs" } as const;
    const text = encodeOutcome({ fatal: false, content: "x", isError: false, attachments: [link, image, bare] });
    const read = readOutcome(text, MAX_BYTES);
    expect(read).toEqual({ fatal: false, content: "x", isError: false, attachments: [link, image, bare] });
    const attachments = (read as unknown as { attachments: object[] }).attachments;
    expect(Object.keys(attachments[2] as object)).toEqual(["type", "uri", "name"]);
    expect(Object.isFrozen(attachments[0])).toBe(true);
    expect(adoptAttachments(attachments)).toEqual([link, image, bare]);
  });

  test.each([
    ["data in a link", ["resourceLink", null, "AAAA", "a", "https://a", null]],
    ["an empty name", ["resourceLink", null, null, "", "https://a", null]],
    ["a long name", ["resourceLink", null, null, "a".repeat(256), "https://a", null]],
    ["a URI that is not a string", ["resourceLink", null, null, "a", 7, null]],
    ["a long description", ["resourceLink", null, null, "a", "https://a", "d".repeat(1025)]],
    ["a six-field image", ["image", "image/png", "iVBORw==", null, null, null]],
  ])("%s: the record is damaged", (_label, member) => {
    expect(readOutcome(JSON.stringify({ k: "r", c: "x", e: 0, a: [member] }), MAX_BYTES)).toBeUndefined();
  });
});

describe.each(["memory", ...(redisUrl === undefined ? [] : ["redis"])] as StoreKind[])(
  "a durable call's links, replayed (%s store)",
  (kind) => {
    test("a re-issued call is replayed with the same resourceLinks and attachments; the tool ran once", async () => {
      const { store } = makeStore(kind);
      let runs = 0;
      const registry = new ToolRegistry([
        {
          name: "linked",
          description: "Links and an image.",
          validate: (args: unknown) => ({ ok: true as const, value: args }),
          execute: () => {
            runs += 1;
            const { type: _type, ...fields } = link;
            return withAttachments("linked", [resourceLink(fields), imageContent(image.data, "image/png")]);
          },
        },
      ]);
      const executor = new InProcessToolExecutor(registry, { durable: { store } });
      try {
        const options = { durable: { runId: unique("run") } };
        const first = await executor.executeToolCall(call("linked", {}, "l1"), neverAborted(), options);
        const again = await executor.executeToolCall(call("linked", {}, "l1"), neverAborted(), options);
        expect(first.resourceLinks).toEqual([link]);
        expect(first.attachments).toEqual([image]);
        expect(again).toEqual(first);
        expect(runs).toBe(1);
      } finally {
        await executor.close();
        await store.close();
      }
    });
  },
);
