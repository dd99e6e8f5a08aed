// rename.mjs: keep compatibility names (this consumer proves them; the rename script leaves it alone).
// Code written against the seed's names still compiles and runs from the installed tarball:
// every `Course*` type and `COURSE_TOOL_*` constant, deprecated, is its plain name's type or value.
import assert from "node:assert/strict";
import {
  COURSE_TOOL_EXECUTION_FAILED,
  COURSE_TOOL_INVALID_TOOL_CALL,
  COURSE_TOOL_MAX_CONTENT_CODE_POINTS,
  COURSE_TOOL_NOT_FOUND,
  COURSE_TOOL_TRUNCATION_MARKER,
  ContractErrorCode,
  type CourseTool,
  type CourseToolCall,
  type CourseToolDefinition,
  type CourseToolResultMessage,
  defineTool,
  executeToolCall,
  isToolContractError,
  Limits,
  type Tool,
  ToolErrorCode,
  ToolRegistry,
} from "toolgate";

const definition: CourseToolDefinition<{ text: string }, string> = {
  name: "shout",
  description: "Upper-cases text.",
  validate: (args) => {
    const { text } = args as { text?: unknown };
    return typeof text === "string" ? { ok: true, value: { text } } : { ok: false, error: "text must be a string" };
  },
  execute: ({ text }) => {
    if (text === "fail") throw new Error("asked to fail");
    return text.toUpperCase();
  },
};
const shout: CourseTool<{ text: string }, string> = defineTool(definition);
const plain: Tool<{ text: string }, string> = shout; // the same type under its plain name
const registry = new ToolRegistry([plain]);
const signal = new AbortController().signal;
const call = (name: string, text: string): CourseToolCall => ({ type: "toolCall", id: `c-${text}`, name, arguments: { text } });
const codeOf = (result: CourseToolResultMessage): unknown => (JSON.parse(result.content) as { error: { code: string } }).error.code;

const ok: CourseToolResultMessage = await executeToolCall(registry, call("shout", "hi"), signal);
assert.equal(ok.content, "HI"); // a string result is its own text
const missing = await executeToolCall(registry, call("whisper", "hi"), signal);
assert.equal(codeOf(missing), COURSE_TOOL_NOT_FOUND);
assert.equal(COURSE_TOOL_NOT_FOUND, ToolErrorCode.NOT_FOUND);
const failed = await executeToolCall(registry, call("shout", "fail"), signal);
assert.equal(codeOf(failed), COURSE_TOOL_EXECUTION_FAILED);

const long = await executeToolCall(registry, call("shout", "x".repeat(COURSE_TOOL_MAX_CONTENT_CODE_POINTS * 2)), signal);
assert.ok(long.content.endsWith(COURSE_TOOL_TRUNCATION_MARKER));
assert.equal(COURSE_TOOL_MAX_CONTENT_CODE_POINTS, Limits.MAX_CONTENT_CODE_POINTS);

await assert.rejects(
  executeToolCall(registry, { type: "toolCall", id: "", name: "shout", arguments: {} } as CourseToolCall, signal),
  (error: unknown) =>
    isToolContractError(error) && error.code === COURSE_TOOL_INVALID_TOOL_CALL && error.code === ContractErrorCode.INVALID_TOOL_CALL,
);
console.log("compat-names: ok");
