// rename.mjs: keep compatibility names (this file proves them; the rename script leaves it alone).
// The seed's names (docs/operations.md, "Names"): each `Course*` type is its plain type and each
// `COURSE_TOOL_*` constant is the member of `Limits`, `ToolErrorCode` or `ContractErrorCode` with
// the same key, from the root entry point as before.
import * as toolgate from "toolgate";
import {
  COURSE_TOOL_CIRCULAR_MARKER,
  COURSE_TOOL_INVALID_ARGUMENT,
  COURSE_TOOL_MAX_NODES,
  COURSE_TOOL_NOT_FOUND,
  ContractErrorCode,
  type CourseTool,
  type CourseToolCall,
  type CourseToolDefinition,
  type CourseToolResultMessage,
  Limits,
  type RecoverableToolErrorCode,
  type Tool,
  type ToolCall,
  type ToolContractErrorCode,
  type ToolDefinition,
  ToolErrorCode,
  type ToolResultMessage,
} from "toolgate";
import { describe, expect, expectTypeOf, test } from "vitest";

const maps = { Limits, ToolErrorCode, ContractErrorCode } as const;
/** Members added after the seed: they have no `COURSE_TOOL_*` name (issue 42's contract code). */
const AFTER_THE_SEED: readonly string[] = ["DURABLE_CALL_CONFLICT"];

describe("docs/operations.md — Names: plain names", () => {
  test("ToolCall, ToolResultMessage, ToolDefinition and Tool are the Course* types themselves (checked by tsc)", () => {
    expectTypeOf<ToolCall>().toEqualTypeOf<CourseToolCall>();
    expectTypeOf<ToolResultMessage>().toEqualTypeOf<CourseToolResultMessage>();
    expectTypeOf<ToolDefinition<{ q: string }, number>>().toEqualTypeOf<CourseToolDefinition<{ q: string }, number>>();
    expectTypeOf<Tool<{ q: string }, number>>().toEqualTypeOf<CourseTool<{ q: string }, number>>();
    expectTypeOf<CourseToolDefinition>().toEqualTypeOf<ToolDefinition<unknown, unknown>>();
  });

  test("the code maps: values, literal types and the union types of every code", () => {
    expect(ToolErrorCode.NOT_FOUND).toBe("TOOL_NOT_FOUND");
    expect(ContractErrorCode.INVALID_ARGUMENT).toBe("INVALID_ARGUMENT");
    expect(Object.values(ToolErrorCode).sort()).toEqual([
      "TOOL_ARGUMENTS_INVALID",
      "TOOL_CALL_DENIED",
      "TOOL_EXECUTION_FAILED",
      "TOOL_EXECUTION_TIMEOUT",
      "TOOL_NOT_FOUND",
      "TOOL_OUTPUT_SERIALIZATION_FAILED",
      "TOOL_VALIDATION_FAILED",
    ]);
    expectTypeOf<ToolErrorCode>().toEqualTypeOf<RecoverableToolErrorCode>();
    expectTypeOf<ContractErrorCode>().toEqualTypeOf<ToolContractErrorCode>();
    expectTypeOf(ToolErrorCode.NOT_FOUND).toEqualTypeOf<"TOOL_NOT_FOUND">();
    expectTypeOf(Limits.MAX_NODES).toEqualTypeOf<2048>();
  });

  test("the maps are frozen: a consumer cannot change a code or a limit for everyone", () => {
    for (const map of Object.values(maps)) expect(Object.isFrozen(map)).toBe(true);
    expect(() => {
      (Limits as { MAX_NODES: number }).MAX_NODES = 1;
    }).toThrow(TypeError);
    expect(Limits.MAX_NODES).toBe(2048);
  });

  test("every COURSE_TOOL_* constant is the map member with its key, and every member has one", () => {
    const byName = new Map<string, unknown>(Object.entries(toolgate));
    const exported = [...byName.keys()].filter((name) => name.startsWith("COURSE_TOOL_"));
    const members = Object.entries(maps).flatMap(([map, members]) =>
      Object.entries(members)
        .filter(([key]) => !AFTER_THE_SEED.includes(key))
        .map(([key, value]): [string, string, unknown] => [map, key, value]),
    );
    expect(exported.sort()).toEqual(members.map(([, key]) => `COURSE_TOOL_${key}`).sort());
    for (const [map, key, value] of members) {
      expect(byName.get(`COURSE_TOOL_${key}`), `${map}.${key}`).toBe(value);
    }
    expect(exported).toHaveLength(33);
    expect(byName.has("COURSE_TOOL_DURABLE_CALL_CONFLICT")).toBe(false);
    expect(ContractErrorCode.DURABLE_CALL_CONFLICT).toBe("DURABLE_CALL_CONFLICT");
  });

  test("the constants keep their literal types (checked by tsc)", () => {
    expectTypeOf(COURSE_TOOL_NOT_FOUND).toEqualTypeOf<"TOOL_NOT_FOUND">();
    expectTypeOf(COURSE_TOOL_INVALID_ARGUMENT).toEqualTypeOf<"INVALID_ARGUMENT">();
    expectTypeOf(COURSE_TOOL_MAX_NODES).toEqualTypeOf<2048>();
    expectTypeOf(COURSE_TOOL_CIRCULAR_MARKER).toEqualTypeOf<"[Circular]">();
  });
});
