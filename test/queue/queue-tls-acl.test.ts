// The queue over TLS as least-privilege ACL users (issue 44), on a redis-server of the test's
// own that speaks only TLS (a CA made with openssl) and has its default user disabled: the
// contract's core runs over rediss:// as a user holding exactly the rules docs/operations.md
// gives; a wrong password, a wrong CA, a user without a command and a user of another queue are
// each refused by create() and the host start, within the connect bound, naming what was
// refused; and that other queue's user cannot read or write this queue's keys.
import { spawnSync } from "node:child_process";
import { Redis } from "ioredis";
import { QueueToolExecutor, runToolWorkerHost, type ToolWorkerHost } from "toolgate/queue";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { contractError } from "../support/assertions.js";
import { call, errorOf, fixture, neverAborted } from "../support/helpers.js";
import { hasRedisServerBinary } from "../support/redis.js";
import { type AclUser, startTlsRedis, type TlsRedis } from "../support/redis-topologies.js";
import { startHostProcess } from "./host-process.js";
import { queueAclRules } from "./queue-acl-rules.js";

const TOOLS = fixture("queue-tools");
const FEATURES = fixture("queue-feature-tools");

const missing = !hasRedisServerBinary()
  ? "no redis-server is on PATH"
  : spawnSync("openssl", ["version"], { stdio: "ignore" }).status !== 0
    ? "no openssl is on PATH"
    : undefined;
if (missing !== undefined) process.stderr.write(`\n*** toolgate queue TLS/ACL tests DID NOT RUN: ${missing} ***\n\n`);

const PREFIX = "{tls}";
const QUEUE = "tools";
const OTHER_PREFIX = "{other}";
const agentUser: AclUser = { name: "tools-agent", password: "agent-secret", rules: queueAclRules(PREFIX, QUEUE) };
const hostUser: AclUser = { name: "tools-host", password: "host-secret", rules: queueAclRules(PREFIX, QUEUE) };
const otherUser: AclUser = { name: "other-agent", password: "other-secret", rules: queueAclRules(OTHER_PREFIX, QUEUE) };
// Every rule of the queue but XADD: BullMQ's scripts would fail inside Redis on every job.
const noXadd: AclUser = { name: "no-xadd", password: "no-xadd-secret", rules: [...queueAclRules(PREFIX, QUEUE), "-xadd"] };

const CONNECT_BOUND_MS = 3000;

describe.skipIf(missing !== undefined)(
  "the queue over TLS as least-privilege ACL users (docs/operations.md — Running Redis for toolgate)",
  () => {
    let server: TlsRedis | undefined;
    beforeAll(async () => {
      server = await startTlsRedis({ users: [agentUser, hostUser, otherUser, noXadd], defaultUser: "off", withinMs: 20_000 });
    }, 30_000);
    afterAll(() => server?.stop());

    const cleanups: (() => Promise<unknown>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
    });

    /** The object form: the rediss:// URL, the CA, the user. */
    const as = (user: AclUser, ca = (server as TlsRedis).ca, password = user.password) => ({
      url: (server as TlsRedis).url,
      tls: { ca },
      username: user.name,
      password,
    });

    const host = async (user: AclUser, modules = [TOOLS]): Promise<ToolWorkerHost> => {
      const started = await runToolWorkerHost({
        connection: as(user),
        queue: QUEUE,
        prefix: PREFIX,
        modules,
        threads: 2,
        abortGraceMs: 200,
        connectTimeoutMs: CONNECT_BOUND_MS,
      });
      cleanups.push(() => started.close());
      return started;
    };
    const agent = async (user: AclUser, modules = [TOOLS]): Promise<QueueToolExecutor> => {
      const executor = await QueueToolExecutor.create({
        connection: as(user),
        queue: QUEUE,
        prefix: PREFIX,
        modules,
        heartbeatMs: 100,
        connectTimeoutMs: CONNECT_BOUND_MS,
      });
      cleanups.push(() => executor.close());
      return executor;
    };

    test("the contract's core over rediss:// as the documented least-privilege users: a call, a batch, an abort, a timeout, progress", async () => {
      await host(hostUser, [FEATURES]);
      const executor = await agent(agentUser, [FEATURES]);

      const result = await executor.executeToolCall(call("nap", { ms: 1 }, "tls-1"), neverAborted());
      expect(result).toMatchObject({ toolCallId: "tls-1", isError: false });
      expect(JSON.stringify(result.content)).toContain("rested");

      const batch = await executor.executeBatch([call("nap", { ms: 1 }, "b-1"), call("nap", { ms: 1 }, "b-2")], neverAborted());
      expect(batch.map((message) => [message.toolCallId, message.isError])).toEqual([
        ["b-1", false],
        ["b-2", false],
      ]);

      const controller = new AbortController();
      const aborted = executor.executeToolCall(call("nap", { ms: 10_000 }, "abort-1"), controller.signal);
      setTimeout(() => controller.abort(new Error("stop it")), 200);
      await expect(aborted).rejects.toThrow("stop it");

      const late = await executor.executeToolCall(call("spin", { ms: 5000 }, "timeout-1"), neverAborted(), { timeoutMs: 300 });
      expect(errorOf(late).code).toBe("TOOL_EXECUTION_TIMEOUT");

      const seen: unknown[] = [];
      const reported = await executor.executeToolCall(call("report", { steps: 2, gapMs: 50 }, "p-1"), neverAborted(), {
        onProgress: (progress) => seen.push(progress.progress),
      });
      expect(reported.isError).toBe(false);
      expect(seen).toContain(1);
    }, 30_000);

    test("toolgate-worker over rediss:// with --redis-ca and the host user in the URL serves the agent's calls; a wrong CA file makes it exit naming the certificate", async () => {
      const { node, files } = server as TlsRedis;
      const url = `rediss://${hostUser.name}:${hostUser.password}@127.0.0.1:${node.port}`;
      const process = await startHostProcess(url, QUEUE, [FEATURES], ["--prefix", PREFIX, "--redis-ca", files.caFile, "--threads", "1"]);
      cleanups.push(() => process.stop("SIGKILL"));
      const executor = await agent(agentUser, [FEATURES]);
      expect((await executor.executeToolCall(call("nap", { ms: 1 }, "cli-1"), neverAborted())).isError).toBe(false);
      await expect(
        startHostProcess(`redis://127.0.0.1:${node.port}`, QUEUE, [FEATURES], ["--prefix", PREFIX, "--redis-ca", files.caFile]),
      ).rejects.toThrow(/\(code 2\): toolgate-worker: ToolContractError: --redis-ca is the CA of a TLS server: give a rediss:\/\/ URL/);
      await expect(startHostProcess(url, QUEUE, [FEATURES], ["--prefix", PREFIX, "--redis-ca", files.wrongCaFile])).rejects.toThrow(
        /exited before it was ready \(code 1\): toolgate-worker: ToolContractError: the Redis at rediss:\/\/127\.0\.0\.1:\d+ refused the connection: its TLS certificate is not trusted/,
      );
    }, 30_000);

    test("a wrong password is refused at create() and at host start, naming WRONGPASS, well within the connect bound", async () => {
      for (const start of [
        () => QueueToolExecutor.create({ connection: as(agentUser, undefined, "wrong"), queue: QUEUE, prefix: PREFIX, modules: [TOOLS] }),
        () => runToolWorkerHost({ connection: as(hostUser, undefined, "wrong"), queue: QUEUE, prefix: PREFIX, modules: [TOOLS] }),
      ]) {
        const startedAt = performance.now();
        const error = await contractError(start());
        expect(error.code).toBe("INVALID_ARGUMENT");
        expect(error.message).toMatch(/refused the connection: the user name or password is wrong.*WRONGPASS/);
        expect(error.message).not.toContain('wrong"'); // never the password
        expect(performance.now() - startedAt).toBeLessThan(5000); // the default connect bound: a refusal does not wait it out
      }
    });

    test("a CA that did not sign the server's certificate is refused, naming the certificate and the option to fix", async () => {
      const startedAt = performance.now();
      const error = await contractError(
        QueueToolExecutor.create({
          connection: as(agentUser, (server as TlsRedis).wrongCa),
          queue: QUEUE,
          prefix: PREFIX,
          modules: [TOOLS],
          connectTimeoutMs: CONNECT_BOUND_MS,
        }),
      );
      expect(error.message).toMatch(
        /refused the connection: its TLS certificate is not trusted \(\w+\): give the CA .* options\.connection\.tls\.ca/,
      );
      expect(performance.now() - startedAt).toBeLessThan(CONNECT_BOUND_MS);
    });

    test("a user whose ACL forbids a command the queue runs is refused at start, naming the command and key", async () => {
      for (const start of [
        () => QueueToolExecutor.create({ connection: as(noXadd), queue: QUEUE, prefix: PREFIX, modules: [TOOLS] }),
        () => runToolWorkerHost({ connection: as(noXadd), queue: QUEUE, prefix: PREFIX, modules: [TOOLS] }),
      ]) {
        const error = await contractError(start());
        expect(error.message).toContain(
          'forbids the user "no-xadd" commands or names the queue tools needs (its ACL refuses: xadd {tls}:tools:events',
        );
      }
    });

    test("a user limited to another queue's keys is refused this queue at start, and cannot read or write its jobs, marks or channel", async () => {
      const error = await contractError(
        QueueToolExecutor.create({ connection: as(otherUser), queue: QUEUE, prefix: PREFIX, modules: [TOOLS] }),
      );
      expect(error.message).toMatch(/refused the user "other-agent" the queue's scripts \(EVAL on \{tls\}:tools:wait\): NOPERM/);

      // This queue has a job; the other queue's user tries its keys directly.
      await host(hostUser);
      const executor = await agent(agentUser);
      await executor.executeToolCall(call("count", { n: 1 }, "kept"), neverAborted());
      const { url, ...access } = as(otherUser);
      const intruder = new Redis(url, { ...access, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
      intruder.on("error", () => {});
      cleanups.push(async () => intruder.disconnect());
      await intruder.connect();
      await expect(intruder.xrange(`${PREFIX}:${QUEUE}:events`, "-", "+")).rejects.toThrow(/NOPERM/);
      await expect(intruder.lpush(`${PREFIX}:${QUEUE}:wait`, "forged")).rejects.toThrow(/NOPERM/);
      await expect(intruder.set(`${PREFIX}:${QUEUE}:toolgate:cancelled:x`, "abort")).rejects.toThrow(/NOPERM/);
      await expect(intruder.publish(`${PREFIX}:${QUEUE}:toolgate:cancel`, "{}")).rejects.toThrow(/NOPERM/);
      // …while its own queue's keys are its to use.
      expect(await intruder.set(`${OTHER_PREFIX}:${QUEUE}:toolgate:cancelled:x`, "1")).toBe("OK");
    });
  },
);
