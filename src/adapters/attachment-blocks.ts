// A result's attachments as base64 blocks, the shapes MCP's and Pi's content share for images
// (`{ type: "image", data, mimeType }`) and MCP's for audio (`{ type: "audio", data, mimeType }`),
// with toolgate's own for files (`{ type: "file", data, mimeType, name?, uri? }`, which each
// adapter maps to its framework's own part where it has one); and a result's text as those
// frameworks' text block. Resource links apart, as
// `{ type: "resourceLink", uri, name, mimeType?, description? }` blocks (MCP's `resource_link`;
// a text line saying what they link to elsewhere). One encoder for every adapter.
// docs/adapters.md — What each framework carries; docs/operations.md — Images and other attachments.
import { Buffer } from "node:buffer";
import { ContractErrorCode } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import type { AudioMimeType, FileMimeType, ImageMimeType } from "../contract/media-types.js";
import { isProxy, JSONStringify, ObjectFreeze, ObjectHasOwn, ReflectApply, TypedArrayPrototypeGetLength } from "../contract/primordials.js";
import type { CarriedAttachment, ToolAttachment, ToolResultMessage } from "../contract/results.js";
import { adoptAttachments } from "../contract/results.js";
import { ownDataOr } from "../contract/untrusted.js";

// Captured at load: `buffer.toString("base64")` looks `base64Slice` up on the instance, so a
// patched Buffer.prototype would choose the text. The native slice takes any Uint8Array.
const base64Slice = intrinsicSlice("base64Slice");
const utf8Slice = intrinsicSlice("utf8Slice");

function intrinsicSlice(name: "base64Slice" | "utf8Slice"): (this: Uint8Array, start: number, end: number) => string {
  const slice: unknown = (Buffer.prototype as unknown as { readonly [key: string]: unknown })[name];
  if (typeof slice !== "function") throw new Error(`toolgate: missing intrinsic Buffer.prototype.${name}`);
  return slice as (this: Uint8Array, start: number, end: number) => string;
}

/** An image attachment as a framework sees it: the bytes in base64 (MCP's and Pi's `ImageContent`). Frozen. */
export interface ToolgateImageBlock {
  readonly type: "image";
  /** The attachment's bytes, base64-encoded (standard alphabet, padded). */
  readonly data: string;
  readonly mimeType: ImageMimeType;
}

/** An audio attachment as a framework sees it: the bytes in base64 (MCP's `AudioContent`). Frozen. */
export interface ToolgateAudioBlock {
  readonly type: "audio";
  /** The attachment's bytes, base64-encoded (standard alphabet, padded). */
  readonly data: string;
  readonly mimeType: AudioMimeType;
}

/** A file attachment as a framework sees it: the bytes in base64, its name and URI when it has them. Frozen. */
export interface ToolgateFileBlock {
  readonly type: "file";
  /** The attachment's bytes, base64-encoded (standard alphabet, padded). */
  readonly data: string;
  readonly mimeType: FileMimeType;
  readonly name?: string;
  readonly uri?: string;
  /** The document as text, for the text types (their bytes are well-formed UTF-8); absent for a PDF. */
  readonly text?: string;
}

/** One attachment as a framework sees it. */
export type ToolgateAttachmentBlock = ToolgateImageBlock | ToolgateAudioBlock | ToolgateFileBlock;

/** A result's attachments and its resource links as blocks, each list in the result's order. */
export interface CarriedBlocks {
  readonly attachments: readonly ToolgateAttachmentBlock[];
  readonly links: readonly ToolgateResourceLinkBlock[];
}

/**
 * The result's attachments and resource links as blocks (`attachmentBlocks`, `resourceLinkBlocks`);
 * none of either for a Proxy (its traps would run). Every adapter reads both lists: one Proxy
 * test serves the two, and a result carrying neither, most results, costs two own-key checks
 * more and makes nothing.
 */
export function carriedBlocks(result: ToolResultMessage, api: string): CarriedBlocks {
  if (isProxy(result)) return CARRIES_NONE;
  const attachments = attachmentBlocks(result, api);
  const links = resourceLinkBlocks(result, api);
  return attachments === NO_BLOCKS && links === NO_LINKS ? CARRIES_NONE : { attachments, links };
}

/**
 * The attachments of a result that is not a Proxy as blocks, in order; none when it has no own
 * `attachments` data property. The list is read once and checked as an executor's runner output
 * is (a custom executor may hand back anything): a malformed one is a
 * ToolContractError(INVALID_ARGUMENT) naming `api`.
 */
function attachmentBlocks(result: ToolResultMessage, api: string): readonly ToolgateAttachmentBlock[] {
  // Most results have none: an own-key check tells that without making a descriptor (and, on a
  // non-Proxy, runs nothing of the result's).
  if (!ObjectHasOwn(result, "attachments")) return NO_BLOCKS;
  const attachments = ownDataOr(result, "attachments", undefined);
  if (attachments === undefined) return NO_BLOCKS;
  const list = adoptAttachments(attachments);
  if (typeof list === "string") {
    throw new ToolContractError(ContractErrorCode.INVALID_ARGUMENT, `${api}: the executor's result has malformed attachments: ${list}`);
  }
  const blocks: ToolgateAttachmentBlock[] = [];
  for (let index = 0; index < list.length; index += 1) {
    const attachment = list[index] as CarriedAttachment;
    if (attachment.type === "resourceLink") malformed(api, `[${index}] is a resource link (the result's resourceLinks hold those)`);
    const data = ReflectApply(base64Slice, attachment.data, [0, TypedArrayPrototypeGetLength(attachment.data)]);
    blocks[index] = ObjectFreeze(blockOf(attachment, data));
  }
  return ObjectFreeze(blocks);
}

function malformed(api: string, problem: string): never {
  throw new ToolContractError(ContractErrorCode.INVALID_ARGUMENT, `${api}: the executor's result has malformed attachments: ${problem}`);
}

/** A resource link as a framework sees it (MCP's `resource_link`, named in toolgate's spelling). Frozen. */
export interface ToolgateResourceLinkBlock {
  readonly type: "resourceLink";
  readonly uri: string;
  readonly name: string;
  readonly mimeType?: string;
  readonly description?: string;
}

/**
 * The resource links of a result that is not a Proxy as blocks, in order; none when it has no
 * own `resourceLinks` data property. Read once and checked as `attachmentBlocks` checks
 * attachments (INVALID_ARGUMENT naming `api`).
 */
function resourceLinkBlocks(result: ToolResultMessage, api: string): readonly ToolgateResourceLinkBlock[] {
  if (!ObjectHasOwn(result, "resourceLinks")) return NO_LINKS;
  const links = ownDataOr(result, "resourceLinks", undefined);
  if (links === undefined) return NO_LINKS;
  const list = adoptAttachments(links);
  if (typeof list === "string") malformed(api, list);
  const blocks: ToolgateResourceLinkBlock[] = [];
  for (let index = 0; index < list.length; index += 1) {
    const link = list[index] as CarriedAttachment;
    if (link.type !== "resourceLink") malformed(api, `resourceLinks[${index}] is not a resource link`);
    blocks[index] = link; // frozen, its own fields only: the block itself
  }
  return ObjectFreeze(blocks);
}

const NO_BLOCKS: readonly ToolgateAttachmentBlock[] = ObjectFreeze([]);
const NO_LINKS: readonly ToolgateResourceLinkBlock[] = ObjectFreeze([]);

const CARRIES_NONE: CarriedBlocks = ObjectFreeze({ attachments: NO_BLOCKS, links: NO_LINKS });

/**
 * What a framework with no link part shows for a resource link: a text line naming it, its URI,
 * and its media type and description when it has them.
 */
export function resourceLinkText(block: ToolgateResourceLinkBlock): string {
  const type = block.mimeType === undefined ? "" : ` (${block.mimeType})`;
  const description = block.description === undefined ? "" : `: ${block.description}`;
  return `[resource link ${JSONStringify(block.name)}${type} ${block.uri}${description}]`;
}

function blockOf(attachment: ToolAttachment, data: string): ToolgateAttachmentBlock {
  switch (attachment.type) {
    case "image":
      return { type: "image", data, mimeType: attachment.mimeType };
    case "audio":
      return { type: "audio", data, mimeType: attachment.mimeType };
    case "file": {
      const block: { -readonly [key in keyof ToolgateFileBlock]: ToolgateFileBlock[key] } = {
        type: "file",
        data,
        mimeType: attachment.mimeType,
      };
      if (attachment.name !== undefined) block.name = attachment.name;
      if (attachment.uri !== undefined) block.uri = attachment.uri;
      if (attachment.mimeType !== "application/pdf") {
        block.text = ReflectApply(utf8Slice, attachment.data, [0, TypedArrayPrototypeGetLength(attachment.data)]);
      }
      return block;
    }
  }
}

/** A text block (MCP's and Pi's `TextContent`). Frozen. */
export interface ToolgateTextBlock {
  readonly type: "text";
  readonly text: string;
}

/** A result's text as a frozen text block. */
export function textBlock(text: string): ToolgateTextBlock {
  return ObjectFreeze({ type: "text" as const, text });
}

/**
 * What a framework that cannot carry an attachment's kind shows in its place: a text part
 * saying what was left out, so the model knows there was more than it sees.
 */
export function notCarriedText(block: ToolgateAttachmentBlock, framework: string): string {
  const name = block.type === "file" && block.name !== undefined ? " " + JSONStringify(block.name) : "";
  return `[${block.type} attachment${name} (${block.mimeType}) not carried: ${framework} tool results cannot hold ${block.type === "audio" ? "audio" : "files"}]`;
}

/** An audio or file block: what the AI SDK and Mastra outputs carry beside their images. */
export type ToolgateMediaBlock = ToolgateAudioBlock | ToolgateFileBlock;

/**
 * A success's output where it is one value (the AI SDK's and Mastra's): the content alone, or,
 * with attachments, the content, its images (`images`, as before audio and files were carried)
 * and, when it has some, its audio and files (`files`), each list in the result's order. Frozen.
 */
export interface ToolgateContentOutput {
  readonly type: "content";
  readonly text: string;
  readonly images: readonly ToolgateImageBlock[];
  readonly files?: readonly ToolgateMediaBlock[];
  /** Its resource links, present only when it has some (each shown to the model as a text line, `resourceLinkText`). */
  readonly links?: readonly ToolgateResourceLinkBlock[];
}

export function contentOutput(result: ToolResultMessage, api: string): string | ToolgateContentOutput {
  const { attachments: blocks, links } = carriedBlocks(result, api);
  if (blocks.length === 0 && links.length === 0) return result.content;
  const images: ToolgateImageBlock[] = [];
  const files: ToolgateMediaBlock[] = [];
  for (let index = 0; index < blocks.length; index += 1) {
    const block = blocks[index] as ToolgateAttachmentBlock;
    if (block.type === "image") images[images.length] = block;
    else files[files.length] = block;
  }
  const text = result.content;
  const output: { -readonly [key in keyof ToolgateContentOutput]: ToolgateContentOutput[key] } = {
    type: "content",
    text,
    images: ObjectFreeze(images),
  };
  if (files.length > 0) output.files = ObjectFreeze(files);
  if (links.length > 0) output.links = links;
  return ObjectFreeze(output);
}
