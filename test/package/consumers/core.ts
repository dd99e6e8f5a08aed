// The README's first example, run from the installed tarball by test/package/pack.test.ts.
// From the toolgate import to the "Checks" line this file is the README's code block,
// verbatim (test/package/docs.test.ts holds them together).
import assert from "node:assert/strict";
import { defineTool, executeToolCall, ToolRegistry } from "toolgate";

// A tool: a synchronous, side-effect-free validator, and execute, which only ever sees
// arguments the validator accepted.
const add = defineTool({
  name: "add",
  description: "Adds two numbers.",
  validate: (args) => {
    const { left, right } = args as { left?: unknown; right?: unknown };
    return typeof left === "number" && typeof right === "number"
      ? { ok: true, value: { left, right } }
      : { ok: false, error: "left and right must be numbers" };
  },
  execute: ({ left, right }) => ({ sum: left + right }),
});

const registry = new ToolRegistry([add]); // or registry.registerMany([...]): all or nothing
const signal = new AbortController().signal; // the agent run's signal

const result = await executeToolCall(registry, { type: "toolCall", id: "call-1", name: "add", arguments: { left: 20, right: 22 } }, signal);
// { role: "toolResult", id: "tool-result-call-1", toolCallId: "call-1", toolName: "add",
//   content: '{"sum":42}', isError: false }   (frozen)

const refused = await executeToolCall(
  registry,
  { type: "toolCall", id: "call-2", name: "add", arguments: { left: "twenty", right: 22 } },
  signal,
);
// refused.isError === true, and execute never ran:
// refused.content === '{"error":{"code":"TOOL_ARGUMENTS_INVALID","message":"left and right must be numbers"}}'

// Checks (not in the README): what the comments above promise.
assert.deepEqual(result, {
  role: "toolResult",
  id: "tool-result-call-1",
  toolCallId: "call-1",
  toolName: "add",
  content: '{"sum":42}',
  isError: false,
});
assert.ok(Object.isFrozen(result));
assert.equal(refused.isError, true);
assert.equal(refused.toolCallId, "call-2");
assert.equal(refused.content, '{"error":{"code":"TOOL_ARGUMENTS_INVALID","message":"left and right must be numbers"}}');
assert.ok(Object.isFrozen(refused));
