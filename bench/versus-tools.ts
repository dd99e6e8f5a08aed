// The tool of the "versus" case (bench/cases/versus.ts): one trivial tool with a zod schema,
// as a user would write it for toolgate. The main thread registers it for the in-process
// sides; the worker pool imports the compiled copy (dist/bench/versus-tools.js) by URL.
// The peers (each framework's own tool, a bare Piscina task) run `pong` itself.
import { defineTool } from "toolgate";
import { z } from "zod";

/** The schema both sides check the model's arguments with. */
export const pingArguments = z.object({ n: z.number() });

/** What the tool returns, on every side. */
export const pong = ({ n }: { readonly n: number }): { pong: number } => ({ pong: n });

export const versusPing = defineTool({
  name: "ping",
  description: "Returns its argument n as { pong: n }.",
  parameters: pingArguments,
  execute: pong,
});

export default [versusPing];
