// The seam between the shared pipeline and an executor's runner, driven with a runner of the
// test's own: what a worker-side runner will send (queue wait, thread id, a kill, attachments
// that crossed a thread as transferables) and what it will receive (the effective timeout, app).

import type { CallEndEvent } from "toolgate";
import { type ExecutorOptions, imageContent, type ThreadKilledEvent, type ToolApp, ToolRegistry } from "toolgate";
import { describe, expect, test } from "vitest";
import { registeredTools } from "../../dist/src/contract/tools.js";
import { executeCall, type Pipeline, type RunRequest, readExecutorOptions } from "../../dist/src/executor/pipeline.js";
import { call, errorOf, neverAborted } from "../support/helpers.js";

const tools = registeredTools(
  new ToolRegistry([
    {
      name: "remote",
      description: "runs elsewhere",
      validate: (a: unknown) => ({ ok: true as const, value: a }),
      execute: () => "never here",
    },
    {
      name: "bounded",
      description: "has its own limit",
      validate: (a: unknown) => ({ ok: true as const, value: a }),
      execute: () => "",
      timeoutMs: 700,
    },
  ]),
);

function pipelineWith(run: Pipeline["run"], options?: ExecutorOptions): Pipeline {
  return { tools, run, settings: readExecutorOptions(options) };
}

describe("rule W4 — re-link and freeze on the main thread: the runner seam", () => {
  test("the runner receives the effective timeout and the app; a pipeline without settings has neither", async () => {
    const requests: RunRequest[] = [];
    const run = (request: RunRequest) => {
      requests.push(request);
      return { content: "ok", isError: false };
    };
    const app: ToolApp = {};
    const pipeline = pipelineWith(run, { timeoutMs: 300, app });
    await executeCall(pipeline, call("remote"), neverAborted());
    await executeCall(pipeline, call("bounded"), neverAborted());
    await executeCall(pipeline, call("bounded"), neverAborted(), { timeoutMs: 5 });
    expect(requests.map((request) => request.timeoutMs)).toEqual([300, 700, 5]);
    expect(requests[0]?.app).toBe(app);
    await executeCall({ tools, run }, call("remote"), neverAborted());
    expect(requests[3]).toMatchObject({ timeoutMs: undefined, app: undefined });
    await executeCall({ tools, run }, call("bounded"), neverAborted());
    expect(requests[4]?.timeoutMs).toBe(700); // a tool's own limit needs no executor settings
  });

  test("queue wait, thread id and a kill recorded before the call settles are in onCallEnd", async () => {
    const ends: CallEndEvent[] = [];
    const pipeline = pipelineWith(
      async (request) => {
        request.record({ queueWaitMs: 40, threadId: 7 });
        await new Promise((resolve) => setTimeout(resolve, 60));
        request.record({ threadKilled: true });
        return {
          content: '{"error":{"code":"TOOL_EXECUTION_FAILED","message":"the worker thread running the tool failed"}}',
          isError: true,
        };
      },
      { hooks: { onCallEnd: (event) => void ends.push(event) } },
    );
    await executeCall(pipeline, call("remote", {}, "c1"), neverAborted());
    expect(ends[0]).toMatchObject({
      toolCallId: "c1",
      outcome: "error",
      code: "TOOL_EXECUTION_FAILED",
      queueWaitMs: 40,
      threadId: 7,
      threadKilled: true,
    });
    expect(ends[0]?.runMs).toBeGreaterThanOrEqual(10); // the runner's 60 ms, less the 40 it waited (timers are not exact)
  });

  test("a kill recorded after the call settled (an abort's grace period ran out) is onThreadKilled", async () => {
    const kills: ThreadKilledEvent[] = [];
    const ends: CallEndEvent[] = [];
    let record: RunRequest["record"] | undefined;
    const pipeline = pipelineWith(
      (request) => {
        record = request.record;
        request.record({ threadId: 9 });
        return new Promise((_resolve, reject) => request.signal.addEventListener("abort", () => reject(request.signal.reason)));
      },
      { hooks: { onCallEnd: (event) => void ends.push(event), onThreadKilled: (event) => void kills.push(event) } },
    );
    const controller = new AbortController();
    const pending = executeCall(pipeline, call("remote", {}, "c2"), controller.signal);
    setTimeout(() => controller.abort("stop"), 5);
    await expect(pending).rejects.toBe("stop");
    expect(ends[0]).toMatchObject({ outcome: "aborted", threadId: 9, threadKilled: false });
    record?.({ threadKilled: true });
    expect(kills).toEqual([{ toolCallId: "c2", toolName: "remote", threadId: 9 }]);
    expect(ends).toHaveLength(1); // onCallEnd stays once per call
  });

  test("attachments that crossed a thread (structured clone, bytes transferred) are adopted without a copy", async () => {
    const made = imageContent(new Uint8Array([1, 2, 3]), "image/png");
    const crossed = structuredClone({ content: "", isError: false, attachments: [made] }, { transfer: [made.data.buffer as ArrayBuffer] });
    expect(made.data.byteLength).toBe(0); // transferred: the sender's copy is detached
    const result = await executeCall(
      pipelineWith(() => crossed),
      call("remote"),
      neverAborted(),
    );
    expect(result.attachments?.[0]?.data).toBe(crossed.attachments[0]?.data);
    expect(result.attachments?.[0]).toEqual({ type: "image", mimeType: "image/png", data: new Uint8Array([1, 2, 3]) });
    expect(Object.isFrozen(result.attachments?.[0])).toBe(true);
  });

  test.each([
    ["a wrong mime type", [{ type: "image", mimeType: "image/svg+xml", data: new Uint8Array(1) }]],
    ["bytes that are not a Uint8Array", [{ type: "image", mimeType: "image/png", data: [1] }]],
    ["a detached buffer", [{ type: "image", mimeType: "image/png", data: new Uint8Array(0) }]],
    ["not a list", { type: "image" }],
  ])("a runner's attachments with %s make a TOOL_OUTPUT_SERIALIZATION_FAILED result", async (_label, attachments) => {
    const result = await executeCall(
      pipelineWith(() => ({ content: "x", isError: false, attachments }) as never),
      call("remote"),
      neverAborted(),
    );
    expect(errorOf(result).code).toBe("TOOL_OUTPUT_SERIALIZATION_FAILED");
    expect("attachments" in result).toBe(false);
  });
});
