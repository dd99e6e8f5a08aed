// context.app, in-process: the executor's, or the call's, handed over by identity and never
// read by toolgate. Typed through the ToolApp interface a program merges its fields into.
import {
  type ApprovalContext,
  executeToolCall,
  InProcessToolExecutor,
  isToolContractError,
  type ToolApp,
  type ToolContext,
  ToolRegistry,
} from "toolgate";
import { describe, expect, expectTypeOf, test } from "vitest";
import { call, neverAborted, settle } from "../support/helpers.js";

interface Database {
  query(sql: string): string;
}

// What a program declares once; the fields are optional here only because every test file of
// this project compiles together, and the others set no app.
declare module "toolgate" {
  interface ToolApp {
    readonly operatorTestDb?: Database;
  }
}

const contexts: ToolContext[] = [];
const registry = new ToolRegistry([
  {
    name: "lookup",
    description: "queries the application's database",
    validate: (args: unknown) => ({ ok: true as const, value: args }),
    execute: (_args: unknown, context: ToolContext) => {
      contexts.push(context);
      const db = context.app?.operatorTestDb;
      return db === undefined ? "no app" : db.query("select 1");
    },
  },
]);

const database = (name: string): Database => ({ query: (sql) => `${name}: ${sql}` });

describe("rule 7 — execution context: context.app", () => {
  test("is typed by the fields the program merged into ToolApp (checked by tsc)", () => {
    expectTypeOf<ToolContext["app"]>().toEqualTypeOf<ToolApp | undefined>();
    expectTypeOf<ToolApp["operatorTestDb"]>().toEqualTypeOf<Database | undefined>();
    expectTypeOf<NonNullable<ToolApp["operatorTestDb"]>["query"]>().parameters.toEqualTypeOf<[string]>();
  });

  test("the executor's app reaches the tool by identity; a call's own app overrides it", async () => {
    const app: ToolApp = { operatorTestDb: database("main") };
    const executor = new InProcessToolExecutor(registry, { app });
    expect((await executor.executeToolCall(call("lookup"), neverAborted())).content).toBe("main: select 1");
    expect(contexts.at(-1)?.app).toBe(app);
    expect(Object.isFrozen(contexts.at(-1))).toBe(true);
    const replica: ToolApp = { operatorTestDb: database("replica") };
    expect((await executor.executeToolCall(call("lookup"), neverAborted(), { app: replica })).content).toBe("replica: select 1");
    expect(contexts.at(-1)?.app).toBe(replica);
    const batch = await executor.executeBatch([call("lookup", {}, "b1"), call("lookup", {}, "b2")], neverAborted(), { app: replica });
    expect(batch.map((result) => result.content)).toEqual(["replica: select 1", "replica: select 1"]);
  });

  test("without an app the context keeps exactly { signal, toolCallId, reportProgress }", async () => {
    expect((await new InProcessToolExecutor(registry).executeToolCall(call("lookup"), neverAborted())).content).toBe("no app");
    expect(Object.keys(contexts.at(-1) as object)).toEqual(["signal", "toolCallId", "reportProgress"]);
  });

  test("executeToolCall takes a call's app too", async () => {
    const app: ToolApp = { operatorTestDb: database("direct") };
    expect((await executeToolCall(registry, call("lookup"), neverAborted(), { app })).content).toBe("direct: select 1");
  });

  test("toolgate never reads the app: a Proxy that counts every trap is handed over untouched", async () => {
    let traps = 0;
    const count = () => {
      traps += 1;
      return undefined;
    };
    const watched = new Proxy({}, { get: count, has: count, ownKeys: count, getPrototypeOf: count } as unknown as ProxyHandler<object>);
    const approvals: ApprovalContext[] = [];
    const executor = new InProcessToolExecutor(registry, {
      app: watched as ToolApp,
      hooks: {
        beforeExecute(_call, _tool, context) {
          approvals.push(context);
          return { allow: true };
        },
      },
    });
    await executor.executeToolCall(call("lookup"), neverAborted());
    expect(traps).toBe(1); // the tool's own read of `operatorTestDb`; toolgate made none
    expect(approvals[0]?.app).toBe(watched); // the approval hook sees the same app
    expect(contexts.at(-1)?.app).toBe(watched);
  });

  test("an app behind an accessor is refused, not read", async () => {
    let reads = 0;
    const options = Object.defineProperty({}, "app", {
      get() {
        reads += 1;
        return {};
      },
      enumerable: true,
    });
    expect(() => new InProcessToolExecutor(registry, options)).toThrow("options.app must be a data property, not an accessor");
    const outcome = await settle(executeToolCall(registry, call("lookup"), neverAborted(), options));
    expect(isToolContractError((outcome as { reason: unknown }).reason)).toBe(true);
    expect(reads).toBe(0);
  });
});
