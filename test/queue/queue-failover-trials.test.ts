// Issue 44's failover trials: many failovers, each with a call in flight, counting what the
// issue asks about: calls that ran twice (never allowed: a stalled job fails, it is not rerun),
// calls whose tool ran but whose result was lost with the primary (the call then settles with a
// documented error saying the tool may have run), and calls that never ran. A trial SIGKILLs the
// primary at a random moment of a call, promotes its replica (REPLICAOF NO ONE) and points the
// clients' endpoint at it (a TCP forwarder of the test's own, as a managed Redis's endpoint or a
// virtual IP moves: every open connection drops), then restarts the dead server as the new
// primary's replica for the next trial. The same agent and host serve every trial. Then the
// same with durable calls, without and with the write concern (WAIT): each key is re-issued
// after the failover, counting the acknowledged results its replay no longer gives (lost with
// the primary) and the at-most-once tool's second runs. The counts are printed and quoted in
// docs/operations.md; TOOLGATE_FAILOVER_TRIALS sets how many trials of each kind (default 20
// of each, to keep CI's budget: CI runs the file on three Node versions, 60 trials of each kind
// per CI run; the docs' figures are from 200).
import { existsSync, readFileSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { Redis } from "ioredis";
import type { ToolResultMessage } from "toolgate";
import { QueueToolExecutor, runToolWorkerHost } from "toolgate/queue";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { call, errorOf, fixture, neverAborted, scratchDir, settle } from "../support/helpers.js";
import { hasRedisServerBinary } from "../support/redis.js";
import { type RedisNode, type RedisNodeAlone, startRedisNode } from "../support/redis-topologies.js";

const TOOLS = fixture("queue-tools");
/** The trials of each kind: plain calls, and each durable variant. */
const TRIALS = Number(process.env.TOOLGATE_FAILOVER_TRIALS ?? "20");
/** The write concern's WAIT bound: below the host's lockDurationMs, its Redis client's command timeout. */
const WAIT_TIMEOUT_MS = 500;
const LOCK_DURATION_MS = 1000;
const REDIS_LOST_MS = 3000;
/** A trial's call settles within this: the host's lock expiring, or Redis's silence, and a few heartbeats. */
const TRIAL_BOUND_MS = REDIS_LOST_MS + LOCK_DURATION_MS + 3000;

const missing = hasRedisServerBinary() ? undefined : "no redis-server is on PATH";
if (missing !== undefined) process.stderr.write(`\n*** toolgate queue failover trials DID NOT RUN: ${missing} ***\n\n`);

/** A loopback endpoint forwarding to one server; `moveTo` drops every connection and forwards new ones to another. */
interface Endpoint {
  readonly url: string;
  moveTo(port: number): void;
  close(): Promise<void>;
}

async function startEndpoint(targetPort: number): Promise<Endpoint> {
  let target = targetPort;
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.once("close", () => sockets.delete(socket));
  };
  const server: Server = createServer((client) => {
    const upstream = connect(target, "127.0.0.1");
    track(client);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.once("close", () => upstream.destroy());
    upstream.once("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    url: `redis://127.0.0.1:${port}`,
    moveTo(next) {
      target = next;
      for (const socket of sockets) socket.destroy();
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** One command on a fresh connection to `port`. */
async function ask(port: number, ...command: string[]): Promise<unknown> {
  const client = new Redis({ port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  client.on("error", () => {});
  try {
    await client.connect();
    return await client.call(command[0] as string, ...command.slice(1));
  } finally {
    client.disconnect();
  }
}

/** `replica` follows `primary` and has caught up with it. */
async function follow(replica: RedisNode, primary: RedisNode): Promise<void> {
  // The first sync starts at once (by default a primary waits 5 s for more replicas to join it).
  await ask(primary.port, "CONFIG", "SET", "repl-diskless-sync-delay", "0");
  await ask(replica.port, "REPLICAOF", "127.0.0.1", String(primary.port));
  const deadline = Date.now() + 10_000;
  for (;;) {
    const info = String(await ask(replica.port, "INFO", "replication"));
    if (info.includes("master_link_status:up")) return;
    if (Date.now() > deadline) throw new Error(`the replica on port ${replica.port} did not sync within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `primary`'s replica acknowledges a write within 100 ms (a write, then `WAIT 1 100`, until it
 * answers 1), within 10 s. A replica whose link is up may still be slow with its first
 * acknowledgements on a busy machine; a call under a 500 ms write concern meeting that moment
 * fails with the documented "not acknowledged" error instead of running.
 */
async function acknowledges(primary: RedisNode): Promise<void> {
  const client = new Redis({ port: primary.port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  try {
    await client.connect();
    const deadline = Date.now() + 10_000;
    for (;;) {
      await client.set("failover-trials:ack", String(Date.now()));
      if (Number(await client.call("WAIT", "1", "100")) >= 1) return;
      if (Date.now() > deadline) throw new Error(`the replica of port ${primary.port} acknowledged no write within 10 s`);
    }
  } finally {
    client.disconnect();
  }
}

/** How many times call `id` started its tool (the fixture appends a line per start). */
const startsOf = (log: string, id: string): number =>
  (existsSync(log) ? readFileSync(log, "utf8") : "").split("\n").filter((line) => line.startsWith(`${id} `)).length;

type Settled = { ok: true; value: ToolResultMessage } | { ok: false; reason: unknown };
const reasonOf = (outcome: Settled): string => (outcome.ok ? errorOf(outcome.value).message : String(outcome.reason));
const tally = (counts: Map<string, number>, reason: string): void => {
  const key = reason.slice(0, 48);
  counts.set(key, (counts.get(key) ?? 0) + 1);
};
const reasonList = (counts: Map<string, number>): string => [...counts].map(([reason, count]) => `${count}× ${reason}`).join(" | ");

/** The errors a call caught by a failover may settle with (docs/operations.md, docs/durable.md). */
const DOCUMENTED_ERRORS =
  /the job is gone from Redis|Redis did not answer|could not be enqueued|stopped renewing its job lock|the host did not start the tool|the durable store could not be used|an earlier execution of this call was lost/;

describe.skipIf(missing !== undefined)(
  `${TRIALS} failovers, each with a call in flight (docs/operations.md — Running Redis for toolgate)`,
  () => {
    const servers: RedisNodeAlone[] = [];
    let endpoint: Endpoint | undefined;
    beforeAll(async () => {
      servers.push(await startRedisNode({ name: "primary" }), await startRedisNode({ name: "replica" }));
      await follow((servers[1] as RedisNodeAlone).node, (servers[0] as RedisNodeAlone).node);
      endpoint = await startEndpoint((servers[0] as RedisNodeAlone).node.port);
    });
    afterAll(async () => {
      await endpoint?.close();
      for (const server of servers) await server.stop();
    });

    /** SIGKILLs the primary a random moment into the call, promotes its replica and moves the endpoint; the call's outcome within its bound. */
    async function failOverDuring<T>(pending: Promise<T>, trial: number): Promise<T> {
      const [primary, replica] = servers.slice(-2).map((server) => server.node) as [RedisNode, RedisNode];
      await sleep(Math.floor(Math.random() * 40));
      await primary.kill();
      await ask(replica.port, "REPLICAOF", "NO", "ONE");
      (endpoint as Endpoint).moveTo(replica.port);
      const outcome = await Promise.race([pending, sleep(TRIAL_BOUND_MS + 5000).then(() => undefined)]);
      if (outcome === undefined) throw new Error(`trial ${trial}: the call did not settle within ${TRIAL_BOUND_MS + 5000} ms`);
      return outcome;
    }

    /** The dead server comes back as the new primary's replica: the next trial fails over to it. */
    async function replaceDeadPrimary(trial: number): Promise<void> {
      const next = await startRedisNode({ name: `node-${trial}` });
      servers.push(next);
      await follow(next.node, (servers[servers.length - 2] as RedisNodeAlone).node);
      // The dead one's directory goes now: the trials leave two servers' worth behind, not one per trial.
      await (servers.splice(-3, 1)[0] as RedisNodeAlone).stop();
    }

    test("no call runs twice and each settles within its bound; results lost with the primary are counted", async () => {
      const log = join(scratchDir(), "starts.log");
      const url = (endpoint as Endpoint).url;
      const host = await runToolWorkerHost({ connection: url, queue: "q", modules: [TOOLS], threads: 2, lockDurationMs: LOCK_DURATION_MS });
      const executor = await QueueToolExecutor.create({
        connection: url,
        queue: "q",
        modules: [TOOLS],
        heartbeatMs: 50,
        redisLostMs: REDIS_LOST_MS,
      });
      const counts = { returned: 0, ranButFailed: 0, neverRan: 0 };
      const reasons = new Map<string, number>();
      let slowestMs = 0;
      try {
        for (let trial = 0; trial < TRIALS; trial += 1) {
          const id = `trial-${trial}`;
          const sentAt = performance.now();
          const pending = settle(executor.executeToolCall(call("whoAmI", { ms: Math.floor(Math.random() * 40), log }, id), neverAborted()));
          const outcome = await failOverDuring(pending, trial);
          slowestMs = Math.max(slowestMs, performance.now() - sentAt);
          const ran = startsOf(log, id);
          expect(ran).toBeLessThanOrEqual(1);
          if (outcome.ok && !outcome.value.isError) counts.returned += 1;
          else {
            if (ran === 1) counts.ranButFailed += 1;
            else counts.neverRan += 1;
            const reason = reasonOf(outcome);
            tally(reasons, reason);
            expect(reason).toMatch(DOCUMENTED_ERRORS);
          }
          await replaceDeadPrimary(trial);
        }
        // The same executor and host after every failover.
        expect((await executor.executeToolCall(call("whoAmI", {}, "after-all"), neverAborted())).isError).toBe(false);
      } finally {
        await executor.close();
        await host.close();
      }
      expect(slowestMs).toBeLessThan(TRIAL_BOUND_MS);
      process.stdout.write(
        `\nfailover trials: ${TRIALS} primaries SIGKILLed with a call in flight: ${counts.returned} returned their result, ${counts.ranButFailed} ran but lost their result (settled with an error), ${counts.neverRan} never ran (settled with an error), 0 ran twice; slowest call ${Math.round(slowestMs)} ms [${reasonList(reasons)}]\n`,
      );
    }, 600_000);

    // Durable calls (docs/durable.md — On the queue) of the at-most-once whoAmI, without and
    // with the write concern: each call's key is re-issued once the next replica has synced, and
    // what the re-issue finds tells whether the record survived the failover.
    for (const variant of [
      { name: "durable, no write concern", writeConcern: undefined },
      { name: "durable, writeConcern { replicas: 1 } (WAIT)", writeConcern: { replicas: 1, timeoutMs: WAIT_TIMEOUT_MS } },
    ]) {
      test(`${variant.name}: each call settles within its bound; second runs (none with WAIT) and lost acknowledged results counted`, async () => {
        const log = join(scratchDir(), "starts.log");
        const url = (endpoint as Endpoint).url;
        const runId = `run-${variant.writeConcern === undefined ? "plain" : "wait"}-${process.pid}`;
        const host = await runToolWorkerHost({
          connection: url,
          queue: "d",
          modules: [TOOLS],
          threads: 2,
          lockDurationMs: LOCK_DURATION_MS,
        });
        const executor = await QueueToolExecutor.create({
          connection: url,
          queue: "d",
          modules: [TOOLS],
          heartbeatMs: 50,
          redisLostMs: REDIS_LOST_MS,
          durable: { leaseMs: 1000, ...(variant.writeConcern === undefined ? {} : { writeConcern: variant.writeConcern }) },
        });
        const counts = {
          returned: 0,
          ranButFailed: 0,
          neverRan: 0,
          ranTwice: 0,
          lostAcknowledged: 0,
          recordLost: 0,
        };
        const reasons = new Map<string, number>();
        const reissues = new Map<string, number>();
        let slowestMs = 0;
        try {
          for (let trial = 0; trial < TRIALS; trial += 1) {
            const id = `durable-${trial}`;
            const tool = call("whoAmI", { ms: Math.floor(Math.random() * 40), log }, id);
            const sentAt = performance.now();
            const pending = settle(executor.executeToolCall(tool, neverAborted(), { durable: { runId } }));
            const outcome = await failOverDuring(pending, trial);
            slowestMs = Math.max(slowestMs, performance.now() - sentAt);
            const acknowledged = outcome.ok && !outcome.value.isError;
            if (acknowledged) counts.returned += 1;
            else {
              if (startsOf(log, id) === 1) counts.ranButFailed += 1;
              else counts.neverRan += 1;
              const reason = reasonOf(outcome);
              tally(reasons, reason);
              expect(reason).toMatch(DOCUMENTED_ERRORS);
            }
            await replaceDeadPrimary(trial);
            // What the new primary kept of the key, then the same key again.
            const record = await executor.durableCalls.read({ runId, callId: id });
            const again = await executor.executeToolCall(tool, neverAborted(), { durable: { runId } });
            const ran = startsOf(log, id);
            if (record === undefined) counts.recordLost += 1;
            // With WAIT every write before the tool starts (the claim, the host's start) reached the
            // replica, so the at-most-once tool never runs twice under a key. Without it the new
            // primary may have the claim but not the host's start, and the job, redelivered,
            // starts the tool again: counted, not forbidden (asynchronous replication).
            const seen = `trial ${trial}: first ${acknowledged ? "a result" : reasonOf(outcome)}; record before the re-issue ${JSON.stringify(record)}; re-issue ${again.content}`;
            if (variant.writeConcern !== undefined) expect(ran, seen).toBeLessThanOrEqual(1);
            expect(ran).toBeLessThanOrEqual(2);
            if (ran === 2) counts.ranTwice += 1;
            if (acknowledged && !(record?.state === "done" && again.content === outcome.value.content)) counts.lostAcknowledged += 1;
            tally(reissues, `${record?.state ?? "no record"} -> ${again.isError ? errorOf(again).message.slice(0, 40) : "result"}`);
          }
          // The last trial's replica is new: the check after all is of the calls, not of its first acknowledgements.
          if (variant.writeConcern !== undefined) await acknowledges((servers[servers.length - 2] as RedisNodeAlone).node);
          const afterAll = await executor.executeToolCall(call("whoAmI", {}, "after-all"), neverAborted(), { durable: { runId } });
          expect(afterAll.isError, afterAll.content).toBe(false);
        } finally {
          await executor.close();
          await host.close();
        }
        process.stdout.write(
          `\nfailover trials, ${variant.name}: ${TRIALS} primaries SIGKILLed with a durable call in flight, each key re-issued after the failover\n` +
            `| of ${TRIALS} calls | count |\n| --- | --- |\n` +
            `| returned their result (acknowledged) | ${counts.returned} |\n` +
            `| ran, settled with an error | ${counts.ranButFailed} |\n` +
            `| never ran, settled with an error | ${counts.neverRan} |\n` +
            `| record lost with the primary (the re-issue found none) | ${counts.recordLost} |\n` +
            `| acknowledged result not replayed by the re-issue (lost) | ${counts.lostAcknowledged} |\n` +
            `| ran twice (a write of the first run lost with the primary) | ${counts.ranTwice} |\n` +
            `| slowest to settle | ${Math.round(slowestMs)} ms |\n` +
            `errors: [${reasonList(reasons)}]\nre-issues (record before -> answer): [${reasonList(reissues)}]\n`,
        );
        expect(slowestMs).toBeLessThan(TRIAL_BOUND_MS);
        // Not asserted: zero lost acknowledged results with WAIT. The outcome's WAIT does not
        // gate the answer (the tool ran): a primary killed between the host's record and its
        // replication leaves the promoted replica saying "running", while the job's completion
        // still reaches the agent through the new primary. 200 trials saw it (docs/operations.md).
      }, 600_000);
    }
  },
);
