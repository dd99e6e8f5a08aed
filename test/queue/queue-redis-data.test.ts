// Untrusted Redis data, read one way (src/queue/redis-data.ts), and Redis names made one way
// (src/queue/keys.ts), fuzzed: every reader takes anything (fast-check's values, replies of the
// wrong shape, text past the budgets) without throwing, reads what hosts and agents write back
// exactly, and stays linear: base64 up to the attachment budgets and past them (an 8 MiB image
// overflowed the regular expression that checked it before), JSON nested a million deep. No
// Redis needed: these are the readers alone (their use is covered in queue-reliability.test.ts).
import { createRequire } from "node:module";
import fc from "fast-check";
import { Limits } from "toolgate";
import { describe, expect, test } from "vitest";
import {
  agentIdOf,
  agentIdOfChecked,
  jobIdFor,
  keyPartProblem,
  MAX_QUEUE_NAME_LENGTH,
  queueKeys,
  redisName,
} from "../../dist/src/queue/keys.js";
import {
  compareStreamIds,
  decodeAttachments,
  decodeBase64,
  decodeCancel,
  decodeFacts,
  decodeFinishedJob,
  decodeJobData,
  decodeJobStates,
  decodeProgress,
  decodeResult,
  decodeServerTime,
  decodeStartReading,
  decodeStreamTop,
  forEachStreamEvent,
  maxResultChars,
  readJson,
  readStreamId,
} from "../../dist/src/queue/redis-data.js";

/** BullMQ's own msgpack encoder (it packs some key parts with it): resolved from BullMQ's place. */
const { pack } = createRequire(createRequire(import.meta.url).resolve("bullmq"))("msgpackr") as { pack: (value: unknown) => Buffer };

const RUNS = 300;
const DEFAULT_LIMITS = { maxContentCodePoints: 4096, maxAttachmentBytes: Limits.MAX_ATTACHMENT_BYTES, maxAttachments: 16 };
const ABSOLUTE_LIMITS = { maxContentCodePoints: 4096, maxAttachmentBytes: Limits.ATTACHMENT_BYTES_LIMIT, maxAttachments: 256 };

/** The regular expression the agent used before (fine on short input), and zero pad bits: the reference on short text. */
const REFERENCE_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?$/;

/** Anything a reply could be, and then some: strings, numbers, nested arrays, objects, null. */
const anyReply = fc.anything({ maxDepth: 4, withNullPrototype: true, withBigInt: true, withMap: true, withSet: true });

/** Text that is often base64-like: the alphabet, padding, and a few characters that are not. */
const base64ish = fc.string({ unit: fc.constantFrom(..."ABCXYZabcxyz0189+/=-_ \u00e9"), maxLength: 64 });

/** Never throws, and takes less than `ms` (a hang or super-linear blow-up fails loudly). */
function quickly<T>(run: () => T, ms: number): T {
  const started = performance.now();
  let value: T;
  try {
    value = run();
  } catch (error) {
    throw new Error(`threw: ${String(error)}`);
  }
  expect(performance.now() - started).toBeLessThan(ms);
  return value;
}

/** The entries `forEachStreamEvent` visits in a reply, in order, and the id it says to read on from. */
function readStream(reply: unknown) {
  const events: { id: string; event: string; jobId: string; data: string | undefined }[] = [];
  const lastId = forEachStreamEvent(reply, (id, event, jobId, data) => {
    events.push({ id, event, jobId, data });
  });
  return { events, lastId };
}

describe("base64, one pass: the attachments of a result", () => {
  test("agrees with the strict reference on short text of any shape", () => {
    fc.assert(
      fc.property(base64ish, (text) => {
        expect(decodeBase64(text) !== undefined).toBe(text.length > 0 && REFERENCE_BASE64.test(text));
      }),
      { numRuns: 2000 },
    );
  });

  test("any bytes round-trip through the host's encoding and the agent's reading", () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ minLength: 1, maxLength: 300 }), { maxLength: 4 }), (images) => {
        const encoded = images.map((bytes) => ({ type: "image", mimeType: "image/png", data: Buffer.from(bytes).toString("base64") }));
        const decoded = decodeAttachments(encoded);
        expect(Array.isArray(decoded)).toBe(true);
        expect((decoded as readonly { data: Uint8Array }[]).map((each) => [...each.data])).toEqual(images.map((bytes) => [...bytes]));
      }),
      { numRuns: RUNS },
    );
  });

  // Sizes at and past the default budget (8 MiB) and the absolute limit (64 MiB): one mutated
  // character anywhere is found, and the whole text is read in one linear pass.
  const MiB = 1024 * 1024;
  test.each([
    ["4 MiB (the image that killed the agent)", 4 * MiB],
    ["8 MiB (the default budget)", 8 * MiB],
    ["8 MiB + 1", 8 * MiB + 1],
    ["64 MiB (the absolute limit)", 64 * MiB],
  ])("an image of %s: accepted whole, refused with one bad character, never a stack overflow", (_label, bytes) => {
    const data = Buffer.alloc(bytes, 0x5a).toString("base64");
    const decoded = quickly(() => decodeAttachments([{ type: "image", mimeType: "image/png", data }]), 10_000);
    expect((decoded as readonly { data: Uint8Array }[])[0]?.data.length).toBe(bytes);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: data.length - 3 }), fc.constantFrom("!", "-", "\u00e9", "=", " "), (at, bad) => {
        const mutated = data.slice(0, at) + bad + data.slice(at + 1);
        expect(quickly(() => decodeBase64(mutated), 5000)).toBeUndefined();
      }),
      { numRuns: 3 },
    );
  });

  test("past the absolute limit: refused by its size before a character is read", () => {
    const over = "A".repeat(Math.ceil((Limits.ATTACHMENT_BYTES_LIMIT + 1) / 3) * 4);
    const answer = quickly(() => decodeAttachments([{ type: "image", mimeType: "image/png", data: over }]), 1000);
    expect(answer).toBe(`the host's attachments are over the ${Limits.ATTACHMENT_BYTES_LIMIT}-byte limit`);
  });
});

describe("results: a job's return value, however it was written", () => {
  test("anything at all becomes an outcome or TOOL_EXECUTION_FAILED, never a throw", () => {
    fc.assert(
      fc.property(fc.oneof(anyReply, fc.json(), fc.string()), (value) => {
        let text: unknown = value;
        try {
          text = typeof value === "string" ? value : JSON.stringify(value);
        } catch {
          // a BigInt: the value itself goes in (a reply need not be text)
        }
        const decoded = quickly(() => decodeResult(text, DEFAULT_LIMITS), 1000);
        if (decoded.fatal) expect(typeof decoded.message).toBe("string");
        else expect(typeof decoded.outcome.content).toBe("string");
      }),
      { numRuns: RUNS },
    );
  });

  test("what a host writes is read back exactly", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "grapheme", maxLength: 300 }),
        fc.boolean(),
        fc.record({ waitMs: fc.nat(1000), runMs: fc.nat(1000), killed: fc.boolean() }),
        (content, isError, facts) => {
          const decoded = decodeResult(JSON.stringify({ kind: "result", content, isError, facts }), DEFAULT_LIMITS);
          expect(decoded).toEqual({ fatal: false, outcome: { content, isError }, facts, stopped: false });
        },
      ),
      { numRuns: RUNS },
    );
  });

  test("text past the call's budgets is refused by its length, before it is parsed", () => {
    const limit = maxResultChars(DEFAULT_LIMITS);
    const over = `{"kind":"result","content":"${"x".repeat(limit)}","isError":false}`;
    expect(quickly(() => decodeResult(over, DEFAULT_LIMITS), 1000).fatal).toBe(false);
    expect(JSON.parse((decodeResult(over, DEFAULT_LIMITS) as { outcome: { content: string } }).outcome.content).error.message).toBe(
      "the host's result is over the call's budgets",
    );
    // The largest result the budgets allow is read: an image at the absolute limit.
    const image = Buffer.alloc(Limits.ATTACHMENT_BYTES_LIMIT, 1).toString("base64");
    const largest = JSON.stringify({
      kind: "result",
      content: "x",
      isError: false,
      attachments: [{ type: "image", mimeType: "image/png", data: image }],
    });
    const decoded = quickly(() => decodeResult(largest, ABSOLUTE_LIMITS), 10_000);
    expect((decoded as unknown as { outcome: { attachments: { data: Uint8Array }[] } }).outcome.attachments[0]?.data.length).toBe(
      Limits.ATTACHMENT_BYTES_LIMIT,
    );
  });

  test("JSON nested a million levels deep is read without a stack overflow", () => {
    const deep = `${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}`;
    expect(quickly(() => readJson(deep, Number.POSITIVE_INFINITY), 10_000)).toBeInstanceOf(Array);
    expect(quickly(() => decodeResult(deep, ABSOLUTE_LIMITS), 10_000).fatal).toBe(false);
  });

  test("why a host did not start a job is said in words; an unknown reason is not trusted", () => {
    const message = (reason: unknown) =>
      JSON.parse(
        (decodeResult(JSON.stringify({ kind: "not-started", reason }), DEFAULT_LIMITS) as { outcome: { content: string } }).outcome.content,
      ).error.message;
    expect(message("cancelled")).toBe("the host did not start the tool: the call was cancelled before the host could start it");
    expect(message("__proto__")).toBe("the host did not start the tool: it gave no known reason");
    expect(message({ toString: 1 })).toBe("the host did not start the tool: it gave no known reason");
  });

  test("facts: only a host's well-formed facts", () => {
    fc.assert(
      fc.property(anyReply, (value) => {
        const facts = quickly(() => decodeFacts(value), 1000);
        if (typeof facts === "object") expect(Object.isFrozen(facts)).toBe(true);
      }),
      { numRuns: RUNS },
    );
    expect(decodeFacts({ waitMs: 1, runMs: 2, killed: false, stopped: true })).toEqual({
      waitMs: 1,
      runMs: 2,
      killed: false,
      stopped: true,
    });
    expect(decodeFacts({ waitMs: 1, runMs: 2, killed: false, stopped: false })).toBe("the host's facts are malformed");
  });
});

describe("events, states, cancels, progress, start checks: every other reading", () => {
  test("an XREAD reply of any shape: its well-formed entries, in order, and where to read on", () => {
    fc.assert(
      fc.property(anyReply, (reply) => {
        const { events, lastId } = quickly(() => readStream(reply), 1000);
        for (const event of events) expect(typeof event.jobId).toBe("string");
        if (lastId !== undefined) expect(readStreamId(lastId)).toBe(lastId);
      }),
      { numRuns: RUNS },
    );
    const reply = [
      [
        "bull:q:events",
        [
          ["1-0", ["event", "completed", "jobId", "a"]],
          ["2-0", "not a field list"],
          ["nonsense", ["event", "completed", "jobId", "b"]],
          ["3-0", ["event", "progress", "jobId", "c", "data", "{}"]],
          ["4-0", ["event", 7, "jobId", "d"]],
        ],
      ],
    ];
    expect(readStream(reply)).toEqual({
      events: [
        { id: "1-0", event: "completed", jobId: "a", data: undefined },
        { id: "3-0", event: "progress", jobId: "c", data: "{}" },
      ],
      lastId: "4-0",
    });
  });

  test("stream ids compare as the two numbers they are", () => {
    const part = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });
    fc.assert(
      fc.property(part, part, part, part, (aMs, aSeq, bMs, bSeq) => {
        const expected = aMs === bMs ? Math.sign(Number(aSeq - bSeq)) : Math.sign(Number(aMs - bMs));
        expect(Math.sign(compareStreamIds(`${aMs}-${aSeq}`, `${bMs}-${bSeq}`))).toBe(expected);
      }),
      { numRuns: RUNS },
    );
    expect(decodeStreamTop([])).toBeNull();
    expect(decodeStreamTop([["9999999999999-0", []]])).toBe("9999999999999-0");
    expect(decodeStreamTop("x")).toBeUndefined();
  });

  test("the heartbeat's reading: one state per job whatever came back", () => {
    fc.assert(
      fc.property(anyReply, fc.nat(20), (reply, count) => {
        expect(quickly(() => decodeJobStates(reply, count), 1000)).toHaveLength(count);
      }),
      { numRuns: RUNS },
    );
    expect(decodeJobStates(["not-a-job", "", "completed", "{}", "failed", 3], 3)).toEqual([
      { state: "not-a-job" },
      { state: "completed", returnValue: "{}" },
      { state: "waiting" },
    ]);
  });

  test("the confirmation's HMGET: only a hash that says it finished is acted on (a forged event meets an unfinished one)", () => {
    fc.assert(
      fc.property(anyReply, (reply) => {
        const state = quickly(() => decodeFinishedJob(reply), 1000);
        expect(["waiting", "completed", "failed"]).toContain(state.state);
      }),
      { numRuns: RUNS },
    );
    // timestamp, finishedOn, returnvalue, failedReason
    expect(decodeFinishedJob(["1", "2", '{"kind":"result"}', null])).toEqual({ state: "completed", returnValue: '{"kind":"result"}' });
    expect(decodeFinishedJob(["1", "2", null, "boom"])).toEqual({ state: "failed", failedReason: "boom" });
    expect(decodeFinishedJob(["1", "2", null, null])).toEqual({ state: "failed", failedReason: "" });
    // Running (no finishedOn, whatever else a forger wrote), no job at all, or not a reply of ours.
    expect(decodeFinishedJob(["1", null, '{"kind":"result"}', null])).toEqual({ state: "waiting" });
    expect(decodeFinishedJob([null, "2", "{}", null])).toEqual({ state: "waiting" });
    expect(decodeFinishedJob([null, null, null, null])).toEqual({ state: "waiting" });
    expect(decodeFinishedJob(["1", "2", "{}"])).toEqual({ state: "waiting" });
    expect(decodeFinishedJob([1, 2, "{}", null])).toEqual({ state: "waiting" });
  });

  test("cancel messages, progress, start checks and job data: anything in, a value or nothing out", () => {
    fc.assert(
      fc.property(fc.oneof(anyReply, fc.json(), fc.string()), (value) => {
        quickly(() => decodeCancel(value), 1000);
        quickly(() => decodeProgress(value), 1000);
        quickly(() => decodeStartReading(value), 1000);
        quickly(() => decodeServerTime(value), 1000);
        const data = quickly(() => decodeJobData(value), 1000);
        expect(data.call.type).toBe("toolCall");
      }),
      { numRuns: RUNS },
    );
    expect(decodeCancel(JSON.stringify({ jobId: "j", reason: "abort" }))).toEqual({ jobId: "j", reason: "abort" });
    expect(decodeCancel(JSON.stringify({ jobId: "a:b", reason: "abort" }))).toBeUndefined();
    expect(decodeCancel(JSON.stringify({ jobId: "j", reason: "later" }))).toBeUndefined();
    expect(decodeCancel(`{"jobId":"${"j".repeat(5000)}","reason":"abort"}`)).toBeUndefined();
    expect(decodeStartReading([null, "token", "1700000000000 1700000010000"])).toEqual({
      marked: false,
      lock: "token",
      lease: { renewedAt: 1700000000000, expiresAt: 1700000010000 },
    });
    expect(decodeStartReading(["abort", null, "1700000010000 1700000000000"])).toEqual({ marked: true, lock: undefined, lease: undefined });
    expect(decodeStartReading([null, null, "-5 10"])?.lease).toBeUndefined();
    expect(decodeServerTime(["1700000000", "999999"])).toBe(1700000000999);
    expect(decodeServerTime(["1700000000", "1000000"])).toBeUndefined();
  });
});

describe("one function makes every Redis key part", () => {
  /** A key part's bytes as ioredis sends it, and as BullMQ's msgpack packs it (its header dropped). */
  const ioredisBytes = (part: string): Buffer => Buffer.from(part, "utf8");
  const msgpackBytes = (part: string): Buffer => {
    const packed = pack(part);
    const header = packed[0] as number;
    const skip = header >= 0xa0 && header <= 0xbf ? 1 : header === 0xd9 ? 2 : header === 0xda ? 3 : 5;
    return packed.subarray(skip);
  };

  test("a part it admits is the same bytes in ioredis and in BullMQ's msgpack; every part with a lone surrogate is refused", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (part) => {
        const problem = quickly(() => keyPartProblem(part), 1000);
        if (!part.isWellFormed()) expect(problem).toMatch(/lone surrogate/);
        if (problem === undefined) expect(msgpackBytes(part).equals(ioredisBytes(part))).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  test("control characters, the separator and over-long parts are refused; the longest names pass", () => {
    for (const unit of [0x00, 0x0a, 0x1b, 0x7f, 0x85, 0x9f])
      expect(keyPartProblem(`q${String.fromCharCode(unit)}q`)).toMatch(/control character/);
    expect(keyPartProblem("a:b")).toBe('contains ":" (the key separator)');
    expect(keyPartProblem("")).toBe("is empty");
    expect(keyPartProblem("q".repeat(MAX_QUEUE_NAME_LENGTH), MAX_QUEUE_NAME_LENGTH)).toBeUndefined();
    expect(keyPartProblem("q".repeat(MAX_QUEUE_NAME_LENGTH + 1), MAX_QUEUE_NAME_LENGTH)).toBe("is longer than 128 characters");
    expect(keyPartProblem("\u{1F600}".repeat(MAX_QUEUE_NAME_LENGTH / 2), MAX_QUEUE_NAME_LENGTH)).toBeUndefined();
    expect(() => redisName("bull", "a\uD800")).toThrow(/lone surrogate/);
  });

  test("job ids from any call id are valid parts, distinct for distinct call ids, and name their agent", () => {
    const agentId = "tg-0123abcd-0000-4000-8000-00000000beef";
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 80 }), fc.string({ unit: "binary", maxLength: 80 }), (a, b) => {
        const first = jobIdFor(agentId, 1, a);
        expect(keyPartProblem(first)).toBeUndefined();
        expect(agentIdOf(first)).toBe(agentId);
        const cut = (id: string) => [...id].slice(0, 64).join("");
        if (cut(a) !== cut(b)) expect(jobIdFor(agentId, 1, b)).not.toBe(first);
      }),
      { numRuns: RUNS },
    );
    // The longest job id: 64 code points of lone surrogates, each escaped to six characters.
    expect(keyPartProblem(jobIdFor(agentId, Number.MAX_SAFE_INTEGER, "\uD800".repeat(100)))).toBeUndefined();
    expect(agentIdOf("tg-early.1.call")).toBeUndefined();
    expect(agentIdOf(`${agentId.toUpperCase()}.1.x`)).toBeUndefined();
  });

  test("a plain call id is kept as it is, an id with anything to escape is escaped, and the two never meet", () => {
    const agentId = "tg-0123abcd-0000-4000-8000-00000000beef";
    // Printable ASCII without "%" and ":", at most 64 units: the id as it is (no escape applies).
    const plain = fc.string({ unit: fc.constantFrom(..."!#AZaz09-_.~{}|/\\"), minLength: 1, maxLength: 64 });
    fc.assert(
      fc.property(plain, (callId) => {
        const id = jobIdFor(agentId, 7, callId);
        expect(id).toBe(`${agentId}.7.${callId}`);
        expect(keyPartProblem(id)).toBeUndefined();
      }),
      { numRuns: RUNS },
    );
    // One unit more, or one unit to escape: the general path (cut to 64, escaped), never the raw id.
    expect(jobIdFor(agentId, 7, "x".repeat(65))).toBe(`${agentId}.7.${"x".repeat(64)}`);
    expect(jobIdFor(agentId, 7, "a:b")).toBe(`${agentId}.7.a%3Ab`);
    expect(jobIdFor(agentId, 7, "a%3ab")).toBe(`${agentId}.7.a%253ab`);
    expect(jobIdFor(agentId, 7, "a b")).toBe(`${agentId}.7.a%20b`);
    expect(jobIdFor(agentId, 7, "")).toBe(`${agentId}.7.`);
  });

  test("the host's agent check: the agent it met last by one comparison, any other agent's id by its shape", () => {
    const first = "tg-0123abcd-0000-4000-8000-00000000beef";
    const second = "tg-0123abcd-0000-4000-8000-00000000cafe";
    expect(agentIdOfChecked(`${first}.1.call`, first)).toBe(first);
    expect(agentIdOfChecked(`${second}.1.call`, first)).toBe(second);
    expect(agentIdOfChecked(`${second}.1.call`, undefined)).toBe(second);
    // The last agent's id without its "." is not that agent's job; a job id of no agent's shape is nobody's.
    expect(agentIdOfChecked(`${first}x1.call`, first)).toBeUndefined();
    expect(agentIdOfChecked(`${first.toUpperCase()}.1.x`, first)).toBeUndefined();
    expect(agentIdOfChecked("tg-early.1.call", first)).toBeUndefined();
  });

  test("a queue's names: its fixed parts checked once, each job's part checked as it is named", () => {
    const keys = queueKeys("tools", "{p}");
    expect(keys.job("tg-x.1.c")).toBe(redisName("{p}", "tools", "tg-x.1.c"));
    expect(keys.lock("j")).toBe(redisName("{p}", "tools", "j", "lock"));
    expect(keys.mark("j")).toBe(redisName("{p}", "tools", "toolgate", "cancelled", "j"));
    expect(keys.durable("k")).toBe(redisName("{p}", "tools", "toolgate", "durable", "k"));
    expect(queueKeys("tools").lease("a")).toBe(redisName("toolgate", "tools", "lease", "a"));
    expect(queueKeys("tools").events).toBe("bull:tools:events");
    expect(() => keys.job("a:b")).toThrow(/key separator/);
    expect(() => keys.lease("a\uD800")).toThrow(/lone surrogate/);
  });
});
