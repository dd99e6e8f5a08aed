// imageContent / withAttachments: what they accept, what they copy, and the budgets.
import { Buffer } from "node:buffer";
import { executeToolCall, imageContent, isToolContractError, Limits, ToolRegistry, withAttachments } from "toolgate";
import { describe, expect, test } from "vitest";
import { call, errorOf, neverAborted } from "../support/helpers.js";

function refused(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(isToolContractError(error)).toBe(true);
    expect((error as { code: string }).code).toBe("INVALID_ARGUMENT");
    return (error as Error).message;
  }
  throw new Error("expected a ToolContractError");
}

describe("docs/operations.md — Images and other attachments: imageContent", () => {
  test("copies the bytes now, into a buffer of exactly their size (transferable on its own)", () => {
    const backing = new Uint8Array([9, 1, 2, 3, 9]);
    const view = backing.subarray(1, 4);
    const image = imageContent(view, "image/webp");
    backing.fill(0); // later writes to the tool's buffer change nothing
    expect(image).toEqual({ type: "image", mimeType: "image/webp", data: new Uint8Array([1, 2, 3]) });
    expect(image.data.buffer.byteLength).toBe(3);
    expect(image.data.buffer).not.toBe(backing.buffer);
    expect(Object.isFrozen(image)).toBe(true);
  });

  test("a Buffer is a Uint8Array; a subclass's own length and set are not consulted", () => {
    expect(imageContent(Buffer.from([1, 2]), "image/gif").data).toEqual(new Uint8Array([1, 2]));
    class Lying extends Uint8Array {
      override get length(): number {
        return 1;
      }
      override set(): void {
        throw new Error("patched set called");
      }
    }
    const lying = new Lying([7, 8, 9]);
    expect(imageContent(lying, "image/png").data).toEqual(new Uint8Array([7, 8, 9]));
    const original = Uint8Array.prototype.set;
    Uint8Array.prototype.set = () => {
      throw new Error("patched prototype set called");
    };
    try {
      expect(imageContent(new Uint8Array([5]), "image/png").data).toEqual(new Uint8Array([5]));
    } finally {
      Uint8Array.prototype.set = original;
    }
  });

  test.each([
    ["an ArrayBuffer", new ArrayBuffer(4), "bytes must be a Uint8Array (got an object)"],
    ["a Uint16Array", new Uint16Array(2), "bytes must be a Uint8Array (got an object)"],
    ["a DataView", new DataView(new ArrayBuffer(2)), "bytes must be a Uint8Array (got an object)"],
    ["a Proxy of a Uint8Array", new Proxy(new Uint8Array(2), {}), "bytes must be a Uint8Array (got a Proxy)"],
    ["an array of numbers", [1, 2, 3], "bytes must be a Uint8Array (got an array)"],
    ["a base64 string", "iVBORw0KGgo=", "bytes must be a Uint8Array (got a string)"],
    ["undefined", undefined, "bytes must be a Uint8Array (got undefined)"],
    ["no bytes", new Uint8Array(0), "imageContent: bytes is empty"],
  ])("refuses %s", (_label, bytes, message) => {
    expect(refused(() => imageContent(bytes, "image/png"))).toContain(message);
  });

  test.each([["image/svg+xml"], ["IMAGE/PNG"], ["text/plain"], [""], [undefined], [42]])("refuses the mime type %o", (mimeType) => {
    expect(refused(() => imageContent(new Uint8Array(1), mimeType))).toContain(
      "mimeType must be one of image/png, image/jpeg, image/gif, image/webp",
    );
  });

  test("one image over the byte budget is refused before it is copied", () => {
    // The constructor refuses what no budget admits; a call's own budgets apply to its result
    // (test/executor/attachment-budgets.test.ts).
    expect(refused(() => imageContent(new Uint8Array(Limits.ATTACHMENT_BYTES_LIMIT + 1), "image/png"))).toBe(
      `imageContent: ${Limits.ATTACHMENT_BYTES_LIMIT + 1} bytes is over the ${Limits.ATTACHMENT_BYTES_LIMIT}-byte attachment limit`,
    );
    expect(imageContent(new Uint8Array(Limits.ATTACHMENT_BYTES_LIMIT), "image/png").data.length).toBe(Limits.ATTACHMENT_BYTES_LIMIT);
  });
});

describe("docs/operations.md — Images and other attachments: withAttachments", () => {
  const small = () => imageContent(new Uint8Array([1]), "image/png");

  test("the list is read by index once: changing it afterwards changes nothing", async () => {
    const list = [small()];
    const output = withAttachments("text", list);
    list.push(small());
    const registry = new ToolRegistry([
      { name: "t", description: "d", validate: (a: unknown) => ({ ok: true as const, value: a }), execute: () => output },
    ]);
    const result = await executeToolCall(registry, call("t"), neverAborted());
    expect(result.content).toBe("text");
    expect(result.attachments).toHaveLength(1);
    expect(Object.isFrozen(result.attachments)).toBe(true);
  });

  test.each([
    ["not an array", () => withAttachments("x", "image" as never), "withAttachments must be an array (got a string)"],
    ["a Proxy", () => withAttachments("x", new Proxy([small()], {})), "withAttachments must be an array (got a Proxy)"],
    [
      "sparse",
      () => {
        const sparse = [small(), small(), small()];
        delete sparse[1];
        return withAttachments("x", sparse);
      },
      "withAttachments: [1] is not an attachment made by imageContent, audioContent, fileContent or resourceLink (got undefined)",
    ],
    [
      "a look-alike",
      () => withAttachments("x", [{ type: "image", mimeType: "image/png", data: new Uint8Array(1) }] as never),
      "withAttachments: [0] is not an attachment made by imageContent, audioContent, fileContent or resourceLink (got an object)",
    ],
    [
      "an accessor member",
      () => withAttachments("x", Object.defineProperty([], 0, { get: small, enumerable: true }) as never),
      "withAttachments: [0] is not an attachment made by imageContent, audioContent, fileContent or resourceLink (got undefined)",
    ],
    [
      "too many",
      () => withAttachments("x", Array.from({ length: Limits.ATTACHMENTS_LIMIT + 1 }, small)),
      `withAttachments: ${Limits.ATTACHMENTS_LIMIT + 1} attachments is over the limit of ${Limits.ATTACHMENTS_LIMIT}`,
    ],
    [
      "over the byte budget in total",
      () => {
        const half = imageContent(new Uint8Array(Limits.ATTACHMENT_BYTES_LIMIT / 2 + 1), "image/png");
        return withAttachments("x", [half, half]);
      },
      `withAttachments: the attachments are over the ${Limits.ATTACHMENT_BYTES_LIMIT}-byte budget in total`,
    ],
  ])("refuses a list that is %s", (_label, make, message) => {
    expect(refused(make)).toBe(message);
  });

  test("a look-alike returned by a tool is ordinary output: serialized, never an attachment", async () => {
    const registry = new ToolRegistry([
      {
        name: "fake",
        description: "d",
        validate: (a: unknown) => ({ ok: true as const, value: a }),
        execute: () => ({ type: "image", mimeType: "image/png", data: "aGk=" }),
      },
    ]);
    const result = await executeToolCall(registry, call("fake"), neverAborted());
    expect(result.content).toBe('{"data":"aGk=","mimeType":"image/png","type":"image"}');
    expect("attachments" in result).toBe(false);
  });

  test("content is still capped; an error result never carries attachments", async () => {
    const registry = new ToolRegistry([
      {
        name: "big",
        description: "d",
        validate: (a: unknown) => ({ ok: true as const, value: a }),
        execute: () => withAttachments("y".repeat(5000), [small()]),
      },
      {
        name: "unserializable",
        description: "d",
        validate: (a: unknown) => ({ ok: true as const, value: a }),
        execute: () => withAttachments(new Proxy({}, {}), [small()]),
      },
    ]);
    const big = await executeToolCall(registry, call("big"), neverAborted());
    expect([...big.content].length).toBe(4096);
    expect(big.attachments).toHaveLength(1);
    const failed = await executeToolCall(registry, call("unserializable"), neverAborted());
    expect(errorOf(failed).code).toBe("TOOL_OUTPUT_SERIALIZATION_FAILED");
    expect("attachments" in failed).toBe(false);
  });
});
