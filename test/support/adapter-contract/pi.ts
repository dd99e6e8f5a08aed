// The Pi rows of the adapter contract suite, one per supported major (0.85, 1.x): Pi's real
// agentLoop over toPiAgentTools with pi-ai's faux provider playing the model
// (test/support/pi-e2e.ts). Pi ends an aborted or fatal run itself (stopReason "aborted")
// rather than rejecting: the driver reads that ending and hands the suite what it carries.
import type { NonRecoverableToolError } from "toolgate";
import { toPiAgentTools } from "toolgate/pi";
import { assistantMessages, PI_MAJORS, type PiMajor, resultText, runPiAgentLoop, toolResults } from "../pi-e2e.js";
import { type AdapterDriver, type ModelCall, readOf, textParts } from "./driver.js";

const FINAL = "done";

function piDriver(major: PiMajor): AdapterDriver {
  const toolUse = (calls: readonly ModelCall[]) =>
    major.assistant(
      calls.map(({ id, name, args }) => major.toolCall(name, args as Record<string, unknown>, id)),
      "toolUse",
    );
  /**
   * The model steps that reached the transcript. Pi asks its provider once more after an abort
   * (faux takes its next step then), but the request ends aborted: nothing of it gets through.
   */
  const modelRequests = (messages: Parameters<typeof assistantMessages>[0]) =>
    assistantMessages(messages).filter((message) => message.stopReason !== "aborted").length;
  return {
    name: `${major.name} agentLoop`,
    progressOption: false,
    linkPart: false,
    make: (source, options) => toPiAgentTools(source, options),
    schemas: async (source) => toPiAgentTools(source).map((tool) => tool.parameters as Record<string, unknown>),
    async step(source, calls, options = {}) {
      const run = await runPiAgentLoop(major, source, [toolUse(calls), major.assistant(FINAL)], {
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
      const read = toolResults(run.messages).map((result) => readOf(result.toolCallId, resultText(result)));
      const last = assistantMessages(run.messages).at(-1);
      // Pi's tool result content: text and image blocks, as the next request carries them.
      const parts = new Map(toolResults(run.messages).map((result) => [result.toolCallId, textParts(result.content)]));
      return { read, finished: last?.stopReason === "stop" && resultText({ content: last.content as never }) === FINAL, parts };
    },
    async fatal(source, call) {
      // The documented route: onNonRecoverableError aborts the run with the error, which ends as aborted.
      const controller = new AbortController();
      let handed: NonRecoverableToolError | undefined;
      const run = await runPiAgentLoop(major, source, [toolUse([call]), major.assistant(FINAL)], {
        signal: controller.signal,
        toolOptions: {
          onNonRecoverableError: (error) => {
            handed = error;
            controller.abort(error);
          },
        },
      });
      const ended = assistantMessages(run.messages).at(-1)?.stopReason === "aborted";
      return {
        error: ended ? handed : `the run did not end (${assistantMessages(run.messages).at(-1)?.stopReason})`,
        modelRequests: modelRequests(run.messages),
      };
    },
    async aborted(source, call, signal) {
      const run = await runPiAgentLoop(major, source, [toolUse([call]), major.assistant(FINAL)], { signal });
      // Pi's ending for an abort: the call's result is the reason's message, and the run stops as aborted.
      const [result] = toolResults(run.messages);
      const reason = signal.reason as Error;
      const ended =
        assistantMessages(run.messages).at(-1)?.stopReason === "aborted" &&
        result !== undefined &&
        result.isError &&
        resultText(result) === reason.message;
      return {
        error: ended ? reason : `the run ended otherwise: ${JSON.stringify(run.messages.at(-1))}`,
        modelRequests: modelRequests(run.messages),
      };
    },
  };
}

export const piDrivers: readonly AdapterDriver[] = PI_MAJORS.map(piDriver);
