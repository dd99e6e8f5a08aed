// The agent's reader of the queue's event stream (`bull:<queue>:events`), read with XREAD on
// a client of its own instead of BullMQ's QueueEvents: every entry is untrusted (any client of
// the server can XADD to the stream), and QueueEvents JSON-parses return values inside its
// loop, so one malformed entry threw out of the loop and stopped every later event. Here an
// entry is only ever strings (its event name, job id and, for progress, its raw `data`), and
// nothing in it can throw or stop the loop: one bad entry costs that entry. A result in an
// event is never believed (the agent reads the job's own hash; see executor.ts).
// docs/queue.md — Topology (results), Failure scenarios (a malformed or forged event).
import type { Redis } from "ioredis";
import { NativePromise } from "../contract/primordials.js";

/** How long one XREAD blocks; stop() does not wait for it (it drops the connection). */
const BLOCK_MS = 5000;
/** Entries read at once: the stream is shared with every other agent of the queue. */
const BATCH = 1000;
/** After a failed read (Redis unreachable), the next one waits this long. */
const RETRY_MS = 100;

/**
 * What the reader hands on: an event's name, its job id and, when the entry has one, its
 * `data` field as the raw string (a progress report: the listener parses and checks it).
 */
export type EventListener = (event: string, jobId: string, data: string | undefined) => void;

export class EventReader {
  readonly #client: Redis;
  readonly #stream: string;
  readonly #listener: EventListener;
  #lastId: string;
  #stopped = false;
  #started = false;

  /** Reads `stream` after the entry `lastId` on `client` (a connected client of its own). */
  constructor(client: Redis, stream: string, lastId: string, listener: EventListener) {
    this.#client = client;
    this.#stream = stream;
    this.#lastId = lastId;
    this.#listener = listener;
  }

  start(): void {
    if (this.#started) return;
    this.#started = true;
    void this.#read();
  }

  /**
   * Stops reading and drops the connection. The read in flight is not waited for: a blocked
   * XREAD over a partitioned link, or one queued while the client reconnects to a Redis that
   * is gone, may never settle (it then ends nothing; the loop stops at its next turn).
   */
  stop(): void {
    this.#stopped = true;
    this.#client.disconnect();
  }

  async #read(): Promise<void> {
    while (!this.#stopped) {
      let reply: unknown;
      try {
        reply = await this.#client.xread("COUNT", BATCH, "BLOCK", BLOCK_MS, "STREAMS", this.#stream, this.#lastId);
      } catch {
        if (this.#stopped) return;
        await new NativePromise((resolve) => setTimeout(resolve, RETRY_MS).unref());
        continue;
      }
      if (!this.#stopped) this.#deliver(reply);
    }
  }

  /** Every well-formed entry of an XREAD reply, in order; anything else is skipped. */
  #deliver(reply: unknown): void {
    const entries = Array.isArray(reply) && Array.isArray(reply[0]) ? (reply[0] as unknown[])[1] : undefined;
    if (!Array.isArray(entries)) return;
    for (const entry of entries) {
      if (!Array.isArray(entry) || typeof entry[0] !== "string") continue;
      this.#lastId = entry[0];
      const fields = readFields(entry[1]);
      if (fields === undefined) continue;
      try {
        this.#listener(fields.event, fields.jobId, fields.data);
      } catch {
        // The listener's own failure must not stop the stream either.
      }
    }
  }
}

/** The `event`, `jobId` and (if a string) `data` fields of one entry's field list, or undefined. */
function readFields(fields: unknown): { event: string; jobId: string; data: string | undefined } | undefined {
  if (!Array.isArray(fields)) return undefined;
  let event: unknown;
  let jobId: unknown;
  let data: unknown;
  for (let index = 0; index + 1 < fields.length; index += 2) {
    if (fields[index] === "event") event = fields[index + 1];
    else if (fields[index] === "jobId") jobId = fields[index + 1];
    else if (fields[index] === "data") data = fields[index + 1];
  }
  if (typeof event !== "string" || typeof jobId !== "string") return undefined;
  return { event, jobId, data: typeof data === "string" ? data : undefined };
}
