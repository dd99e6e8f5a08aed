// Attachment budgets (per executor and per tool), argument budgets per tool (they only
// tighten) and executor-level output budgets, against every executor: the budgets apply
// where the tool runs, a worker thread included (issue 12, the operator's side).
import { defineTool, InProcessToolExecutor, isToolContractError, Limits, type ToolExecutor, ToolRegistry } from "toolgate";
import { WorkerToolExecutor } from "toolgate/worker";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { EXECUTORS } from "../support/executors.js";
import { call, errorOf, fixture, neverAborted, settle } from "../support/helpers.js";

const TOOL_BUDGETS = fixture("tool-budgets");
const BUDGET_TOOLS = fixture("budget-tools");

async function refusedCall(pending: Promise<unknown>): Promise<{ code: string; message: string }> {
  const settled = await settle(pending);
  expect(settled.ok).toBe(false);
  const reason = settled.ok ? undefined : settled.reason;
  expect(isToolContractError(reason)).toBe(true);
  return reason as { code: string; message: string };
}

describe.each(EXECUTORS)("attachment budgets, %s", (_label, make) => {
  let defaults: ToolExecutor;
  let tight: ToolExecutor;
  beforeAll(async () => {
    defaults = await make([TOOL_BUDGETS]);
    tight = await make([TOOL_BUDGETS], { attachmentBudgets: { maxAttachments: 2, maxAttachmentBytes: 1024 } });
  });
  afterAll(async () => {
    await defaults.close();
    await tight.close();
  });

  test("the defaults (16 attachments, 8 MiB in total) are checked where the tool runs", async () => {
    const sixteen = await defaults.executeToolCall(call("images", { count: Limits.MAX_ATTACHMENTS }), neverAborted());
    expect(sixteen.attachments).toHaveLength(16);
    const seventeen = await defaults.executeToolCall(call("images", { count: Limits.MAX_ATTACHMENTS + 1 }), neverAborted());
    expect(seventeen.attachments).toBeUndefined();
    // The runner's own message (not the calling thread's re-check): refused where the tool ran.
    expect(errorOf(seventeen)).toEqual({
      code: "TOOL_OUTPUT_SERIALIZATION_FAILED",
      message: "17 attachments is over the limit of 16 (attachment budget maxAttachments)",
    });
    const half = Limits.MAX_ATTACHMENT_BYTES / 2;
    const exact = await defaults.executeToolCall(call("images", { count: 2, bytes: half }), neverAborted());
    expect(exact.attachments?.map((attachment) => attachment.data.length)).toEqual([half, half]);
    const over = await defaults.executeToolCall(call("images", { count: 2, bytes: half + 1 }), neverAborted());
    expect(errorOf(over)).toEqual({
      code: "TOOL_OUTPUT_SERIALIZATION_FAILED",
      message: `the attachments' ${2 * (half + 1)} bytes are over the 8388608-byte budget in total (attachment budget maxAttachmentBytes)`,
    });
  });

  test("an executor's attachmentBudgets apply to every call; a tool's own fields win over them", async () => {
    expect(errorOf(await tight.executeToolCall(call("images", { count: 3 }), neverAborted())).message).toBe(
      "3 attachments is over the limit of 2 (attachment budget maxAttachments)",
    );
    expect((await tight.executeToolCall(call("images", { count: 2, bytes: 512 }), neverAborted())).attachments).toHaveLength(2);
    expect(errorOf(await tight.executeToolCall(call("images", { count: 1, bytes: 1025 }), neverAborted())).message).toBe(
      "the attachments' 1025 bytes are over the 1024-byte budget in total (attachment budget maxAttachmentBytes)",
    );
    // oneImage: its maxAttachments (1) below the executor's (2).
    expect(errorOf(await tight.executeToolCall(call("oneImage", { count: 2 }), neverAborted())).message).toBe(
      "2 attachments is over the limit of 1 (attachment budget maxAttachments)",
    );
    // bigImages: its 12 MiB over the executor's 1024 bytes and over the default 8 MiB.
    const big = await tight.executeToolCall(call("bigImages", { count: 1, bytes: 9 * 1024 * 1024 }), neverAborted());
    expect(big.isError).toBe(false);
    expect(big.attachments?.[0]?.data.length).toBe(9 * 1024 * 1024);
  });
});

describe.each(EXECUTORS)("argument budgets per tool, %s", (_label, make) => {
  let executor: ToolExecutor;
  beforeAll(async () => {
    executor = await make([TOOL_BUDGETS], { argumentBudgets: { maxNodes: 10 } });
  });
  afterAll(() => executor.close());

  test("a tool's argumentBudgets tighten the executor's: its calls are refused by them before anything runs", async () => {
    expect((await executor.executeToolCall(call("strictArgs", { list: [1, 2] }), neverAborted())).content).toBe("ok");
    const wide = await refusedCall(executor.executeToolCall(call("strictArgs", { list: [1, 2, 3] }), neverAborted()));
    expect(wide).toEqual(
      expect.objectContaining({
        code: "INVALID_TOOL_CALL",
        message: "arguments.list exceeds the argument budget: 3 elements do not fit in 4 values (2 counted) (argument budget maxNodes)",
      }),
    );
    const deep = await refusedCall(executor.executeToolCall(call("strictArgs", { a: { b: {} } }), neverAborted()));
    expect(deep.message).toBe("arguments.a.b nests deeper than 2 levels (argument budget maxDepth)");
    // Another tool under the same executor keeps the executor's 10.
    expect((await executor.executeToolCall(call("images", { count: 0, list: [1, 2, 3] }), neverAborted())).isError).toBe(false);
  });

  test("a call's argumentBudgets cannot lift a tool's, and a tool's cannot lift the executor's", async () => {
    const lifted = await refusedCall(
      executor.executeToolCall(call("strictArgs", { list: [1, 2, 3] }), neverAborted(), { argumentBudgets: { maxNodes: 100 } }),
    );
    expect(lifted.message).toContain("(argument budget maxNodes)");
    // laxArgs declares 10,000,000 values: the executor's 10 still bound it.
    const lax = await refusedCall(executor.executeToolCall(call("laxArgs", { list: new Array(20).fill(0) }), neverAborted()));
    expect(lax.message).toBe(
      "arguments.list exceeds the argument budget: 20 elements do not fit in 10 values (2 counted) (argument budget maxNodes)",
    );
    // A call may still raise the executor's up to what the tool admits.
    const raised = await executor.executeToolCall(call("laxArgs", { list: new Array(20).fill(0) }), neverAborted(), {
      argumentBudgets: { maxNodes: 100 },
    });
    expect(raised.content).toBe("ok");
  });

  test("in a batch, each call is snapshotted within its own tool's budgets", async () => {
    const batch = await settle(
      executor.executeBatch(
        [call("images", { count: 0, list: [1, 2, 3] }, "a"), call("strictArgs", { list: [1, 2, 3] }, "b")],
        neverAborted(),
      ),
    );
    expect(batch.ok ? undefined : batch.reason).toMatchObject({
      code: "INVALID_TOOL_CALL",
      message: expect.stringContaining("arguments.list exceeds the argument budget: 3 elements do not fit in 4 values"),
    });
  });
});

describe.each(EXECUTORS)("executor output budgets, %s", (_label, make) => {
  let executor: ToolExecutor;
  beforeAll(async () => {
    executor = await make([BUDGET_TOOLS], { outputBudgets: { maxNodes: 3, maxContentCodePoints: 1000 } });
  });
  afterAll(() => executor.close());

  test("an executor's outputBudgets apply where the tool runs; a tool's own fields win over them", async () => {
    expect(errorOf(await executor.executeToolCall(call("rows"), neverAborted()))).toEqual({
      code: "TOOL_OUTPUT_SERIALIZATION_FAILED",
      message: "output contains more than 3 values at $[0].id",
    });
    // tinyRows: its own maxNodes (20) over the executor's 3.
    expect(errorOf(await executor.executeToolCall(call("tinyRows"), neverAborted())).message).toBe(
      "output contains more than 20 values at $[3].score",
    );
    // shortContent: its own cap (64) over the executor's 1000.
    expect([...(await executor.executeToolCall(call("shortContent"), neverAborted())).content]).toHaveLength(64);
  });
});

describe("budget options are checked up front", () => {
  const tool = { name: "t", description: "d", validate: () => ({ ok: true as const, value: {} }), execute: () => "x" };

  test.each([
    [{ maxAttachments: 257 }, ".maxAttachments must be an integer from 0 to 256 (got the number 257)"],
    [{ maxAttachments: -1 }, ".maxAttachments must be an integer from 0 to 256 (got the number -1)"],
    [{ maxAttachmentBytes: 64 * 1024 * 1024 + 1 }, ".maxAttachmentBytes must be an integer from 1 to 67108864 (got the number 67108865)"],
    [{ maxAttachmentBytes: "8" }, ".maxAttachmentBytes must be an integer from 1 to 67108864 (got a string)"],
    [{ maxImages: 1 }, ' has an unknown budget "maxImages"'],
    [new Proxy({}, {}), " must be an object of budgets (got a Proxy)"],
    [Object.defineProperty({}, "maxAttachments", { get: () => 1, enumerable: true }), ".maxAttachments must be a data property"],
  ])("attachmentBudgets %j: refused by both executors and by defineTool", async (budgets, message) => {
    expect(() => new InProcessToolExecutor(new ToolRegistry(), { attachmentBudgets: budgets as never })).toThrow(
      expect.objectContaining({ code: "INVALID_ARGUMENT", message: expect.stringContaining(`options.attachmentBudgets${message}`) }),
    );
    const worker = await refusedCall(WorkerToolExecutor.create({ modules: [TOOL_BUDGETS], attachmentBudgets: budgets as never }));
    expect(worker).toMatchObject({ code: "INVALID_ARGUMENT", message: expect.stringContaining(`options.attachmentBudgets${message}`) });
    expect(() => defineTool({ ...tool, attachmentBudgets: budgets as never })).toThrow(
      expect.objectContaining({
        code: "INVALID_TOOL_DEFINITION",
        message: expect.stringContaining(`tool "t": attachmentBudgets${message}`),
      }),
    );
  });

  test.each([
    [{ maxNodes: 0 }, ".maxNodes must be an integer from 1 to 10000000 (got the number 0)"],
    [{ maxDepth: 1025 }, ".maxDepth must be an integer from 1 to 1024 (got the number 1025)"],
    [{ maxTotalSize: 1.5 }, ".maxTotalSize must be an integer from 1 to 2147483647 (got the number 1.5)"],
    [Object.defineProperty({}, "maxNodes", { get: () => 1, enumerable: true }), ".maxNodes must be a data property"],
  ])("a tool's argumentBudgets %j: refused by defineTool", (budgets, message) => {
    expect(() => defineTool({ ...tool, argumentBudgets: budgets as never })).toThrow(
      expect.objectContaining({ code: "INVALID_TOOL_DEFINITION", message: expect.stringContaining(`tool "t": argumentBudgets${message}`) }),
    );
  });

  test("a getter for a tool's budgets is read once, at definition time", () => {
    let reads = 0;
    const definition = Object.defineProperty({ ...tool }, "attachmentBudgets", {
      get: () => {
        reads += 1;
        return { maxAttachments: 1 };
      },
      enumerable: true,
    });
    const defined = defineTool(definition);
    expect(defined.attachmentBudgets).toEqual({ maxAttachments: 1 });
    expect(Object.isFrozen(defined.attachmentBudgets)).toBe(true);
    expect(reads).toBe(1);
  });
});
