// audioContent / fileContent: what they accept, what they copy, and what they refuse
// (docs/contract.md — Attachments: images, audio and files); and the same checks where an
// attachment is adopted from another thread (adoptAttachments) or read from Redis
// (decodeAttachments): nothing from there is trusted.
import { Buffer } from "node:buffer";
import { audioContent, fileContent, imageContent, isToolContractError, Limits, resourceLink, withAttachments } from "toolgate";
import { describe, expect, test } from "vitest";
import { adoptAttachments } from "../../dist/src/contract/results.js";
import { decodeAttachments } from "../../dist/src/queue/redis-data.js";
import { PDF_TEXT, PNG_BYTES, WAV_BYTES } from "../../dist/test/fixtures/media-tools.js";

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

const wav = () => new Uint8Array(WAV_BYTES);
const utf8 = (text: string) => new TextEncoder().encode(text);
const pad = (head: number[], length = 16) => {
  const bytes = new Uint8Array(length);
  bytes.set(head);
  return bytes;
};

describe("audioContent", () => {
  test.each([
    ["audio/wav", wav()],
    ["audio/mpeg", pad([0x49, 0x44, 0x33, 0x04])], // an ID3 tag
    ["audio/mpeg", pad([0xff, 0xfb, 0x90, 0x64])], // an MPEG-1 layer III frame
    ["audio/ogg", pad([0x4f, 0x67, 0x67, 0x53])],
    ["audio/flac", pad([0x66, 0x4c, 0x61, 0x43])],
  ])("accepts %s whose bytes start with its signature: a frozen copy, exactly sized", (mimeType, bytes) => {
    const audio = audioContent(bytes, mimeType);
    bytes.fill(0); // later writes to the tool's buffer change nothing
    expect(audio.type).toBe("audio");
    expect(audio.mimeType).toBe(mimeType);
    expect(audio.data[0]).not.toBe(0);
    expect(audio.data.buffer.byteLength).toBe(bytes.length);
    expect(Object.isFrozen(audio)).toBe(true);
  });

  test.each([
    ["PNG bytes declared audio/wav", new Uint8Array(PNG_BYTES), "audio/wav", "not a WAV file (RIFF....WAVE)"],
    [
      "RIFF without WAVE (an AVI) declared audio/wav",
      pad([0x52, 0x49, 0x46, 0x46, 0, 0, 0, 0, 0x41, 0x56, 0x49, 0x20]),
      "audio/wav",
      "not a WAV file",
    ],
    ["a WAV declared audio/mpeg", wav(), "audio/mpeg", "not an MP3 file (an ID3 tag or an MPEG frame)"],
    ["a frame sync with the reserved layer", pad([0xff, 0xe0]), "audio/mpeg", "not an MP3 file"],
    ["a WAV declared audio/ogg", wav(), "audio/ogg", "not an Ogg file (OggS)"],
    ["a WAV declared audio/flac", wav(), "audio/flac", "not a FLAC file (fLaC)"],
    ["three bytes of a signature", new Uint8Array([0x66, 0x4c, 0x61]), "audio/flac", "not a FLAC file"],
  ])("refuses %s", (_label, bytes, mimeType, message) => {
    expect(refused(() => audioContent(bytes, mimeType))).toContain(message);
  });

  test.each([["audio/x-wav"], ["AUDIO/WAV"], ["audio/webm"], ["video/mp4"], ["image/png"], [""], [undefined], [7]])(
    "refuses the mime type %o",
    (mimeType) => {
      expect(refused(() => audioContent(wav(), mimeType))).toContain(
        "audioContent: mimeType must be one of audio/wav, audio/mpeg, audio/ogg, audio/flac",
      );
    },
  );

  test("a Proxy, a subclass's lying length and a patched prototype set choose nothing", () => {
    expect(refused(() => audioContent(new Proxy(wav(), {}), "audio/wav"))).toContain("bytes must be a Uint8Array (got a Proxy)");
    class Lying extends Uint8Array {
      override get length(): number {
        return 4;
      }
    }
    expect(audioContent(new Lying(WAV_BYTES), "audio/wav").data.length).toBe(WAV_BYTES.length);
    const original = Uint8Array.prototype.set;
    Uint8Array.prototype.set = () => {
      throw new Error("patched prototype set called");
    };
    try {
      expect([...audioContent(wav(), "audio/wav").data]).toEqual(WAV_BYTES);
    } finally {
      Uint8Array.prototype.set = original;
    }
  });

  test("over the absolute limit is refused before it is copied or read", () => {
    const huge = new Uint8Array(Limits.ATTACHMENT_BYTES_LIMIT + 1);
    expect(refused(() => audioContent(huge, "audio/wav"))).toBe(
      `audioContent: ${Limits.ATTACHMENT_BYTES_LIMIT + 1} bytes is over the ${Limits.ATTACHMENT_BYTES_LIMIT}-byte attachment limit`,
    );
  });
});

describe("fileContent", () => {
  test("a PDF with a name and a URI; text types must be well-formed UTF-8", () => {
    const pdf = fileContent(utf8(PDF_TEXT), { mimeType: "application/pdf", name: "a b.pdf", uri: "urn:doc:1" });
    expect(pdf).toMatchObject({ type: "file", mimeType: "application/pdf", name: "a b.pdf", uri: "urn:doc:1" });
    expect(Object.isFrozen(pdf)).toBe(true);
    for (const mimeType of ["text/plain", "text/markdown", "text/csv", "application/json"] as const) {
      expect(Object.keys(fileContent(utf8("é,1\n"), { mimeType }))).toEqual(["type", "mimeType", "data"]);
    }
    expect(refused(() => fileContent(new Uint8Array([0xc3]), { mimeType: "text/csv" }))).toContain("not well-formed UTF-8 text");
    expect(refused(() => fileContent(utf8("%PDF"), { mimeType: "application/pdf" }))).toContain("not a PDF file (%PDF-)");
    expect(refused(() => fileContent(new Uint8Array(PNG_BYTES), { mimeType: "application/pdf" }))).toContain("not a PDF file");
  });

  test.each([
    ["text/html"],
    ["image/svg+xml"],
    ["application/javascript"],
    ["application/octet-stream"],
    ["application/x-msdownload"],
    ["Text/Plain"],
  ])("refuses the unsafe or unknown type %s", (mimeType) => {
    expect(refused(() => fileContent(utf8("x"), { mimeType: mimeType as "text/plain" }))).toContain(
      "fileContent: mimeType must be one of application/pdf, text/plain, text/markdown, text/csv, application/json",
    );
  });

  test.each([
    ["a path", { name: "dir/a.txt" }, "name must be a file name"],
    ["a Windows path", { name: "C:\\a.txt" }, "name must be a file name"],
    ["a control character", { name: "a\u0000.txt" }, "name must be a file name"],
    ["a C1 control character", { name: "a\u0085.txt" }, "name must be a file name"],
    ["an empty name", { name: "" }, "name must be a file name"],
    ["a long name", { name: "a".repeat(256) }, "name must be a file name"],
    ["a number", { name: 7 }, "name must be a file name"],
    ["a relative URI", { uri: "report.pdf" }, "uri must be an absolute URI"],
    ["a URI with a space", { uri: "https://a b" }, "uri must be an absolute URI"],
    ["a javascript: URI", { uri: "JavaScript:alert(1)" }, "uri must be an absolute URI"],
    ["a data: URI", { uri: "data:text/html,<b>" }, "uri must be an absolute URI"],
    ["a long URI", { uri: "https://e.com/" + "a".repeat(2048) }, "uri must be an absolute URI"],
    ["an unknown option", { title: "t" }, 'fileContent: options has an unknown option "title"'],
  ])("refuses %s", (_label, extra, message) => {
    expect(refused(() => fileContent(utf8("x"), { mimeType: "text/plain", ...extra } as never))).toContain(message);
  });

  test("options are read once, as own data properties: a getter is refused unread, a Proxy before any trap runs", () => {
    let reads = 0;
    const withGetter = Object.defineProperty({ mimeType: "text/plain" }, "name", {
      enumerable: true,
      get: () => {
        reads += 1;
        return "a.txt";
      },
    });
    expect(refused(() => fileContent(utf8("x"), withGetter as never))).toContain("options.name must be a data property, not an accessor");
    let traps = 0;
    const count = (): never => {
      traps += 1;
      return [] as never;
    };
    const proxy = new Proxy({ mimeType: "text/plain" }, { get: count, has: count, ownKeys: count, getOwnPropertyDescriptor: count });
    expect(refused(() => fileContent(utf8("x"), proxy as never))).toContain("fileContent: options");
    expect([reads, traps]).toEqual([0, 0]);
  });
});

describe("withAttachments takes every kind", () => {
  test("image, audio and file in one list, in order; a look-alike audio record is refused", () => {
    const output = withAttachments("x", [
      imageContent(new Uint8Array(PNG_BYTES), "image/png"),
      audioContent(wav(), "audio/wav"),
      fileContent(utf8("a"), { mimeType: "text/plain" }),
    ]);
    expect(output).toBeDefined();
    expect(refused(() => withAttachments("x", [{ type: "audio", mimeType: "audio/wav", data: wav() }] as never))).toContain(
      "[0] is not an attachment made by imageContent, audioContent, fileContent or resourceLink",
    );
  });
});

describe("records from another thread are checked as a tool's attachments are (adoptAttachments)", () => {
  const record = (fields: Record<string, unknown>) => ({ type: "audio", mimeType: "audio/wav", data: wav(), ...fields });
  test("a well-formed record is adopted without a copy, frozen", () => {
    const data = utf8(PDF_TEXT);
    const list = adoptAttachments([{ type: "file", mimeType: "application/pdf", data, name: "r.pdf", uri: "urn:x" }]);
    expect(typeof list).not.toBe("string");
    expect((list as readonly { data: Uint8Array }[])[0]?.data).toBe(data);
    expect(Object.isFrozen((list as readonly object[])[0])).toBe(true);
  });

  test.each([
    ["a type lie", record({ data: new Uint8Array(PNG_BYTES) })],
    ["an image's type on audio", record({ mimeType: "image/png" })],
    ["an unknown kind", record({ type: "resource" })],
    ["a name on audio", record({ name: "a.wav" })],
    ["a file named by a path", { type: "file", mimeType: "text/plain", data: utf8("a"), name: "../a" }],
    ["a file with a javascript: URI", { type: "file", mimeType: "text/plain", data: utf8("a"), uri: "javascript:x" }],
    ["text that is not UTF-8", { type: "file", mimeType: "text/plain", data: new Uint8Array([0xff]) }],
    ["a getter for data", Object.defineProperty(record({}), "data", { get: () => wav(), enumerable: true })],
    ["a Proxy", new Proxy(record({}), {})],
  ])("refuses %s", (_label, forged) => {
    expect(adoptAttachments([forged])).toMatch(/is not an attachment made by imageContent, audioContent, fileContent or resourceLink/);
  });
});

describe("attachments read from Redis (decodeAttachments)", () => {
  const base64 = (bytes: number[] | Uint8Array) => Buffer.from(bytes).toString("base64");
  test("audio and a named file come back as records to adopt, their names and URIs kept", () => {
    const decoded = decodeAttachments([
      { type: "audio", mimeType: "audio/wav", data: base64(WAV_BYTES) },
      { type: "file", mimeType: "text/plain", data: base64(utf8("hi")), name: "a.txt", uri: "urn:a" },
    ]);
    expect(decoded).toEqual([
      { type: "audio", mimeType: "audio/wav", data: new Uint8Array(WAV_BYTES) },
      { type: "file", mimeType: "text/plain", data: utf8("hi"), name: "a.txt", uri: "urn:a" },
    ]);
    expect(typeof adoptAttachments(decoded)).not.toBe("string");
  });

  test.each([
    ["an unknown kind", { type: "resource", mimeType: "text/plain", data: "AAAA" }],
    ["an unsafe type", { type: "file", mimeType: "text/html", data: "AAAA" }],
    ["a kind's wrong type", { type: "audio", mimeType: "application/pdf", data: "AAAA" }],
    ["a name of a number", { type: "file", mimeType: "text/plain", data: "AAAA", name: 1 }],
    ["an oversized URI", { type: "file", mimeType: "text/plain", data: "AAAA", uri: "u:" + "a".repeat(3000) }],
  ])("refuses %s", (_label, forged) => {
    expect(typeof decodeAttachments([forged])).toBe("string");
  });

  test("a type lie passes the decoder (it reads shapes) and is refused where it is adopted", () => {
    const decoded = decodeAttachments([{ type: "audio", mimeType: "audio/flac", data: base64(WAV_BYTES) }]);
    expect(Array.isArray(decoded)).toBe(true);
    expect(adoptAttachments(decoded)).toMatch(/\[0\] is not an attachment/);
  });
});

describe("resourceLink", () => {
  test("a frozen link with its URI and name, and its media type and description only when given", () => {
    const link = resourceLink({ uri: "https://example.com/a.pdf", name: "a.pdf", mimeType: "application/pdf", description: "A\n\tB" });
    expect(link).toEqual({
      type: "resourceLink",
      uri: "https://example.com/a.pdf",
      name: "a.pdf",
      mimeType: "application/pdf",
      description: "A\n\tB",
    });
    expect(Object.isFrozen(link)).toBe(true);
    expect(Object.keys(resourceLink({ uri: "file:///src/main.rs", name: "src/main.rs" }))).toEqual(["type", "uri", "name"]);
  });

  test.each([
    [{ name: "a" }, "resourceLink: uri is required"],
    [{ uri: "https://a" }, "resourceLink: name is required"],
    [{ uri: "data:text/html,x", name: "a" }, "resourceLink: uri must be an absolute URI"],
    [{ uri: "no scheme", name: "a" }, "resourceLink: uri must be an absolute URI"],
    [{ uri: `https://${"a".repeat(2048)}`, name: "a" }, "resourceLink: uri must be an absolute URI"],
    [{ uri: "https://a", name: "" }, "resourceLink: name must be a string of 1 to 255 characters without a control character"],
    [{ uri: "https://a", name: "a\u0000b" }, "resourceLink: name must be"],
    [{ uri: "https://a", name: "a".repeat(256) }, "resourceLink: name must be"],
    [{ uri: "https://a", name: "a", mimeType: "PDF" }, "resourceLink: mimeType must be a media type (type/subtype, lower case)"],
    [{ uri: "https://a", name: "a", mimeType: "text/plain; charset=utf-8" }, "resourceLink: mimeType must be"],
    [{ uri: "https://a", name: "a", description: "" }, "resourceLink: description must be a string of 1 to 1024 characters"],
    [{ uri: "https://a", name: "a", description: "a\u0007" }, "resourceLink: description must be"],
    [{ uri: "https://a", name: "a", href: "https://b" }, 'resourceLink: options has an unknown option "href"'],
  ])("refuses %j", (options, message) => {
    expect(refused(() => resourceLink(options as never))).toContain(message);
  });

  test("withAttachments takes links beside attachments; a look-alike link record is refused", () => {
    expect(() =>
      withAttachments("x", [resourceLink({ uri: "https://a", name: "a" }), imageContent(new Uint8Array(PNG_BYTES), "image/png")]),
    ).not.toThrow();
    expect(refused(() => withAttachments("x", [{ type: "resourceLink", uri: "https://a", name: "a" } as never]))).toContain(
      "is not an attachment made by imageContent, audioContent, fileContent or resourceLink",
    );
  });

  test("records from another thread are adopted after the same checks; a link with data or a bad URI is refused", () => {
    const adopted = adoptAttachments([{ type: "resourceLink", uri: "https://a", name: "a", description: "d" }]);
    expect(adopted).toEqual([{ type: "resourceLink", uri: "https://a", name: "a", description: "d" }]);
    expect(Object.isFrozen((adopted as object[])[0])).toBe(true);
    expect(typeof adoptAttachments([{ type: "resourceLink", uri: "javascript:x", name: "a" }])).toBe("string");
    expect(typeof adoptAttachments([{ type: "resourceLink", uri: "https://a", name: "a", data: new Uint8Array(1) }])).toBe("string");
    expect(typeof adoptAttachments([{ type: "resourceLink", uri: "https://a" }])).toBe("string");
  });

  test("from Redis: a link's strings are bounded by the decoder, then adopted whole", () => {
    expect(decodeAttachments([{ type: "resourceLink", uri: "https://a", name: "a", mimeType: "text/plain" }])).toEqual([
      { type: "resourceLink", uri: "https://a", name: "a", mimeType: "text/plain" },
    ]);
    expect(decodeAttachments([{ type: "resourceLink", uri: 7, name: "a" }])).toBe("a host's resource link is malformed");
    expect(decodeAttachments([{ type: "resourceLink", uri: "https://a", name: "a".repeat(256) }])).toBe(
      "a host's resource link is malformed",
    );
    expect(decodeAttachments([{ type: "resourceLink", uri: "https://a", name: "a", description: "d".repeat(1025) }])).toBe(
      "a host's resource link is malformed",
    );
  });
});
