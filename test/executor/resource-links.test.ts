// Resource links (docs/contract.md — Attachments: images, audio, files and resource links): made
// by resourceLink, checked (URI, name, media type, description), counted against maxAttachments,
// carried across threads and through Redis as attachments are, and published apart from them
// as the result's `resourceLinks`, in the tool's order. Every executor, the queue's included.
import type { ToolExecutor } from "toolgate";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { REPORT_LINK, SOURCE_LINK } from "../../dist/test/fixtures/link-tools.js";
import { PNG_BYTES } from "../../dist/test/fixtures/media-tools.js";
import { CONTRACT_EXECUTORS } from "../support/executors.js";
import { call, errorOf, fixture, neverAborted } from "../support/helpers.js";

const LINK_TOOLS = fixture("link-tools");

describe.each(CONTRACT_EXECUTORS)("resource links (%s)", (_label, make) => {
  let executor: ToolExecutor;
  beforeAll(async () => {
    executor = await make([LINK_TOOLS]);
  });
  afterAll(() => executor.close());

  test("links beside an image: the image in attachments, the links in resourceLinks, in order, frozen, exact keys", async () => {
    const result = await executor.executeToolCall(call("linked"), neverAborted());
    expect(result).toMatchObject({ content: '{"found":2}', isError: false });
    expect(result.attachments).toEqual([{ type: "image", mimeType: "image/png", data: new Uint8Array(PNG_BYTES) }]);
    expect(result.resourceLinks).toEqual([
      { type: "resourceLink", ...REPORT_LINK },
      { type: "resourceLink", ...SOURCE_LINK },
    ]);
    expect(Object.keys(result.resourceLinks?.[1] ?? {})).toEqual(["type", "uri", "name"]);
    expect(Object.isFrozen(result.resourceLinks) && Object.isFrozen(result.resourceLinks?.[0])).toBe(true);
    expect(Object.keys(result)).toEqual(["role", "id", "toolCallId", "toolName", "content", "isError", "attachments", "resourceLinks"]);
  });

  test("a link alone: resourceLinks only, no attachments key", async () => {
    const result = await executor.executeToolCall(call("linkOnly"), neverAborted());
    expect(result.isError).toBe(false);
    expect(result.resourceLinks).toEqual([{ type: "resourceLink", ...SOURCE_LINK }]);
    expect("attachments" in result).toBe(false);
  });

  test("an active-content URI is the call's TOOL_EXECUTION_FAILED naming it", async () => {
    const result = await executor.executeToolCall(call("scriptLink"), neverAborted());
    expect(errorOf(result)).toMatchObject({ code: "TOOL_EXECUTION_FAILED" });
    expect(errorOf(result).message).toContain("resourceLink: uri must be an absolute URI (scheme:…, not javascript:, vbscript: or data:)");
    expect(result.resourceLinks).toBeUndefined();
  });

  test("links count against maxAttachments: three over a budget of two is an error, nothing published", async () => {
    const result = await executor.executeToolCall(call("manyLinks"), neverAborted());
    expect(result.isError).toBe(true);
    expect(errorOf(result).message).toContain("3 attachments is over the limit of 2");
    expect(result.resourceLinks).toBeUndefined();
  });
});
