// A result's attachments as base64 image blocks, the shape MCP's and Pi's `ImageContent`
// share (`{ type: "image", data, mimeType }`), and a result as those frameworks' content list
// (its text block, then its images). The AI SDK adapter reshapes the blocks. One encoder for
// every adapter.
// docs/operations.md — Images and other attachments; docs/adapters.md — MCP, Use it with Pi.
import { Buffer } from "node:buffer";
import { ContractErrorCode } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { ObjectFreeze, ReflectApply, TypedArrayPrototypeGetLength } from "../contract/primordials.js";
import type { ToolResultMessage } from "../contract/results.js";
import { adoptAttachments, type ImageMimeType } from "../contract/results.js";
import { readOwnDataProperty } from "../contract/untrusted.js";

// Captured at load: `buffer.toString("base64")` looks `base64Slice` up on the instance, so a
// patched Buffer.prototype would choose the text. The native slice takes any Uint8Array.
const base64Slice = intrinsicBase64Slice();

function intrinsicBase64Slice(): (this: Uint8Array, start: number, end: number) => string {
  const slice: unknown = (Buffer.prototype as unknown as { readonly base64Slice?: unknown }).base64Slice;
  if (typeof slice !== "function") throw new Error("toolgate: missing intrinsic Buffer.prototype.base64Slice");
  return slice as (this: Uint8Array, start: number, end: number) => string;
}

/** An image attachment as a framework sees it: the bytes in base64 (MCP's and Pi's `ImageContent`). Frozen. */
export interface ToolgateImageBlock {
  readonly type: "image";
  /** The attachment's bytes, base64-encoded (standard alphabet, padded). */
  readonly data: string;
  readonly mimeType: ImageMimeType;
}

/**
 * The result's attachments as image blocks, in order; none when it has no `attachments`.
 * The list is read once and checked as an executor's runner output is (a custom executor
 * may hand back anything): a malformed one is a ToolContractError(INVALID_ARGUMENT) naming `api`.
 */
export function imageBlocks(result: ToolResultMessage, api: string): readonly ToolgateImageBlock[] {
  const attachments = readOwnDataProperty(result, "attachments");
  if (attachments === undefined) return NO_BLOCKS;
  const list = adoptAttachments(attachments);
  if (typeof list === "string") {
    throw new ToolContractError(ContractErrorCode.INVALID_ARGUMENT, `${api}: the executor's result has malformed attachments: ${list}`);
  }
  const blocks: ToolgateImageBlock[] = [];
  for (let index = 0; index < list.length; index += 1) {
    const { mimeType, data } = list[index] as (typeof list)[number];
    const base64 = ReflectApply(base64Slice, data, [0, TypedArrayPrototypeGetLength(data)]);
    blocks[index] = ObjectFreeze({ type: "image" as const, data: base64, mimeType });
  }
  return ObjectFreeze(blocks);
}

/** A text block (MCP's and Pi's `TextContent`). Frozen. */
export interface ToolgateTextBlock {
  readonly type: "text";
  readonly text: string;
}

/** `[{ type: "text", text: result.content }, ...imageBlocks(result, api)]`, built by index (no array iterator is consulted). */
export function contentBlocks(result: ToolResultMessage, api: string): (ToolgateTextBlock | ToolgateImageBlock)[] {
  const images = imageBlocks(result, api);
  const blocks: (ToolgateTextBlock | ToolgateImageBlock)[] = [ObjectFreeze({ type: "text" as const, text: result.content })];
  for (let index = 0; index < images.length; index += 1) blocks[index + 1] = images[index] as ToolgateImageBlock;
  return blocks;
}

const NO_BLOCKS: readonly ToolgateImageBlock[] = ObjectFreeze([]);
