// The one task every peer runs: the benchmark tools' `ping` (no-op) or `burn` (CPU), with no
// boundary around it. Each peer's worker file only adapts this function to its pool's API.
import { burn, ping } from "../tools.js";

export type PeerTask = { readonly kind: "ping"; readonly n: number } | { readonly kind: "burn"; readonly iterations: number };

const context = Object.freeze({ signal: new AbortController().signal, toolCallId: "peer", reportProgress: () => {} });

export function runPeerTask(task: PeerTask): unknown {
  return task.kind === "ping" ? ping.execute({ n: task.n }, context) : { checksum: burn(task.iterations) };
}
