// The README's agent-loop snippet (loop/run-tool-call.ts, verbatim in the README: see
// test/package/docs.test.ts), run from the installed tarball by test/package/pack.test.ts:
// each of the three outcomes of a call goes where the snippet's comments say.
import assert from "node:assert/strict";
import { defineTool, NonRecoverableToolError, type ToolCall, ToolRegistry, type ToolResultMessage } from "toolgate";
import { runToolCall } from "./loop/run-tool-call.js";

const registry = new ToolRegistry([
  defineTool({ name: "ok", description: "Succeeds.", validate: () => ({ ok: true, value: null }), execute: () => "fine" }),
  defineTool({
    name: "fatal",
    description: "Stops the run.",
    validate: () => ({ ok: true, value: null }),
    execute: () => {
      throw new NonRecoverableToolError("ledger out of balance");
    },
  }),
]);
const transcript: ToolResultMessage[] = [];
const run = new AbortController();
const toolCall = (name: string, id: string): ToolCall => ({ type: "toolCall", id, name, arguments: {} });

assert.equal(await runToolCall(registry, toolCall("ok", "c1"), run.signal, transcript), "continue");
assert.equal(await runToolCall(registry, toolCall("missing", "c2"), run.signal, transcript), "continue");
await assert.rejects(runToolCall(registry, toolCall("fatal", "c3"), run.signal, transcript), NonRecoverableToolError);
run.abort(new Error("the user pressed stop"));
assert.equal(await runToolCall(registry, toolCall("ok", "c4"), run.signal, transcript), "cancelled");
assert.deepEqual(
  transcript.map((message) => [message.toolCallId, message.isError]),
  [
    ["c1", false],
    ["c2", true],
  ],
);
