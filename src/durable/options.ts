// The options both stores share, read the one way toolgate reads options (validators.ts).
// docs/durable.md — Stores.
import { Limits } from "../contract/constants.js";
import { integerOr } from "../contract/validators.js";

/** How long a record is kept after its last write, by default: 24 h. */
export const DEFAULT_RETENTION_MS = 24 * 60 * 60 * 1000;
/** Retention bounds: 1 minute to 30 days. */
export const MIN_RETENTION_MS = 60 * 1000;
export const MAX_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
/** A claim's lease by default (its holder renews it every third of it). */
export const DEFAULT_LEASE_MS = 15_000;

export function readRetentionMs(value: unknown): number {
  return integerOr(value, "options.retentionMs", { min: MIN_RETENTION_MS, max: MAX_RETENTION_MS, fallback: DEFAULT_RETENTION_MS });
}

/** The attachment bytes a stored outcome may keep: the default attachment budget, at most the largest one. */
export function readMaxAttachmentBytes(value: unknown): number {
  return integerOr(value, "options.maxAttachmentBytes", {
    min: 0,
    max: Limits.ATTACHMENT_BYTES_LIMIT,
    fallback: Limits.MAX_ATTACHMENT_BYTES,
  });
}
