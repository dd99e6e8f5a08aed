import { executeToolCall, type ToolCall, type ToolRegistry, type ToolResultMessage } from "toolgate";

export async function runToolCall(
  registry: ToolRegistry,
  toolCall: ToolCall,
  runSignal: AbortSignal,
  transcript: ToolResultMessage[],
): Promise<"continue" | "cancelled"> {
  try {
    transcript.push(await executeToolCall(registry, toolCall, runSignal)); // errors included: the model reads them
    return "continue";
  } catch (error) {
    if (runSignal.aborted && error === runSignal.reason) return "cancelled"; // no result is published
    throw error; // NonRecoverableToolError (the run must stop) or ToolContractError (a bug)
  }
}
