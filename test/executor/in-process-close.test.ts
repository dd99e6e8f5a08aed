// InProcessToolExecutor.close(): it refuses new calls and resolves once every accepted call has
// settled. A call whose tool finished synchronously is over when executeToolCall returns (it is
// not counted); one still running is waited for.
import { defineTool, InProcessToolExecutor, isToolContractError, ToolRegistry } from "toolgate";
import { describe, expect, it } from "vitest";
import { call, neverAborted } from "../support/helpers.js";

function executorWith(release: Promise<void>): InProcessToolExecutor {
  return new InProcessToolExecutor(
    new ToolRegistry([
      defineTool({ name: "now", description: "d", validate: (args) => ({ ok: true, value: args }), execute: () => "now" }),
      defineTool({
        name: "later",
        description: "d",
        validate: (args) => ({ ok: true, value: args }),
        execute: async () => {
          await release;
          return "later";
        },
      }),
    ]),
  );
}

describe("InProcessToolExecutor.close()", () => {
  it("after synchronous calls only: resolves, and later calls are refused with EXECUTOR_CLOSED", async () => {
    const executor = executorWith(Promise.resolve());
    const results = [executor.executeToolCall(call("now"), neverAborted()), executor.executeToolCall(call("now"), neverAborted())];
    await executor.close();
    expect((await Promise.all(results)).map((result) => result.content)).toEqual(["now", "now"]);
    const refused = await executor.executeToolCall(call("now"), neverAborted()).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isToolContractError(refused) && refused.code).toBe("EXECUTOR_CLOSED");
  });

  it("waits for a call still running, not for the synchronous ones around it", async () => {
    let release = (): void => {};
    const executor = executorWith(new Promise<void>((resolve) => (release = resolve)));
    const before = executor.executeToolCall(call("now"), neverAborted());
    const running = executor.executeToolCall(call("later"), neverAborted());
    const after = executor.executeToolCall(call("now"), neverAborted());
    let closed = false;
    const closing = executor.close().then(() => {
      closed = true;
    });
    await before;
    await after;
    for (let turn = 0; turn < 10; turn += 1) await Promise.resolve();
    expect(closed).toBe(false);
    release();
    await closing;
    expect(closed).toBe(true);
    expect((await running).content).toBe("later");
  });
});
