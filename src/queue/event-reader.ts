// The agent's reader of the queue's event stream (`bull:<queue>:events`), read with XREAD on
// a client of its own instead of BullMQ's QueueEvents: every entry is untrusted (any client of
// the server can XADD to the stream), and QueueEvents JSON-parses return values inside its
// loop, so one malformed entry threw out of the loop and stopped every later event. Here an
// entry is only ever strings (its event name, job id and, for progress, its raw `data`), read
// by redis-data.ts, and nothing in it can throw or stop the loop: one bad entry costs that
// entry. A result in an event is never believed (the agent reads the job's own hash).
//
// The reader reads after the last entry it saw. An entry with an id far in the future, then
// the stream deleted (or replaced by one with lower ids), would leave it waiting above every
// new entry for good: so whenever a read finds nothing, and when the heartbeat finds a
// finished job whose event never came, it looks at the stream's newest entry and, if that is
// below its place (or the stream is gone), reads on from where the stream now is.
//
// A read may ride behind the blocking XREAD (the executor's confirmation of its one call in
// flight): both go out in one write on the reader's connection, Redis runs the second the
// moment the XREAD wakes (a blocked connection's next command waits for it), and its answer
// comes back with the wake-up, a round trip sooner than a read sent after the events arrived.
// docs/queue.md — Topology (results), Failure scenarios (a malformed or forged event, a stream that went back).
import type { Socket } from "node:net";
import type { Redis } from "ioredis";
import { NativePromise, SetImmediate } from "../contract/primordials.js";
import { compareStreamIds, decodeStreamTop, forEachStreamEvent } from "./redis-data.js";

/** How long one XREAD blocks; stop() does not wait for it (it drops the connection). */
const BLOCK_MS = 5000;
/** Entries read at once: the stream is shared with every other agent of the queue. */
const BATCH = 1000;
/** After a failed read (Redis unreachable), the next one waits this long. */
const RETRY_MS = 100;
/** Where a read starts on a stream that has no entry: every entry it will have is new. */
const BEFORE_ANY = "0-0";

/** A read to send right behind the next blocking XREAD: an HMGET, and who takes its reply. */
export interface RidingRead {
  /** HMGET's key and fields. */
  readonly hmget: readonly string[];
  /** The reply (undefined when the read failed), handed over before the XREAD's events are. */
  readonly answer: (reply: unknown) => void;
}

/**
 * What the reader hands on: an event's name, its job id and, when the entry has one, its
 * `data` field as the raw string (a progress report: the listener parses and checks it).
 */
export type EventListener = (event: string, jobId: string, data: string | undefined) => void;

export class EventReader {
  readonly #client: Redis;
  /** A client for the place checks (the reader's own is blocked in XREAD). */
  readonly #control: Redis;
  readonly #stream: string;
  readonly #listener: EventListener;
  /** Asked before each XREAD for a read to ride behind it. */
  readonly #rider: (() => RidingRead | undefined) | undefined;
  #lastId: string;
  #stopped = false;
  #started = false;
  #checking = false;

  /** The id reads start after for `stream` now: its newest entry (none of a new executor's events can be missed). */
  static async newestId(client: Redis, stream: string): Promise<string> {
    return decodeStreamTop(await client.xrevrange(stream, "+", "-", "COUNT", 1)) ?? BEFORE_ANY;
  }

  /** Reads `stream` after the entry `lastId` on `client` (a connected client of its own). */
  constructor(
    client: Redis,
    control: Redis,
    stream: string,
    lastId: string,
    listener: EventListener,
    rider?: () => RidingRead | undefined,
  ) {
    this.#client = client;
    this.#control = control;
    this.#stream = stream;
    this.#lastId = lastId;
    this.#listener = listener;
    this.#rider = rider;
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

  /**
   * Looks whether the stream went back below this reader's place (its newest entry is older,
   * or it has none) and, if so, reads on from where it now is: from its newest entry, or from
   * its start when it has none. One check at a time; a failed one changes nothing.
   */
  checkPlace(): void {
    if (this.#checking || this.#stopped) return;
    this.#checking = true;
    const place = this.#lastId;
    this.#control
      .xrevrange(this.#stream, "+", "-", "COUNT", 1)
      .then((reply: unknown) => {
        const top = decodeStreamTop(reply);
        // Moved on meanwhile (a read delivered entries): that read knew better.
        if (top === undefined || this.#lastId !== place) return;
        if (top === null) this.#lastId = BEFORE_ANY;
        else if (compareStreamIds(top, place) < 0) this.#lastId = top;
      }, ignore)
      .finally(() => {
        this.#checking = false;
      });
  }

  async #read(): Promise<void> {
    while (!this.#stopped) {
      let reply: unknown;
      const riding = this.#rider?.();
      try {
        if (riding === undefined)
          reply = await this.#client.xread("COUNT", BATCH, "BLOCK", BLOCK_MS, "STREAMS", this.#stream, this.#lastId);
        else reply = await this.#readWith(riding);
      } catch {
        if (this.#stopped) return;
        await new NativePromise((resolve) => setTimeout(resolve, RETRY_MS).unref());
        continue;
      }
      if (this.#stopped) return;
      if (reply === null) this.checkPlace();
      else {
        this.#deliver(reply);
        // The next XREAD goes out at the next turn: a call its events settled is handed on, and
        // its caller's next add written, first (a socket write here cost the add's way tens of µs).
        await new NativePromise((resolve) => SetImmediate(resolve));
      }
    }
  }

  /**
   * The XREAD's reply, with `riding` sent right behind it and answered first (a failed XREAD
   * throws, and the ride is then not answered). Two plain commands in one write (the socket
   * corked around them), not an ioredis Pipeline: a Pipeline built for every read cost the
   * agent's turnaround between two calls about 2.5% of a call, and a write of its own each
   * about as much again. A Cluster client has no socket of its own here: it writes each.
   */
  async #readWith(riding: RidingRead): Promise<unknown> {
    const socket: Socket | undefined = this.#client.stream;
    socket?.cork();
    let read: Promise<unknown>;
    let ride: Promise<unknown>;
    try {
      read = this.#client.xread("COUNT", BATCH, "BLOCK", BLOCK_MS, "STREAMS", this.#stream, this.#lastId);
      // Its own failure only means no answer; caught here so that it never goes unhandled.
      ride = this.#client.hmget(...(riding.hmget as [string, ...string[]])).catch(ignore);
    } finally {
      // Never left corked: nothing this connection sends later would leave.
      socket?.uncork();
    }
    const reply = await read;
    const answer = await ride;
    if (!this.#stopped) riding.answer(answer);
    return reply;
  }

  /** Every well-formed entry of an XREAD reply, in order; anything else is skipped. */
  #deliver(reply: unknown): void {
    const lastId = forEachStreamEvent(reply, this.#visit);
    if (lastId !== undefined) this.#lastId = lastId;
  }

  /** One entry to the listener (made once: a read allocates no list and no event objects). */
  readonly #visit = (_id: string, event: string, jobId: string, data: string | undefined): void => {
    try {
      this.#listener(event, jobId, data);
    } catch {
      // The listener's own failure must not stop the stream either.
    }
  };
}

function ignore(): void {}
