// Tools the adapter contract suite and the adapters' end-to-end tests share.
import { defineTool, type NonRecoverableToolError } from "toolgate";
import { z } from "zod";

/** A tool that moves money `to` someone, recording every run: what an approval must guard. */
export function transferTool() {
  const moved: string[] = [];
  const move = ({ to }: { readonly to: string }) => {
    moved.push(to);
    return `moved to ${to}`;
  };
  return {
    moved,
    tool: defineTool({ name: "transfer", description: "Moves money.", parameters: z.object({ to: z.string() }), execute: move }),
  };
}

/** A tool that reports progress twice, 70 ms apart (the executor throttles reports to one per 50 ms), then finishes. */
export function twoStepTool() {
  return defineTool({
    name: "steps",
    description: "Works in two steps.",
    parameters: z.object({}),
    execute: async (_args, { reportProgress }) => {
      reportProgress({ progress: 1, total: 2 });
      await new Promise((resolve) => setTimeout(resolve, 70));
      reportProgress({ progress: 2, total: 2, message: "done" });
      await new Promise((resolve) => setTimeout(resolve, 70));
      return "finished";
    },
  });
}

/** A tool that finds a broken invariant: it throws `fatal`, which must end the run. */
export function burnTool(fatal: NonRecoverableToolError) {
  return defineTool({
    name: "burn",
    description: "Finds a broken invariant.",
    parameters: z.object({}),
    execute: () => {
      throw fatal;
    },
  });
}
