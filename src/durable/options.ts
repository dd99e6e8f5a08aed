// The options both stores share, read the one way toolgate reads options (validators.ts).
// docs/durable.md — Stores.
import { Limits } from "../contract/constants.js";
import { ObjectFreeze } from "../contract/primordials.js";
import { integerOr, invalidArgument, readOptions } from "../contract/validators.js";

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

/** A write concern: after a claim and after an outcome is recorded, WAIT for `replicas` at most `timeoutMs`. */
export interface WriteConcern {
  readonly replicas: number;
  readonly timeoutMs: number;
}

/** `name` (`{ replicas, timeoutMs }`), or undefined; `aof` (WAITAOF) is refused: it needs Redis 7.2, and toolgate is tested on 7.0. */
export function readWriteConcern(value: unknown, name: string): WriteConcern | undefined {
  if (value === undefined) return undefined;
  const concern = readOptions(value, name, ["replicas", "timeoutMs", "aof"]);
  if (concern.aof !== undefined) {
    invalidArgument(
      `${name}.aof is not offered: WAITAOF needs Redis 7.2, and toolgate is tested on 7.0; use appendfsync always on the server for writes that reach its disk`,
    );
  }
  return ObjectFreeze({
    replicas: integerOr(concern.replicas, `${name}.replicas`, { min: 1, max: 64, fallback: 1 }),
    timeoutMs: integerOr(concern.timeoutMs, `${name}.timeoutMs`, { min: 1, max: 60_000, fallback: 1000 }),
  });
}
