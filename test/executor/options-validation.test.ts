// Every options object toolgate takes is read the one way (src/contract/validators.ts;
// docs/operations.md — Options): an unknown own key is a ToolContractError(INVALID_ARGUMENT)
// naming it and the option it is closest to; an accessor is refused and never run; an
// inherited field is never read; a value of the wrong type is "name must be … (got …)".
// A row per surface: a new options object is one more row.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { defineTool, describeTools, InProcessToolExecutor, ToolRegistry } from "toolgate";
import { toAiSdkTools } from "toolgate/ai-sdk";
import { toLangChainTools } from "toolgate/langchain";
import { createMcpServer } from "toolgate/mcp";
import { toOpenAiAgentsTools } from "toolgate/openai-agents";
import { fromPiAgentTool, toPiAgentTools } from "toolgate/pi";
import { QueueToolExecutor, runToolWorkerHost } from "toolgate/queue";
import { validatorFromStandardSchema } from "toolgate/standard-schema";
import { typeboxParameters, validatorFromTypeBox } from "toolgate/typebox";
import { WorkerToolExecutor } from "toolgate/worker";
import Type from "typebox";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { call, fixture, neverAborted } from "../support/helpers.js";

const registry = new ToolRegistry([
  defineTool({
    name: "echo",
    description: "Echoes its text.",
    jsonSchema: { type: "object", properties: { text: { type: "string" } } },
    validate: (args) => ({ ok: true, value: args as { text?: string } }),
    execute: (args: { text?: string }) => args.text ?? "",
  }),
]);
const executor = new InProcessToolExecutor(registry);
const MODULES = [fixture("contract-tools")];
// Nothing listens there: a surface that gets past its options fails at once, after reading them all.
const NO_REDIS = "redis://127.0.0.1:1";
const MISSING_MODULE = new URL("file:///nonexistent/toolgate-missing-tools.js");
const noop = (): void => {};

interface Surface {
  /** Calls the API with `options` in the place this surface covers (sync throws become rejections). */
  readonly run: (options: object) => unknown;
  /** Own keys the options need to get past the first checks (a missing module, an unreachable Redis stop them later). */
  readonly base: Record<string, unknown>;
  /** A misspelt key, the option it should suggest, and a value for it. */
  readonly typo: readonly [key: string, suggestion: string, value: unknown];
  /** A known option, given behind a getter (refused, never run) or inherited (never read). */
  readonly known: string;
  /** A value of the wrong type for an option, and the message it gets. */
  readonly wrong: readonly [key: string, value: unknown, message: string];
}

/** The ToolContractError a surface refuses `options` with (its sync throw or its rejection). */
async function refusal(surface: Surface, options: object): Promise<{ code: string; message: string }> {
  let outcome: unknown;
  try {
    outcome = await surface.run(options);
  } catch (error) {
    return error as { code: string; message: string };
  }
  await (outcome as { close?: () => Promise<void> } | undefined)?.close?.();
  throw new Error("the options were accepted");
}

/** Settles whatever the surface does, closing anything it made. */
async function attempt(surface: Surface, options: object): Promise<unknown> {
  try {
    const made = await surface.run(options);
    await (made as { close?: () => Promise<void> } | undefined)?.close?.();
    return undefined;
  } catch (error) {
    return error;
  }
}

const hooksOf = (hooks: object): Record<string, unknown> => ({ hooks });
const LONGEST = 2 ** 31 - 1;

const SURFACES: ReadonlyArray<readonly [string, Surface]> = [
  [
    "InProcessToolExecutor options",
    {
      run: (options) => new InProcessToolExecutor(registry, options as never),
      base: {},
      typo: ["beforeExecute", "hooks.beforeExecute", () => ({ allow: false, reason: "no" })],
      known: "timeoutMs",
      wrong: ["timeoutMs", "5", `options.timeoutMs must be an integer from 1 to ${LONGEST} (got a string)`],
    },
  ],
  [
    "InProcessToolExecutor hooks",
    {
      run: (options) => new InProcessToolExecutor(registry, hooksOf(options)),
      base: {},
      typo: ["beforeExecut", "beforeExecute", () => ({ allow: false, reason: "no" })],
      known: "onCallEnd",
      wrong: ["onCallEnd", 5, "options.hooks.onCallEnd must be a function (got the number 5)"],
    },
  ],
  [
    "InProcessToolExecutor argumentBudgets",
    {
      run: (options) => new InProcessToolExecutor(registry, { argumentBudgets: options as never }),
      base: {},
      typo: ["maxNode", "maxNodes", 3],
      known: "maxDepth",
      wrong: ["maxDepth", 0, "options.argumentBudgets.maxDepth must be an integer from 1 to 1024 (got the number 0)"],
    },
  ],
  [
    "InProcessToolExecutor outputBudgets",
    {
      run: (options) => new InProcessToolExecutor(registry, { outputBudgets: options as never }),
      base: {},
      typo: ["maxDept", "maxDepth", 3],
      known: "maxNodes",
      wrong: ["maxNodes", "9", "options.outputBudgets.maxNodes must be an integer from 1 to 1000000 (got a string)"],
    },
  ],
  [
    "InProcessToolExecutor attachmentBudgets",
    {
      run: (options) => new InProcessToolExecutor(registry, { attachmentBudgets: options as never }),
      base: {},
      typo: ["maxAttachment", "maxAttachments", 3],
      known: "maxAttachmentBytes",
      wrong: ["maxAttachments", -1, "options.attachmentBudgets.maxAttachments must be an integer from 0 to 256 (got the number -1)"],
    },
  ],
  [
    "executeToolCall options",
    {
      run: (options) => executor.executeToolCall(call("echo"), neverAborted(), options as never),
      base: {},
      typo: ["timeout", "timeoutMs", 100],
      known: "timeoutMs",
      wrong: ["onProgress", 5, "options.onProgress must be a function (got the number 5)"],
    },
  ],
  [
    "executeBatch options",
    {
      run: (options) => executor.executeBatch([call("echo")], neverAborted(), options as never),
      base: {},
      typo: ["concurency", "concurrency", 2],
      known: "concurrency",
      wrong: ["concurrency", 0, "options.concurrency must be a positive integer or Infinity (got the number 0)"],
    },
  ],
  [
    "WorkerToolExecutor.create options",
    {
      run: (options) => WorkerToolExecutor.create(options as never),
      base: { modules: [MISSING_MODULE], minThreads: 0 },
      typo: ["maxThread", "maxThreads", 2],
      known: "abortGraceMs",
      wrong: ["maxThreads", "2", "options.maxThreads must be an integer from 1 to 256 (got a string)"],
    },
  ],
  [
    "WorkerToolExecutor.create hooks",
    {
      run: (options) => WorkerToolExecutor.create({ modules: [MISSING_MODULE], minThreads: 0, hooks: options as never }),
      base: {},
      typo: ["onCalEnd", "onCallEnd", noop],
      known: "beforeExecute",
      wrong: ["onCallStart", "log", "options.hooks.onCallStart must be a function (got a string)"],
    },
  ],
  [
    "WorkerToolExecutor.create resourceLimits",
    {
      run: (options) => WorkerToolExecutor.create({ modules: [MISSING_MODULE], minThreads: 0, resourceLimits: options as never }),
      base: {},
      typo: ["maxOldGenerationSizeMB", "maxOldGenerationSizeMb", 64],
      known: "stackSizeMb",
      wrong: ["stackSizeMb", "4", "options.resourceLimits.stackSizeMb must be a number above 0 and at most 1048576 (got a string)"],
    },
  ],
  [
    "QueueToolExecutor.create options",
    {
      run: (options) => QueueToolExecutor.create(options as never),
      base: { connection: NO_REDIS, queue: "options-validation", registry, connectTimeoutMs: 1 },
      typo: ["heartbeatMS", "heartbeatMs", 500],
      known: "timeoutMs",
      wrong: ["heartbeatMs", 5, "options.heartbeatMs must be an integer from 20 to 60000 (got the number 5)"],
    },
  ],
  [
    "runToolWorkerHost options",
    {
      run: (options) => runToolWorkerHost(options as never),
      base: { connection: NO_REDIS, queue: "options-validation", modules: MODULES, connectTimeoutMs: 1 },
      typo: ["thread", "threads", 2],
      known: "timeoutMs",
      wrong: ["threads", 300, "options.threads must be an integer from 1 to 256 (got the number 300)"],
    },
  ],
  [
    "describeTools options",
    {
      run: (options) => describeTools(registry, options as never),
      base: {},
      typo: ["withoutschema", "withoutSchema", "any-object"],
      known: "withoutSchema",
      wrong: ["withoutSchema", "skip", 'describeTools: options.withoutSchema must be one of "throw", "any-object" (got a string)'],
    },
  ],
  [
    "toAiSdkTools options",
    {
      run: (options) => toAiSdkTools(registry, options as never),
      base: {},
      typo: ["withoutSchemas", "withoutSchema", "any-object"],
      known: "withoutSchema",
      wrong: ["withoutSchema", 1, 'describeTools: options.withoutSchema must be one of "throw", "any-object" (got the number 1)'],
    },
  ],
  [
    "createMcpServer options",
    {
      run: (options) => createMcpServer(registry, options as never),
      base: { name: "s", version: "1" },
      typo: ["verison", "version", "1"],
      known: "withoutSchema",
      wrong: ["withoutSchema", null, 'describeTools: options.withoutSchema must be one of "throw", "any-object" (got null)'],
    },
  ],
  [
    "toOpenAiAgentsTools options",
    {
      run: (options) => toOpenAiAgentsTools(registry, options as never),
      base: {},
      typo: ["onprogress", "onProgress", noop],
      known: "onProgress",
      wrong: ["onProgress", "log", "options.onProgress must be a function (got a string)"],
    },
  ],
  [
    "toLangChainTools options",
    {
      run: (options) => toLangChainTools(registry, options as never),
      base: {},
      typo: ["needsAproval", "needsApproval", true],
      known: "needsApproval",
      wrong: ["needsApproval", 5, "toLangChainTools: options.needsApproval must be a boolean or a function (got number)"],
    },
  ],
  [
    "toPiAgentTools options",
    {
      run: (options) => toPiAgentTools(registry, options as never),
      base: {},
      typo: ["onNonRecoverableErrors", "onNonRecoverableError", noop],
      known: "onNonRecoverableError",
      wrong: ["onNonRecoverableError", 5, "toPiAgentTools: options.onNonRecoverableError must be a function (got the number 5)"],
    },
  ],
  [
    "fromPiAgentTool options",
    {
      run: (options) =>
        fromPiAgentTool(
          {
            name: "pi",
            label: "Pi",
            description: "A Pi tool.",
            parameters: Type.Object({}),
            execute: async () => ({ content: [] }),
          } as never,
          options as never,
        ),
      base: {},
      typo: ["coerse", "coerce", true],
      known: "coerce",
      wrong: ["coerce", "yes", "options.coerce must be a boolean (got a string)"],
    },
  ],
  [
    "validatorFromTypeBox options",
    {
      run: (options) => validatorFromTypeBox(Type.Object({}), options as never),
      base: {},
      typo: ["maxIssue", "maxIssues", 4],
      known: "maxIssues",
      wrong: ["maxIssues", 0, "validatorFromTypeBox: options.maxIssues must be an integer from 1 to 64 (got the number 0)"],
    },
  ],
  [
    "typeboxParameters options",
    {
      run: (options) => typeboxParameters(Type.Object({}), options as never),
      base: {},
      typo: ["Coerce", "coerce", true],
      known: "coerce",
      wrong: ["coerce", 1, "typeboxParameters: options.coerce must be a boolean (got the number 1)"],
    },
  ],
  [
    "validatorFromStandardSchema options",
    {
      run: (options) => validatorFromStandardSchema(z.object({}), options as never),
      base: {},
      typo: ["maxissues", "maxIssues", 4],
      known: "maxIssues",
      wrong: ["maxIssues", 65, "validatorFromStandardSchema: options.maxIssues must be an integer from 1 to 64 (got the number 65)"],
    },
  ],
];

describe.each(SURFACES)("docs/operations.md — Options: %s", (_name, surface) => {
  test("an unknown own key is refused, naming it and the option it is closest to", async () => {
    const [key, suggestion, value] = surface.typo;
    const error = await refusal(surface, { ...surface.base, [key]: value });
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.message).toContain(`unknown`);
    expect(error.message).toContain(JSON.stringify(key));
    expect(error.message).toContain(`did you mean ${JSON.stringify(suggestion)}?`);
  });

  test("an unknown key close to nothing is refused too, without a guess", async () => {
    const error = await refusal(surface, { ...surface.base, zzzzzzzzzzzz: 1 });
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.message).toContain('"zzzzzzzzzzzz"');
    expect(error.message).not.toContain("did you mean");
  });

  test("an option behind a getter is refused, and the getter never runs", async () => {
    let reads = 0;
    const options = Object.defineProperty({ ...surface.base }, surface.known, {
      enumerable: true,
      get() {
        reads += 1;
        return undefined;
      },
    });
    const error = await refusal(surface, options);
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.message).toContain(`${surface.known} must be a data property, not an accessor`);
    expect(reads).toBe(0);
  });

  test("an inherited option is never read (a getter on the prototype never runs)", async () => {
    let reads = 0;
    const prototype = Object.defineProperty({}, surface.known, {
      get() {
        reads += 1;
        return "not a valid value for any option";
      },
    });
    const options = Object.assign(Object.create(prototype) as object, surface.base);
    const outcome = (await attempt(surface, options)) as { message?: string } | undefined;
    expect(reads).toBe(0);
    // Whatever stops the surface later (a missing module, an unreachable Redis), it is not that option.
    expect(String(outcome?.message ?? "")).not.toContain(`not a valid value`);
  });

  test("a value of the wrong type is refused: name must be … (got …)", async () => {
    const [key, value, message] = surface.wrong;
    const error = await refusal(surface, { ...surface.base, [key]: value });
    expect(error.code).toBe("INVALID_ARGUMENT");
    expect(error.message).toContain(message);
  });
});

describe("docs/operations.md — Options: what the table cannot show", () => {
  test("a hook planted on Object.prototype is not a hook, and an executor's approval gate is never one it did not get", async () => {
    let calls = 0;
    const polluted = Object.prototype as unknown as Record<string, unknown>;
    polluted.beforeExecute = () => {
      calls += 1;
      return { allow: false, reason: "polluted" };
    };
    try {
      const gated = new InProcessToolExecutor(registry, { hooks: {} });
      const result = await gated.executeToolCall(call("echo", { text: "hi" }), neverAborted());
      expect(result.isError).toBe(false);
      expect(calls).toBe(0);
    } finally {
      delete polluted.beforeExecute;
    }
  });

  test("a class instance's hooks: its own fields are its state, but a misspelt method is refused", () => {
    class Audit {
      readonly events: unknown[] = [];
      onCallEnd(event: unknown): void {
        this.events.push(event);
      }
    }
    expect(() => new InProcessToolExecutor(registry, { hooks: new Audit() })).not.toThrow();
    class Misspelt {
      onCalEnd(): void {}
    }
    expect(() => new InProcessToolExecutor(registry, { hooks: new Misspelt() as never })).toThrow(
      'options.hooks has an unknown hook "onCalEnd" (did you mean "onCallEnd"?)',
    );
  });

  test("a symbol key and a huge key are refused; the huge key is quoted cut, not echoed whole", () => {
    expect(() => new InProcessToolExecutor(registry, { [Symbol("x")]: 1 } as never)).toThrow("options has a symbol key");
    let message = "";
    try {
      new InProcessToolExecutor(registry, { ["k".repeat(100_000)]: 1 } as never);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("unknown option");
    expect(message.length).toBeLessThan(1000);
  });

  test("the queue executor's timeoutMs has the bound every executor has (2^31 - 1 ms, not a day)", async () => {
    const options = { connection: NO_REDIS, queue: "options-validation", registry, connectTimeoutMs: 1 };
    const tooLong = await refusal({ run: (o) => QueueToolExecutor.create(o as never) } as Surface, { ...options, timeoutMs: 2 ** 31 });
    expect(tooLong.message).toBe(`options.timeoutMs must be an integer from 1 to ${LONGEST} (got the number ${2 ** 31})`);
    // Two days is accepted (it then fails on the unreachable Redis, not on the option).
    const twoDays = (await attempt({ run: (o) => QueueToolExecutor.create(o as never) } as Surface, {
      ...options,
      timeoutMs: 2 * 86_400_000,
    })) as { message: string };
    expect(twoDays.message).not.toContain("timeoutMs");
  });

  test("toolgate-worker refuses an unknown flag naming the one it is closest to, before it reaches Redis", async () => {
    const cli = fileURLToPath(new URL("../../dist/src/queue/cli.js", import.meta.url));
    const run = (args: string[]) =>
      promisify(execFile)(process.execPath, [cli, ...args], { timeout: 20_000 }).then(
        () => ({ code: 0, stderr: "" }),
        (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
      );
    const typo = await run(["--redis", NO_REDIS, "--queue", "q", "--timout", "5", "tools.js"]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('unknown option "--timout" (did you mean "--timeout"?)');
    const notANumber = await run(["--redis", NO_REDIS, "--queue", "q", "--threads", "2x", "tools.js"]);
    expect(notANumber.code).toBe(2);
    expect(notANumber.stderr).toContain('--threads must be a whole number of decimal digits (got a string "2x")');
  });
});
