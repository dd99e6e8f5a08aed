// Issue 45 §3: audio and files are attachments as images are (docs/contract.md — Attachments:
// images, audio and files): made by audioContent / fileContent, their declared type checked
// against their bytes, bounded by the attachment budgets, frozen, and moved across threads and
// through Redis by the one mechanism images use. Every executor, the queue's included.
import type { ToolExecutor } from "toolgate";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { PDF_TEXT, PNG_BYTES, WAV_BYTES } from "../../dist/test/fixtures/media-tools.js";
import { CONTRACT_EXECUTORS } from "../support/executors.js";
import { call, errorOf, fixture, neverAborted } from "../support/helpers.js";

const MEDIA_TOOLS = fixture("media-tools");
const text = (data: Uint8Array | undefined) => new TextDecoder().decode(data);

describe.each(CONTRACT_EXECUTORS)("docs/contract.md — Attachments: images, audio and files (%s)", (_label, make) => {
  let executor: ToolExecutor;
  beforeAll(async () => {
    executor = await make([MEDIA_TOOLS]);
  });
  afterAll(() => executor.close());

  test("audio is a frozen attachment of the very bytes, beside the text content", async () => {
    const result = await executor.executeToolCall(call("audio"), neverAborted());
    expect(result).toMatchObject({ content: "", isError: false });
    expect(result.attachments).toEqual([{ type: "audio", mimeType: "audio/wav", data: new Uint8Array(WAV_BYTES) }]);
    expect(Object.keys(result.attachments?.[0] ?? {})).toEqual(["type", "mimeType", "data"]);
    expect(Object.isFrozen(result.attachments) && Object.isFrozen(result.attachments?.[0])).toBe(true);
    expect(result.attachments?.[0]?.data.buffer.byteLength).toBe(WAV_BYTES.length);
  });

  test("a file keeps its name and URI; a file without them has neither key", async () => {
    const pdf = await executor.executeToolCall(call("pdf"), neverAborted());
    expect(pdf.attachments?.[0]).toMatchObject({
      type: "file",
      mimeType: "application/pdf",
      name: "report.pdf",
      uri: "https://example.com/report.pdf",
    });
    expect(text(pdf.attachments?.[0]?.data)).toBe(PDF_TEXT);
    const note = await executor.executeToolCall(call("note"), neverAborted());
    expect(Object.keys(note.attachments?.[0] ?? {})).toEqual(["type", "mimeType", "data"]);
    expect(text(note.attachments?.[0]?.data)).toBe("café ☕ notes");
  });

  test("image, audio and file together, in the tool's order", async () => {
    const result = await executor.executeToolCall(call("mixed"), neverAborted());
    expect(result.content).toBe('{"parts":3}');
    expect(result.attachments?.map((attachment) => [attachment.type, attachment.mimeType])).toEqual([
      ["image", "image/png"],
      ["audio", "audio/wav"],
      ["file", "application/json"],
    ]);
    expect([...(result.attachments?.[0]?.data ?? [])]).toEqual(PNG_BYTES);
  });

  test.each([
    ["audioLie", 'audioContent: the bytes are not a WAV file (RIFF....WAVE), as mimeType "audio/wav" says'],
    [
      "htmlFile",
      'fileContent: mimeType must be one of application/pdf, text/plain, text/markdown, text/csv, application/json (got "text/html")',
    ],
    ["badText", 'fileContent: the bytes are not well-formed UTF-8 text, as mimeType "text/plain" says'],
    ["pathName", "fileContent: name must be a file name of 1 to 255 characters, without a path separator or a control character"],
  ])("%s: a type lie or an unsafe type is the call's TOOL_EXECUTION_FAILED naming it, nothing passed on", async (name, message) => {
    const result = await executor.executeToolCall(call(name), neverAborted());
    expect(errorOf(result).code).toBe("TOOL_EXECUTION_FAILED");
    expect(errorOf(result).message).toContain(message);
    expect(result.attachments).toBeUndefined();
  });

  test("hostile inputs inside the tool: a getter in the options is refused unread, Proxies for bytes or options are refused", async () => {
    const result = await executor.executeToolCall(call("hostileInputs"), neverAborted());
    const { refusals, reads } = JSON.parse(result.content) as { refusals: string[]; reads: number };
    expect(reads).toBe(0);
    expect(refusals).toEqual([
      "fileContent: options.name must be a data property, not an accessor",
      "audioContent: bytes must be a Uint8Array (got a Proxy)",
      expect.stringContaining("fileContent: options"),
    ]);
  });

  test("the tool's attachment budgets bound audio and files as they bound images", async () => {
    const within = await executor.executeToolCall(call("sizedAudio", { bytes: 64 }), neverAborted());
    expect(within.attachments?.[0]?.data.length).toBe(64);
    const over = await executor.executeToolCall(call("sizedAudio", { bytes: 65 }), neverAborted());
    expect(errorOf(over).code).toBe("TOOL_OUTPUT_SERIALIZATION_FAILED"); // as for images over the budgets
    expect(errorOf(over).message).toContain("maxAttachmentBytes");
    expect(over.attachments).toBeUndefined();
    const two = await executor.executeToolCall(call("twoKinds"), neverAborted());
    expect(errorOf(two)).toMatchObject({ code: "TOOL_OUTPUT_SERIALIZATION_FAILED", message: expect.stringContaining("maxAttachments") });
    expect(two.attachments).toBeUndefined();
  });
});
