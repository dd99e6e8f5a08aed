// The adapter contract suite: every adapter is one row, and every row is driven through its
// framework's own loop with a scripted model (test/support/adapter-contract/: one driver per
// framework behind one interface), through the same hostile cases: model arguments that are not
// an object or are over the argument budgets, an app listener that throws or rejects, a tool
// that pollutes its signal, tool names that are Object.prototype's, approvals that must bind to
// the call they name, resource links (and links forged or refused), a fatal error, an abort. A
// new adapter is one more driver in ROWS.
// docs/adapters.md — What every adapter shares.
import {
  ContractErrorCode,
  defineTool,
  describeTools,
  NonRecoverableToolError,
  resourceLink,
  ToolRegistry,
  withAttachments,
} from "toolgate";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { aiSdkDriver } from "../support/adapter-contract/ai-sdk.js";
import { type AdapterDriver, type ModelCall, type ModelRead, rejectionOf } from "../support/adapter-contract/driver.js";
import { langChainDrivers } from "../support/adapter-contract/langchain.js";
import { mastraDriver } from "../support/adapter-contract/mastra.js";
import { mcpDriver } from "../support/adapter-contract/mcp.js";
import { openAiAgentsDriver } from "../support/adapter-contract/openai-agents.js";
import { piDrivers } from "../support/adapter-contract/pi.js";
import { burnTool, transferTool, twoStepTool } from "../support/adapter-contract/tools.js";
import { refusalOf } from "../support/refusal.js";

const ROWS: readonly AdapterDriver[] = [aiSdkDriver, openAiAgentsDriver, mcpDriver, ...piDrivers, ...langChainDrivers, mastraDriver];

for (const row of ROWS) {
  // Printed, not only in the skipped tests' names: a row that cannot run says so in the log.
  if (row.unavailable !== undefined) console.log(`adapter contract: the ${row.name} row does not run here: ${row.unavailable}`);
}

/** A tool that records every run and answers with its arguments' `text`. */
function recordingTool(name = "echo") {
  const ran: unknown[] = [];
  const tool = defineTool({
    name,
    description: "Echoes its text.",
    parameters: z.object({ text: z.string() }),
    execute: (args) => {
      ran.push(args);
      return args.text;
    },
  });
  return { ran, tool };
}

/** Arguments over the default argument budgets: nested 70 levels (the limit is 64), and 25,000 values (the limit is 20,000). */
function deepArguments(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { text: "bottom" };
  for (let level = 0; level < levels; level += 1) value = { next: value };
  return value;
}
const OVER_BUDGET: readonly (readonly [string, unknown])[] = [
  ["70 levels deep", deepArguments(70)],
  ["25,000 values", { items: new Array<number>(25_000).fill(0) }],
];
const NOT_AN_OBJECT: readonly (readonly [string, unknown])[] = [
  ["null", null],
  ["an array", [2, 3]],
  ["a number", 5],
  ["a string", "2+3"],
];

/** What a tool can leave on its signal, each on its own (the old shared signal noticed some of them, not all). */
const POLLUTIONS: readonly (readonly [string, (signal: AbortSignal) => void])[] = [
  ["sets an own constructor", (signal) => Object.defineProperty(signal, "constructor", { value: 1, configurable: true, writable: true })],
  [
    "sets own aborted, reason and throwIfAborted",
    (signal) => {
      Object.defineProperty(signal, "aborted", { value: true, configurable: true, writable: true });
      Object.defineProperty(signal, "reason", { value: new Error("never happened"), configurable: true, writable: true });
      Object.defineProperty(signal, "throwIfAborted", {
        value: () => {
          throw new Error("never happened");
        },
        configurable: true,
        writable: true,
      });
    },
  ],
  [
    "sets Node's internal aborted state through its symbols",
    (signal) => {
      for (const key of Object.getOwnPropertySymbols(signal)) {
        const description = String(key);
        if (description.includes("kAborted")) (signal as unknown as Record<symbol, unknown>)[key] = true;
        if (description.includes("kReason")) (signal as unknown as Record<symbol, unknown>)[key] = new Error("never happened");
      }
    },
  ],
  [
    "adds a listener, makes a signal from it, then freezes it",
    (signal) => {
      signal.addEventListener("abort", () => {});
      AbortSignal.any([signal]);
      Object.freeze(signal);
    },
  ],
];

const codes = (read: readonly ModelRead[]) => read.map(({ id, code }) => [id, code]);

/** Tracks unhandled rejections while a test runs. */
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => void unhandled.push(reason);
process.on("unhandledRejection", onUnhandled);
afterEach(() => {
  unhandled.length = 0;
});

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Lets Node report a rejection nobody handled (it does so once the microtask queue is empty). */
const turns = async (count = 3) => {
  for (let turn = 0; turn < count; turn += 1) await new Promise((resolve) => setImmediate(resolve));
};

describe.each(ROWS)("the adapter contract: $name", (row) => {
  const runs = row.unavailable === undefined;
  const its = runs ? it : it.skip;
  const suffix = runs ? "" : ` (does not run here: ${row.unavailable})`;

  its(`model arguments over the argument budgets reach the model as TOOL_ARGUMENTS_INVALID, and the run goes on${suffix}`, async () => {
    const { ran, tool } = recordingTool();
    const calls: ModelCall[] = OVER_BUDGET.map(([, args], index) => ({ id: `over-${index}`, name: "echo", args }));
    const report = await row.step(new ToolRegistry([tool]), [...calls, { id: "fine", name: "echo", args: { text: "fine" } }]);
    expect(codes(report.read)).toEqual([
      ["over-0", "TOOL_ARGUMENTS_INVALID"],
      ["over-1", "TOOL_ARGUMENTS_INVALID"],
      ["fine", undefined],
    ]);
    expect(report.read[0]?.text).toMatch(/nests deeper than 64 levels \(argument budget maxDepth\)/);
    expect(report.read[1]?.text).toMatch(/\(argument budget maxNodes\)/);
    expect(report.read[2]?.text).toBe("fine");
    expect(report.finished).toBe(true);
    expect(ran).toEqual([{ text: "fine" }]);
  });

  its(`model arguments that are not an object reach the model as TOOL_ARGUMENTS_INVALID, and the run goes on${suffix}`, async () => {
    const { ran, tool } = recordingTool();
    const calls: ModelCall[] = NOT_AN_OBJECT.map(([, args], index) => ({ id: `odd-${index}`, name: "echo", args }));
    const report = await row.step(new ToolRegistry([tool]), [...calls, { id: "fine", name: "echo", args: { text: "fine" } }]);
    // Where the framework answers such arguments itself, before any toolgate code, the model reads its own text.
    const expected = calls.map(({ id, args }) => [id, row.answersItself?.(args) === undefined ? "TOOL_ARGUMENTS_INVALID" : undefined]);
    expect(codes(report.read)).toEqual([...expected, ["fine", undefined]]);
    expect(report.read.at(-1)?.text).toBe("fine");
    expect(report.finished).toBe(true);
    expect(ran).toEqual([{ text: "fine" }]);
  });

  for (const [label, listener] of [
    [
      "throws",
      () => {
        throw new Error("the listener broke");
      },
    ],
    ["returns a promise that rejects", () => Promise.reject(new Error("the listener broke later"))],
  ] as const) {
    its(`an onProgress that ${label} is ignored: the model reads the result, nothing is unhandled${suffix}`, async () => {
      const registry = new ToolRegistry([twoStepTool()]);
      if (!row.progressOption) {
        // No app listener to call: progress goes to the framework's own channel, and an onProgress is refused, never ignored.
        expect(refusalOf(() => row.make(registry, { onProgress: listener }))).toEqual([
          ContractErrorCode.INVALID_ARGUMENT,
          expect.any(String),
        ]);
        return;
      }
      let heard = 0;
      const report = await row.step(registry, [{ id: "call-p", name: "steps", args: {} }], {
        onProgress: () => {
          heard += 1;
          return listener();
        },
      });
      await turns();
      expect(heard).toBe(2);
      expect(report.read).toEqual([{ id: "call-p", text: "finished", code: undefined }]);
      expect(report.finished).toBe(true);
      expect(unhandled).toEqual([]);
    });
  }

  for (const [label, pollute] of POLLUTIONS) {
    its(`a tool that ${label} on its signal affects no other call${suffix}`, async () => {
      let polluted = 0;
      const polluter = defineTool({
        name: "pollute",
        description: "Leaves something on its signal.",
        parameters: z.object({}),
        execute: (_args, { signal }) => {
          pollute(signal);
          polluted += 1;
          return "polluted";
        },
      });
      const probe = defineTool({
        name: "probe",
        description: "Describes its signal.",
        parameters: z.object({}),
        execute: (_args, { signal }) => describeSignal(signal),
      });
      const registry = new ToolRegistry([polluter, probe]);
      // How the polluting call itself ends is its own business (one that set its signal's
      // internal state to aborted is aborted; an MCP request whose signal reads as aborted is never answered).
      await Promise.race([rejectionOf(row.step(registry, [{ id: "call-1", name: "pollute", args: {} }])), delay(500)]);
      expect(polluted).toBe(1);
      for (const round of [2, 3]) {
        const next = await row.step(registry, [
          { id: `call-${round}-a`, name: "probe", args: {} },
          { id: `call-${round}-b`, name: "probe", args: {} },
        ]);
        expect(next.read).toEqual([
          { id: `call-${round}-a`, text: CLEAN, code: undefined },
          { id: `call-${round}-b`, text: CLEAN, code: undefined },
        ]);
        expect(next.finished).toBe(true);
      }
    });
  }

  its(`tools named __proto__ and constructor are offered and run like any other${suffix}`, async () => {
    const named = (name: string) => defineTool({ name, description: "Answers.", parameters: z.object({}), execute: () => `from ${name}` });
    const offered = ["__proto__", "constructor", "toString"].filter((name) => row.refusedNames?.[name] === undefined);
    for (const name of Object.keys(row.refusedNames ?? {})) {
      // A name the framework cannot hold is refused when the tools are made, never silently left out.
      expect(refusalOf(() => row.make(new ToolRegistry([named(name)]), {}))).toEqual([
        ContractErrorCode.INVALID_TOOL_DEFINITION,
        expect.stringContaining(JSON.stringify(name)),
      ]);
    }
    const report = await row.step(
      new ToolRegistry(offered.map(named)),
      offered.map((name) => ({ id: `call-${name}`, name, args: {} })),
    );
    expect(report.read).toEqual(offered.map((name) => ({ id: `call-${name}`, text: `from ${name}`, code: undefined })));
    expect(report.finished).toBe(true);
  });

  its(
    `each framework gets a schema of its own: what it writes there reaches neither the registry nor another framework${suffix}`,
    async () => {
      const { tool } = recordingTool();
      const registry = new ToolRegistry([tool]);
      const registered = describeTools(registry)[0]?.parameters as Record<string, unknown>;
      const [given] = await row.schemas(registry);
      expect(given).toEqual(registered);
      // What LangChain's validator (@cfworker/json-schema) does to every schema it compiles, and more.
      const properties = given?.properties as Record<string, Record<string, unknown>>;
      Object.assign(given as object, { __absolute_uri__: "https://example.test/schema" });
      Object.assign(properties.text as object, { __absolute_uri__: "https://example.test/schema#/properties/text" });
      properties.extra = { type: "number" };
      expect(describeTools(registry)[0]?.parameters).toBe(registered);
      expect(registered).not.toHaveProperty("__absolute_uri__");
      expect(Object.keys(registered.properties as object)).toEqual(["text"]);
      expect(Object.isFrozen(registered) && Object.isFrozen(registered.properties)).toBe(true);
      const [again] = await row.schemas(registry);
      expect(again).toEqual(registered);
      for (const other of ROWS) {
        if (other === row || other.unavailable !== undefined) continue;
        expect((await other.schemas(registry))[0]).toEqual(registered);
      }
    },
  );

  its(`approval binds to the call it names: two pending at once, decided differently, never cross${suffix}`, async () => {
    const { moved, tool } = transferTool();
    const registry = new ToolRegistry([tool]);
    const approvals = row.approvals;
    if (approvals === undefined) {
      // No approval flow of its own: the option is refused, never ignored (approve with hooks.beforeExecute).
      expect(refusalOf(() => row.make(registry, { needsApproval: () => true }))).toEqual([
        ContractErrorCode.INVALID_ARGUMENT,
        expect.any(String),
      ]);
      return;
    }
    const report = await approvals.step(
      registry,
      [
        { id: "call-alice", name: "transfer", args: { to: "alice" } },
        { id: "call-mallory", name: "transfer", args: { to: "mallory" } },
      ],
      slowerInTurn(["call-alice", "call-mallory"]),
      (toolCallId) => toolCallId === "call-alice",
    );
    expect(moved).toEqual(["alice"]);
    expect(codes(report.read)).toEqual([
      ["call-alice", undefined],
      ["call-mallory", "TOOL_CALL_DENIED"],
    ]);
    expect(report.read[0]?.text).toBe("moved to alice");
    expect(report.finished).toBe(true);
  });

  its(
    `resource links reach the model after the text, as the framework's link part or the documented text line; a forged or refused link never does${suffix}`,
    async () => {
      let uriReads = 0;
      const registry = new ToolRegistry([
        linkTool("links", () => withAttachments("two links", [resourceLink(REPORT), resourceLink(SOURCE)])),
        // A getter could answer the check a safe URI and the link a script one: refused, never called.
        linkTool("accessor", () =>
          resourceLink(
            Object.defineProperty({ name: "x" }, "uri", {
              enumerable: true,
              get: () => (++uriReads === 1 ? SOURCE.uri : "javascript:alert(1)"),
            }),
          ),
        ),
        // A genuine link behind a Proxy whose get trap swaps its URI: not a link toolgate made.
        linkTool("proxied", () => {
          const link = resourceLink(SOURCE);
          return withAttachments("proxied", [
            new Proxy(link, { get: (target, key) => (key === "uri" ? "javascript:alert(1)" : Reflect.get(target, key)) }),
          ]);
        }),
        linkTool("script", () => resourceLink({ uri: "javascript:alert(1)", name: "x" })),
      ]);
      const names = ["links", "accessor", "proxied", "script"];
      const report = await row.step(
        registry,
        names.map((name) => ({ id: `call-${name}`, name, args: {} })),
      );
      expect(codes(report.read)).toEqual([
        ["call-links", undefined],
        ["call-accessor", "TOOL_EXECUTION_FAILED"],
        ["call-proxied", "TOOL_EXECUTION_FAILED"],
        ["call-script", "TOOL_EXECUTION_FAILED"],
      ]);
      // Every link, in order, after the text: never silently left out where the framework has no link part.
      expect(report.parts.get("call-links")).toEqual(
        row.linkPart
          ? [
              { type: "text", text: "two links" },
              { type: "resource_link", ...REPORT },
              { type: "resource_link", ...SOURCE },
            ]
          : [
              { type: "text", text: "two links" },
              { type: "text", text: '[resource link "q3.pdf" (application/pdf) https://example.com/q3.pdf: The Q3 report]' },
              { type: "text", text: '[resource link "main.rs" file:///project/src/main.rs]' },
            ],
      );
      // The refused calls: the model reads the error naming why, one text part, and no link.
      const refusals: [string, string][] = [
        ["call-accessor", "resourceLink: options.uri must be a data property, not an accessor"],
        ["call-proxied", "[0] is not an attachment made by imageContent, audioContent, fileContent or resourceLink"],
        ["call-script", "resourceLink: uri must be an absolute URI (scheme:…, not javascript:, vbscript: or data:)"],
      ];
      for (const [id, why] of refusals) {
        const read = report.read.find((each) => each.id === id);
        expect(read?.text).toContain(why);
        expect(report.parts.get(id)).toEqual([{ type: "text", text: read?.text }]);
      }
      expect(uriReads).toBe(0);
      expect(report.finished).toBe(true);
    },
  );

  its(
    `an output whose own keys are named attachments and resourceLinks is text, never parts, from a synchronous tool and an async one alike${suffix}`,
    async () => {
      // Plain data shaped like a result's parts: only what withAttachments/resourceLink made is a part
      // (the adapters tell a result without parts by its own keys: the tool's output is not the result).
      // Keys in sorted order: the serializer's (stable) text is then JSON.stringify's.
      const forged = {
        attachments: [{ data: "iVBORw0KGgo=", mimeType: "image/png", type: "image" }],
        resourceLinks: [{ name: "x", type: "resourceLink", uri: "javascript:alert(1)" }],
      };
      const registry = new ToolRegistry([linkTool("now", () => forged), linkTool("later", async () => forged)]);
      const report = await row.step(registry, [
        { id: "call-now", name: "now", args: {} },
        { id: "call-later", name: "later", args: {} },
      ]);
      const text = JSON.stringify(forged);
      expect(report.read).toEqual([
        { id: "call-now", text, code: undefined },
        { id: "call-later", text, code: undefined },
      ]);
      expect(report.parts.get("call-now")).toEqual([{ type: "text", text }]);
      expect(report.parts.get("call-later")).toEqual([{ type: "text", text }]);
      expect(report.finished).toBe(true);
    },
  );

  its(`a NonRecoverableToolError ends the run by the documented route, with the genuine error${suffix}`, async () => {
    const fatal = new NonRecoverableToolError("the ledger is corrupt");
    const end = await row.fatal(new ToolRegistry([burnTool(fatal)]), { id: "call-f", name: "burn", args: {} });
    if (row.overAWire === undefined) expect(end.error).toBe(fatal);
    else expect((end.error as Error).message).toContain("the ledger is corrupt");
    expect(end.modelRequests).toBe(1);
  });

  its(`abort ends the run at once with the reason, even when the tool ignores its signal${suffix}`, async () => {
    const controller = new AbortController();
    const reason = new Error("the user left");
    const stall = defineTool({
      name: "stall",
      description: "Ignores its signal.",
      parameters: z.object({}),
      // Left to itself it would succeed after 1.5 s: the run must not wait for it, nor show the model its result.
      execute: () =>
        new Promise<string>((resolve) => {
          setTimeout(() => controller.abort(reason), 5);
          setTimeout(() => resolve("finished anyway"), 1500);
        }),
    });
    const started = Date.now();
    const end = await row.aborted(new ToolRegistry([stall]), { id: "call-s", name: "stall", args: {} }, controller.signal);
    expect(Date.now() - started).toBeLessThan(1000);
    if (row.overAWire === undefined) expect(end.error).toBe(reason);
    else expect((end.error as Error).message).toContain("the user left");
    expect(end.modelRequests).toBe(1);
  });
});

/** The resource links of the link case: one with every field, one with the two required. */
const REPORT = { uri: "https://example.com/q3.pdf", name: "q3.pdf", mimeType: "application/pdf", description: "The Q3 report" } as const;
const SOURCE = { uri: "file:///project/src/main.rs", name: "main.rs" } as const;

/** A tool without arguments whose result `make` builds (links, or a link that must be refused). */
function linkTool(name: string, make: () => unknown) {
  return defineTool({ name, description: "Returns resource links.", parameters: z.object({}), execute: () => make() as never });
}

/**
 * An async approval predicate whose calls settle in turn order: on the n-th time the calls are
 * asked, the first of `ids` settles first when n is odd and last when n is even (each waits
 * that many event-loop turns), so a step asked again on resume reaches `interrupt` in the
 * other order. Deterministic: turns, not timers.
 */
function slowerInTurn(ids: readonly string[]) {
  const asked = new Map<string, number>();
  return async ({ toolCallId }: { readonly toolCallId: string }): Promise<boolean> => {
    const time = (asked.get(toolCallId) ?? 0) + 1;
    asked.set(toolCallId, time);
    const position = ids.indexOf(toolCallId);
    const wait = time % 2 === 1 ? position : ids.length - 1 - position;
    await turns(wait * 4);
    return true;
  };
}

/** What a clean signal reads as: not aborted, nothing of its own but Node's internals, AbortSignal's prototype. */
const CLEAN = "clean";

function describeSignal(signal: AbortSignal): string {
  const problems: string[] = [];
  if (Object.getPrototypeOf(signal) !== AbortSignal.prototype) problems.push("another prototype");
  if (!Object.isExtensible(signal)) problems.push("not extensible");
  const aborted = Object.getOwnPropertyDescriptor(AbortSignal.prototype, "aborted")?.get?.call(signal);
  if (aborted !== false) problems.push("aborted");
  const own = Reflect.ownKeys(signal).filter((key) => typeof key === "string");
  if (own.length > 0) problems.push(`own keys ${own.join(",")}`);
  for (const key of Object.getOwnPropertySymbols(signal)) {
    const description = String(key);
    const value = (signal as unknown as Record<symbol, unknown>)[key];
    if (description.includes("kAborted") && value !== false) problems.push("internal aborted");
    if (description.includes("kReason") && value !== undefined) problems.push("internal reason");
  }
  try {
    signal.throwIfAborted();
  } catch {
    problems.push("throwIfAborted threw");
  }
  return problems.length === 0 ? CLEAN : problems.join("; ");
}
