// src/queue/event-reader.ts on its own, on a real Redis: the read that rides behind the blocking
// XREAD (the agent's confirmation of its one call in flight) is run by Redis after the XREAD,
// answered before the events that woke it are handed on, and, when the XREAD fails, the ride
// fails or the reader is stopped, ends quietly: no answer it should not give, no unhandled
// rejection, and the reader reads on. Both leave in one write; after a read that brought events,
// the next XREAD waits for what those events settled to run on (a caller's next call goes first).
// docs/queue.md — Redis commands per call (the confirmation rides behind the events read).
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { EventReader, type RidingRead } from "../../src/queue/event-reader.js";
import { findRedis, uniqueQueue } from "../support/redis.js";

const redis = await findRedis();
const url = "url" in redis ? redis.url : "";

type Seen = readonly ["answer", unknown] | readonly ["event", string, string];

const clients: Redis[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

function client(name?: string): Redis {
  const made = new Redis(url, name === undefined ? {} : { connectionName: name });
  made.on("error", () => {});
  clients.push(made);
  return made;
}

/** Resolves once `name`'s connection is blocked in an XREAD (CLIENT LIST's `b` flag). */
async function blockedInXread(control: Redis, name: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const list = (await control.client("LIST")) as string;
      const line = list.split("\n").find((entry) => entry.includes(` name=${name} `));
      expect(line).toMatch(/\bcmd=xread\b.*\bflags=\w*b|\bflags=\w*b.*\bcmd=xread\b/);
    },
    { timeout: 5000, interval: 10 },
  );
}

/** Resolves once `done()` holds (bounded). */
const until = (done: () => boolean) => vi.waitFor(() => expect(done()).toBe(true), { timeout: 5000, interval: 10 });

/** A stream, a job hash and a reader's connection name of their own, and a client that writes them. */
function scene(label: string) {
  const queue = uniqueQueue(label);
  return { stream: `${queue}:events`, hash: `${queue}:job`, name: `${queue}-reader`, writer: client() };
}

/** Waits until the reader handed on an event, then stops it. */
async function stopAfterEvent(reader: EventReader, seen: readonly Seen[]): Promise<void> {
  await until(() => seen.some((entry) => entry[0] === "event"));
  reader.stop();
}

/** A reader of `stream` whose every read carries an HMGET of `hash`'s fields a and b; all it hands on, in order. */
function readerOf(stream: string, hash: string, name: string) {
  const seen: Seen[] = [];
  let asked = 0;
  const connection = client(name);
  const reader = new EventReader(
    connection,
    client(),
    stream,
    "0-0",
    (event, jobId) => seen.push(["event", event, jobId]),
    (): RidingRead => {
      asked += 1;
      return { hmget: [hash, "a", "b"], answer: (reply) => seen.push(["answer", reply]) };
    },
  );
  return { reader, seen, asked: () => asked, connection };
}

beforeEach(() => {
  unhandled.length = 0;
  process.on("unhandledRejection", onUnhandled);
});

afterEach(() => {
  process.off("unhandledRejection", onUnhandled);
});

afterAll(() => {
  for (const made of clients) made.disconnect();
});

describe.skipIf(!("url" in redis))("EventReader: the read riding behind the blocking XREAD", () => {
  test("Redis runs it after the XREAD (it sees a hash written while the XREAD blocked), and its answer is handed over before the event that woke it", async () => {
    const { stream, hash, name, writer } = scene("rides");
    const { reader, seen } = readerOf(stream, hash, name);
    reader.start();
    await blockedInXread(writer, name);
    await writer.hset(hash, "a", "1", "b", "2");
    await writer.xadd(stream, "*", "event", "completed", "jobId", "7");
    await stopAfterEvent(reader, seen);
    expect(seen).toEqual([
      ["answer", ["1", "2"]],
      ["event", "completed", "7"],
    ]);
    expect(unhandled).toEqual([]);
  });

  test("a failed XREAD: the ride is not answered, nothing goes unhandled, and the reader reads on once the stream reads again", async () => {
    const { stream, hash, name, writer } = scene("rides-failed");
    // Not a stream: every XREAD of it fails (WRONGTYPE), while the HMGET behind it succeeds.
    await writer.set(stream, "not a stream");
    await writer.hset(hash, "a", "1", "b", "2");
    const { reader, seen, asked } = readerOf(stream, hash, name);
    reader.start();
    await until(() => asked() >= 3);
    expect(seen).toEqual([]);
    await writer.del(stream);
    await writer.xadd(stream, "*", "event", "failed", "jobId", "8");
    await stopAfterEvent(reader, seen);
    expect(seen).toEqual([
      ["answer", ["1", "2"]],
      ["event", "failed", "8"],
    ]);
    expect(unhandled).toEqual([]);
  });

  test("a failed ride alone is answered with nothing (undefined), and the events still come", async () => {
    const { stream, hash, name, writer } = scene("rides-wrong");
    // Not a hash: the HMGET fails (WRONGTYPE).
    await writer.rpush(hash, "x");
    const { reader, seen } = readerOf(stream, hash, name);
    reader.start();
    await blockedInXread(writer, name);
    await writer.xadd(stream, "*", "event", "active", "jobId", "9");
    await stopAfterEvent(reader, seen);
    expect(seen).toEqual([
      ["answer", undefined],
      ["event", "active", "9"],
    ]);
    expect(unhandled).toEqual([]);
  });

  test("a reader stopped while it blocks: its XREAD and its ride end without an answer, an event or an unhandled rejection, and it reads no more", async () => {
    const { stream, hash, name, writer } = scene("rides-stopped");
    const { reader, seen, asked, connection } = readerOf(stream, hash, name);
    reader.start();
    await blockedInXread(writer, name);
    reader.stop();
    await until(() => connection.status === "end");
    await writer.xadd(stream, "*", "event", "completed", "jobId", "10");
    // Both rejected promises have run their handlers by the next macrotask turns.
    for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([]);
    expect(asked()).toBe(1);
    expect(unhandled).toEqual([]);
  });

  test("the XREAD and the read riding behind it leave the connection in one write", async () => {
    const { stream, hash, name, writer } = scene("rides-write");
    const { reader, seen, connection } = readerOf(stream, hash, name);
    await connection.ping();
    // What the socket hands the kernel, a write at a time (a corked socket writes its chunks together).
    const writes: string[] = [];
    const socket = connection.stream as unknown as {
      _write: (chunk: unknown, encoding: unknown, done: unknown) => void;
      _writev: (chunks: { chunk: unknown }[], done: unknown) => void;
    };
    const [write, writev] = [socket._write, socket._writev];
    socket._write = function (chunk, encoding, done) {
      writes.push(String(chunk));
      write.call(this, chunk, encoding, done);
    };
    socket._writev = function (chunks, done) {
      writes.push(chunks.map(({ chunk }) => String(chunk)).join(""));
      writev.call(this, chunks, done);
    };
    reader.start();
    await blockedInXread(writer, name);
    await writer.xadd(stream, "*", "event", "completed", "jobId", "11");
    await stopAfterEvent(reader, seen);
    const reads = writes.filter((sent) => /xread/i.test(sent));
    expect(reads.length).toBeGreaterThanOrEqual(1);
    for (const sent of reads) expect(sent).toMatch(/xread[\s\S]*hmget/i);
    expect(writes.filter((sent) => /hmget/i.test(sent) && !/xread/i.test(sent))).toEqual([]);
  });

  test("after a read that brought events, the next XREAD goes out only once what they settled has run on", async () => {
    const { stream, name, writer } = scene("rides-turn");
    const connection = client(name);
    await connection.ping();
    const order: string[] = [];
    const send = connection.sendCommand;
    connection.sendCommand = function (command, ...rest) {
      order.push((command as { name: string }).name);
      return send.call(this, command, ...rest);
    };
    let settle: () => void = () => {};
    const delivered = new Promise<void>((resolve) => {
      settle = resolve;
    });
    // The caller a delivered event settles: a chain of promise turns, as a call's result takes to its caller.
    const caller = (async () => {
      await delivered;
      await Promise.resolve();
      await Promise.resolve();
      order.push("caller went on");
    })();
    const reader = new EventReader(connection, client(), stream, "0-0", (event) => {
      order.push(`event ${event}`);
      settle();
    });
    reader.start();
    await blockedInXread(writer, name);
    await writer.xadd(stream, "*", "event", "completed", "jobId", "12");
    await caller;
    await until(() => order.filter((sent) => sent === "xread").length === 2);
    reader.stop();
    expect(order).toEqual(["xread", "event completed", "caller went on", "xread"]);
    expect(unhandled).toEqual([]);
  });
});
