// The baseline worker of the dispatch benchmark: a bare Piscina task function that runs
// the very same trivial `execute` as toolgate's worker does, minus the boundary (no task
// id, no per-call signal, no serializer, no relinking).
import { ping } from "./tools.js";

const context = Object.freeze({ signal: new AbortController().signal, toolCallId: "raw", reportProgress: () => {} });

export default function rawPing(args: Record<string, unknown>): unknown {
  return ping.execute(args, context);
}
