// The README's worker-executor tour, run from the installed tarball by
// test/package/pack.test.ts; the tool module is tools/text-tools.ts. From the toolgate/worker
// import to the "Checks" line this file is the README's code block, verbatim. The process
// must also exit by itself after close() (threads and ports are unref'd).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { WorkerToolExecutor } from "toolgate/worker";

const executor = await WorkerToolExecutor.create({
  modules: [new URL("./tools/text-tools.js", import.meta.url)], // each default-exports an array of tools
  maxThreads: 2, // default: os.availableParallelism()
  timeoutMs: 30_000, // per call: a TOOL_EXECUTION_TIMEOUT result after that; default: none
  abortGraceMs: 1_000, // a tool still running this long after abort has its thread replaced
});
const signal = new AbortController().signal; // the agent run's signal

// The main thread snapshots and validates the call; a worker thread runs execute.
const result = await executor.executeToolCall({ type: "toolCall", id: "call-1", name: "sha256", arguments: { text: "hello" } }, signal);
// result.content === "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"

// A batch: at most `concurrency` calls at once; results in call order, each linked to its call.
const results = await executor.executeBatch(
  [
    { type: "toolCall", id: "call-2", name: "sha256", arguments: { text: "a" } },
    { type: "toolCall", id: "call-3", name: "sha256", arguments: { text: 42 } },
  ],
  signal,
  { concurrency: 2 },
);
// results[1].content === '{"error":{"code":"TOOL_ARGUMENTS_INVALID","message":"text must be a string"}}'

await executor.close(); // drains accepted calls, then stops the threads

// Checks (not in the README): what the comments above promise.
const digest = (text: string): string => createHash("sha256").update(text).digest("hex");
assert.equal(result.content, digest("hello"));
assert.equal(result.content, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
assert.deepEqual(
  { id: result.id, toolCallId: result.toolCallId, toolName: result.toolName, isError: result.isError },
  { id: "tool-result-call-1", toolCallId: "call-1", toolName: "sha256", isError: false },
);
assert.ok(Object.isFrozen(result));
assert.deepEqual(
  results.map((each) => each.toolCallId),
  ["call-2", "call-3"],
);
assert.equal(results[0]?.content, digest("a"));
assert.equal(results[1]?.content, '{"error":{"code":"TOOL_ARGUMENTS_INVALID","message":"text must be a string"}}');
await assert.rejects(
  executor.executeToolCall({ type: "toolCall", id: "call-4", name: "sha256", arguments: { text: "late" } }, signal),
  (error: unknown) => (error as { code?: unknown }).code === "EXECUTOR_CLOSED",
);
