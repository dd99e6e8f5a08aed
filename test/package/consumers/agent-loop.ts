// The README's agent-loop snippet, run from the installed tarball by test/package/pack.test.ts.
// From the toolgate import to the "Checks" line this file is the README's code block, verbatim
// (test/package/docs.test.ts holds them together).
import assert from "node:assert/strict";
import {
  type CourseToolCall,
  type CourseToolResultMessage,
  defineTool,
  executeToolCall,
  NonRecoverableToolError,
  ToolRegistry,
} from "toolgate";

// Every resolved result goes into the transcript (errors included: the model reads them);
// a rejection ends the turn.
async function runToolCall(
  registry: ToolRegistry,
  toolCall: CourseToolCall,
  runSignal: AbortSignal,
  transcript: CourseToolResultMessage[],
): Promise<"continue" | "cancelled"> {
  try {
    transcript.push(await executeToolCall(registry, toolCall, runSignal));
    return "continue";
  } catch (error) {
    if (runSignal.aborted && error === runSignal.reason) return "cancelled"; // no result is published
    throw error; // NonRecoverableToolError (the run must stop) or ToolContractError (a bug)
  }
}

// Checks (not in the README): each of the three outcomes goes where the comments say.
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
const transcript: CourseToolResultMessage[] = [];
const run = new AbortController();
const toolCall = (name: string, id: string): CourseToolCall => ({ type: "toolCall", id, name, arguments: {} });

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
