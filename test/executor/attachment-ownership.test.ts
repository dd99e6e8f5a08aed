// Issue 28, defect 5: each result owns its attachments' bytes. In-process, a result used to
// hold the very attachment the tool returned: a tool that caches an imageContent could
// rewrite or detach a published result's image later, and two results of one cached image
// shared one buffer. From a worker the bytes are moved (docs/worker.md), so the same checks
// hold there by construction; they run on both executors.
import type { ToolExecutor } from "toolgate";
import { afterEach, describe, expect, test } from "vitest";
import { EXECUTORS, inProcessExecutor } from "../support/executors.js";
import { call, fixture, neverAborted } from "../support/helpers.js";

const HOSTILE_PROMISE_TOOLS = fixture("hostile-promise-tools");
const open: ToolExecutor[] = [];
afterEach(async () => {
  for (const executor of open.splice(0)) await executor.close();
});

const BYTES = [1, 2, 3, 4];
const bytesOf = (data: Uint8Array | undefined) => [...(data ?? [])];

describe.each(EXECUTORS)("issue 28, defect 5 — a published image is the result's own (%s)", (_label, make) => {
  test("the tool rewriting, then detaching, the image it returned changes nothing in the result", async () => {
    const executor = await make([HOSTILE_PROMISE_TOOLS]);
    open.push(executor);
    const result = await executor.executeToolCall(call("cachedImage", { key: "rewritten", writeLater: true }), neverAborted());
    const data = result.attachments?.[0]?.data;
    expect(bytesOf(data)).toEqual(BYTES);
    await new Promise((resolve) => setTimeout(resolve, 20)); // the tool's own later write (a timer it set) has run
    await executor.executeToolCall(call("rewriteCached", { key: "rewritten" }), neverAborted());
    expect(bytesOf(data)).toEqual(BYTES);
    await executor.executeToolCall(call("rewriteCached", { key: "rewritten", detach: true }), neverAborted());
    expect(data?.byteLength).toBe(4);
    expect(bytesOf(data)).toEqual(BYTES);
  });
});

describe("issue 28, defect 5 — one cached imageContent in many results, in-process", () => {
  // (A worker moves an attachment's bytes out once: a cached one fails its second result, docs/worker.md.)
  test("each result gets its own copy: distinct buffers, exactly sized, and a write into one changes no other", async () => {
    const executor = await inProcessExecutor([HOSTILE_PROMISE_TOOLS]);
    open.push(executor);
    const first = await executor.executeToolCall(call("cachedImage", { key: "shared" }, "call-a"), neverAborted());
    const second = await executor.executeToolCall(call("cachedImage", { key: "shared" }, "call-b"), neverAborted());
    const [a, b] = [first.attachments?.[0], second.attachments?.[0]];
    expect(a?.data.buffer).not.toBe(b?.data.buffer);
    expect([a?.data.buffer.byteLength, b?.data.buffer.byteLength]).toEqual([4, 4]);
    expect(Object.isFrozen(a) && Object.isFrozen(b)).toBe(true);
    a?.data.fill(7);
    expect(bytesOf(b?.data)).toEqual(BYTES);
    expect(bytesOf(a?.data)).toEqual([7, 7, 7, 7]);
  });
});
