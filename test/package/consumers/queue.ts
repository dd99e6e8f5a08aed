// toolgate/queue from the installed tarball, once its optional peers bullmq and ioredis are
// added beside it (test/package/pack.test.ts installs them for this consumer only and checks
// that the tarball alone brings neither): a worker host and an agent-side executor on one
// queue, a call through Redis, both closed. The Redis is the test's (REDIS_URL).
import assert from "node:assert/strict";
import { QueueToolExecutor, runToolWorkerHost } from "toolgate/queue";

const connection = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const queue = `toolgate-consumer-${process.pid}-${Date.now()}`;
const modules = [new URL("./tools/text-tools.js", import.meta.url)];

const host = await runToolWorkerHost({ connection, queue, modules, threads: 1 });
const executor = await QueueToolExecutor.create({ connection, queue, modules, timeoutMs: 30_000 });
try {
  const result = await executor.executeToolCall(
    { type: "toolCall", id: "call-1", name: "sha256", arguments: { text: "hello" } },
    new AbortController().signal,
  );
  assert.equal(result.content, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
  assert.equal(result.isError, false);
} finally {
  await executor.close();
  await host.close();
}
console.log("Checks: a call through the queue");
