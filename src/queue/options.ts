// Options of both sides, read and validated up front: a precise ToolContractError
// (INVALID_ARGUMENT) naming the option and the value, with upper bounds on every number.
// docs/queue.md — Options.
import type { RedisOptions } from "ioredis";
import { COURSE_TOOL_INVALID_ARGUMENT } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { describeValue } from "../contract/grammar.js";
import { isProxy } from "../contract/primordials.js";

/** Where Redis is: a `redis://` (or `rediss://`) URL, or ioredis connection options. */
export type QueueConnection = string | RedisOptions;

const MAX_QUEUE_NAME_LENGTH = 128;
const DAY_MS = 24 * 60 * 60 * 1000;

export function invalidOption(message: string): never {
  throw new ToolContractError(COURSE_TOOL_INVALID_ARGUMENT, message);
}

export function readObject(options: unknown): Record<string, unknown> {
  if (typeof options !== "object" || options === null || isProxy(options)) invalidOption("options must be an object");
  return options as Record<string, unknown>;
}

export function readConnection(value: unknown): QueueConnection {
  if (typeof value === "string") {
    if (!/^rediss?:\/\//.test(value))
      invalidOption(`options.connection must be a redis:// or rediss:// URL (got ${JSON.stringify(value)})`);
    checkUrlDatabase(value);
    return value;
  }
  if (typeof value !== "object" || value === null || isProxy(value) || Array.isArray(value)) {
    invalidOption("options.connection must be a redis:// URL or an object of ioredis connection options");
  }
  const db = Object.getOwnPropertyDescriptor(value, "db")?.value;
  if (db !== undefined && (typeof db !== "number" || !Number.isSafeInteger(db) || db < 0)) {
    invalidOption(`options.connection.db must be a non-negative integer (got ${describeValue(db)})`);
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
    invalidOption("options.connection must be a parsable redis:// URL");
  }
  const path = url.pathname;
  const query = url.searchParams.get("db");
  if (!/^\/?(\d{1,9})?$/.test(path) || (query !== null && !/^\d{1,9}$/.test(query))) {
    invalidOption(
      `options.connection must name its database as a number, redis://host:port/<db> (got the path ${JSON.stringify(path)}${query === null ? "" : ` and db=${JSON.stringify(query)}`})`,
    );
  }
}

/** A BullMQ queue name: non-empty, bounded, without ":" (BullMQ's key separator). */
export function readQueueName(value: unknown): string {
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_QUEUE_NAME_LENGTH || value.includes(":")) {
    invalidOption(
      `options.queue must be a non-empty string of at most ${MAX_QUEUE_NAME_LENGTH} characters without ":" (got ${typeof value === "string" ? JSON.stringify(value) : describeValue(value)})`,
    );
  }
  return value;
}

/** An integer option in [minimum, maximum], or its fallback when absent. */
export function integerOption(name: string, value: unknown, minimum: number, maximum: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < minimum || value > maximum) {
    invalidOption(`options.${name} must be an integer from ${minimum} to ${maximum} (got ${describeValue(value)})`);
  }
  return value;
}

/** A millisecond option in [minimum, one day], or undefined when absent and optional. */
export function durationOption(name: string, value: unknown, minimum: number, fallback: number): number {
  return integerOption(name, value, minimum, DAY_MS, fallback);
}

export function optionalDuration(name: string, value: unknown, minimum: number): number | undefined {
  return value === undefined ? undefined : durationOption(name, value, minimum, 0);
}
