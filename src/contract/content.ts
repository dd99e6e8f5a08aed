// Code-point arithmetic for the content cap (4096 code points by default). A surrogate pair counts as
// one code point and is never split; a lone surrogate counts as one code point.
// docs/contract.md: rule 12 — content cap.
import { COURSE_TOOL_MAX_CONTENT_CODE_POINTS, COURSE_TOOL_TRUNCATION_MARKER } from "./constants.js";
import { RegExpPrototypeExec, StringPrototypeCharCodeAt, StringPrototypeSlice } from "./primordials.js";

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * The UTF-16 index just past the first `maxCodePoints` code points of `text`,
 * or `text.length` when it has no more than that. Work is O(maxCodePoints).
 */
function codePointBoundary(text: string, maxCodePoints: number): number {
  const length = text.length;
  if (length <= maxCodePoints) return length;
  // Fast path: with no surrogate among the first maxCodePoints units, units are code points.
  if (RegExpPrototypeExec(SURROGATE, StringPrototypeSlice(text, 0, maxCodePoints)) === null) return maxCodePoints;
  let index = 0;
  let codePoints = 0;
  while (index < length && codePoints < maxCodePoints) {
    const unit = StringPrototypeCharCodeAt(text, index);
    const pairs = unit >= 0xd800 && unit <= 0xdbff && index + 1 < length && isLowSurrogate(StringPrototypeCharCodeAt(text, index + 1));
    index += pairs ? 2 : 1;
    codePoints += 1;
  }
  return index;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/** `text` cut to at most `maxCodePoints` code points, and whether anything was cut. */
export function cutToCodePoints(text: string, maxCodePoints: number): { text: string; cut: boolean } {
  const end = codePointBoundary(text, maxCodePoints);
  return end === text.length ? { text, cut: false } : { text: StringPrototypeSlice(text, 0, end), cut: true };
}

const MARKER_CODE_POINTS = COURSE_TOOL_TRUNCATION_MARKER.length; // the marker is ASCII

/**
 * The final content rule: at most `maxCodePoints` (4096 by default); when the text is longer,
 * or when something was already cut on the way (`alreadyCut`), exactly `maxCodePoints` code
 * points ending with the single truncation marker.
 */
export function capContent(text: string, alreadyCut: boolean, maxCodePoints: number = COURSE_TOOL_MAX_CONTENT_CODE_POINTS): string {
  if (!alreadyCut && codePointBoundary(text, maxCodePoints) === text.length) return text;
  const keep = codePointBoundary(text, maxCodePoints - MARKER_CODE_POINTS);
  return StringPrototypeSlice(text, 0, keep) + COURSE_TOOL_TRUNCATION_MARKER;
}
