// Options of both sides, read and validated up front through the validators every executor
// uses (own data properties only, unknown keys refused): a precise ToolContractError
// (INVALID_ARGUMENT) naming the option and the value, with upper bounds on every number.
// docs/queue.md — Options; docs/operations.md — Options.
import type { RedisOptions } from "ioredis";
import { describeValue } from "../contract/grammar.js";
import { ArrayIsArray, isProxy, JSONStringify, RegExpPrototypeExec } from "../contract/primordials.js";
import { integerOr, invalidArgument, MAX_DELAY_MS } from "../contract/validators.js";
import { keyPartProblem, MAX_QUEUE_NAME_LENGTH } from "./keys.js";

/** Where Redis is: a `redis://` (or `rediss://`) URL, or ioredis connection options. */
export type QueueConnection = string | RedisOptions;

const REDIS_URL = /^rediss?:\/\//;

/**
 * `options.connection`: a redis:// URL, or an object of ioredis options, passed to ioredis as
 * it is (its keys are ioredis's to check, not ours).
 */
export function readConnection(value: unknown): QueueConnection {
  if (typeof value === "string") {
    if (RegExpPrototypeExec(REDIS_URL, value) === null) {
      invalidArgument(`options.connection must be a redis:// or rediss:// URL (got ${JSONStringify(value.slice(0, 64))})`);
    }
    checkUrlDatabase(value);
    return value;
  }
  if (typeof value !== "object" || value === null || isProxy(value) || ArrayIsArray(value)) {
    invalidArgument(`options.connection must be a redis:// URL or an object of ioredis connection options (got ${describeValue(value)})`);
  }
  const db = Object.getOwnPropertyDescriptor(value, "db")?.value;
  if (db !== undefined && (typeof db !== "number" || !Number.isSafeInteger(db) || db < 0)) {
    invalidArgument(`options.connection.db must be a non-negative integer (got ${describeValue(db)})`);
  }
  return value as RedisOptions;
}

/**
 * The database a URL names (its path, or a `db` query parameter) must be a number: ioredis
 * sends whatever it finds to SELECT, and a refused SELECT is an unhandled rejection inside
 * ioredis that would crash the process after the option check.
 */
function checkUrlDatabase(value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    invalidArgument("options.connection must be a parsable redis:// URL");
  }
  const path = url.pathname;
  const query = url.searchParams.get("db");
  if (!/^\/?(\d{1,9})?$/.test(path) || (query !== null && !/^\d{1,9}$/.test(query))) {
    invalidArgument(
      `options.connection must name its database as a number, redis://host:port/<db> (got the path ${JSON.stringify(path)}${query === null ? "" : ` and db=${JSON.stringify(query)}`})`,
    );
  }
}

const QUEUE_NAME_RULE = `options.queue must be a non-empty string of at most ${MAX_QUEUE_NAME_LENGTH} characters without ":", control characters or lone surrogates`;

/**
 * A BullMQ queue name: a part of every key of the queue, so it must pass the one check of key
 * parts (keys.ts: well-formed text that BullMQ and ioredis encode alike, no control characters,
 * no ":"), and be at most MAX_QUEUE_NAME_LENGTH characters.
 */
export function readQueueName(value: unknown): string {
  if (typeof value !== "string") invalidArgument(`${QUEUE_NAME_RULE} (got ${describeValue(value)})`);
  const problem = keyPartProblem(value, MAX_QUEUE_NAME_LENGTH);
  if (problem !== undefined) invalidArgument(`${QUEUE_NAME_RULE} (got ${JSONStringify(value.slice(0, 64))}, which ${problem})`);
  return value;
}

/** A millisecond option in [minimum, MAX_DELAY_MS] (the bound every executor uses), or its fallback when absent. */
export function durationOption(name: string, value: unknown, minimum: number, fallback: number): number {
  return integerOr(value, `options.${name}`, { min: minimum, max: MAX_DELAY_MS, fallback: fallback });
}
