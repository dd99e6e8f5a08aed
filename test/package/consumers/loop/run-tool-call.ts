import { type CourseToolCall, type CourseToolResultMessage, executeToolCall, type ToolRegistry } from "toolgate";

export async function runToolCall(
  registry: ToolRegistry,
  toolCall: CourseToolCall,
  runSignal: AbortSignal,
  transcript: CourseToolResultMessage[],
): Promise<"continue" | "cancelled"> {
  try {
    transcript.push(await executeToolCall(registry, toolCall, runSignal)); // errors included: the model reads them
    return "continue";
  } catch (error) {
    if (runSignal.aborted && error === runSignal.reason) return "cancelled"; // no result is published
    throw error; // NonRecoverableToolError (the run must stop) or ToolContractError (a bug)
  }
}
