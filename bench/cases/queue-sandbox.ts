// The queue case, side by side with the fair peer: BullMQ with a sandboxed processor
// (`useWorkerThreads: true`: the job runs in a worker thread, BullMQ's own isolation), doing
// the same no-op as toolgate's `ping`, against one `toolgate-worker` host with one thread.
// Both run through a private `redis-server` on a free loopback port (no other client shares
// it), one worker process each, concurrency 1, interleaved in rotated rounds; the figure is
// the median of the per-round ratios of time per call, at 1 and at 8 calls in flight (the two
// sides are set up by queue-sides.ts). Then, on a fresh server, each side's exact cost in Redis
// per call (queue-commands.ts): commands, bytes, and the requests on a call's critical path.
import { spawnSync } from "node:child_process";
import { type CaseOptions, interleave, median, pairedRatios, round, type TargetCheck } from "../harness.js";
import { drive } from "./children.js";
import { countQueueCommands, type QueueCommandCounts, queueCommandTargets } from "./queue-commands.js";
import { openSides, type SandboxSides, startRedis } from "./queue-sides.js";

export interface SandboxVariant {
  readonly inFlight: number;
  readonly callsPerRound: number;
  readonly oursUsPerCall: number;
  readonly peerUsPerCall: number;
  /** Time per call, ours / the sandboxed peer (median of per-round ratios). */
  readonly ratio: number;
}

export type SandboxResult =
  | {
      readonly ran: true;
      readonly rounds: number;
      readonly variants: SandboxVariant[];
      /** Redis commands per call at 1 in flight (INFO commandstats delta, Lua scripts' own commands included). */
      readonly commandsPerCall: { readonly ours: number; readonly peer: number; readonly calls: number };
      /** Every exact count of queue-commands.ts: commands and bytes at 1 and 8 in flight, critical-path requests. */
      readonly counts: QueueCommandCounts;
    }
  | { readonly ran: false; readonly reason: string };

/** Targets of issue 43 (issue 29 set 1.15 and 1.05): ours / the sandboxed peer, time per call, the median process. */
const TARGETS: Readonly<Record<number, number>> = { 1: 1.1, 8: 1.0 };

export async function benchQueueSandbox(options: CaseOptions = {}): Promise<SandboxResult> {
  if (spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status !== 0) {
    return { ran: false, reason: "no redis-server on PATH (the comparison runs on a private one)" };
  }
  const smoke = options.smoke === true;
  const rounds = smoke ? 1 : 9;
  const warmupRounds = smoke ? 0 : 1;
  const calls = smoke ? 16 : 300;
  const redis = await startRedis();
  let sides: SandboxSides | undefined;
  let variants: SandboxVariant[];
  try {
    options.log?.("queue: vs BullMQ sandboxed (private redis-server)");
    sides = await openSides(redis.url);
    const { oursCall, peerCall } = sides;
    variants = [];
    for (const inFlight of [1, 8]) {
      const us = await interleave(
        { ours: () => drive(calls, inFlight, oursCall), peer: () => drive(calls, inFlight, peerCall) },
        rounds,
        warmupRounds,
      );
      variants.push({
        inFlight,
        callsPerRound: calls,
        oursUsPerCall: round(median(us.ours), 1),
        peerUsPerCall: round(median(us.peer), 1),
        ratio: round(median(pairedRatios(us.ours, us.peer))),
      });
    }
  } finally {
    await sides?.close();
    await redis.stop();
  }
  // On a server of their own: the timed rounds' finished jobs and background leave nothing in the counts.
  const counts = await countQueueCommands(options);
  const commandsPerCall = { ours: counts.inFlight1.ours.commands, peer: counts.inFlight1.peer.commands, calls: counts.calls.inFlight1 };
  return { ran: true, rounds, variants, commandsPerCall, counts };
}

/** The section's target rows: the two ratios against issue 29's targets, and issue 43's exact counts (queue-commands.ts). */
export function sandboxTargets(result: SandboxResult): TargetCheck[] {
  if (!result.ran) return [];
  return [
    ...result.variants.map((variant) => {
      const target = TARGETS[variant.inFlight] as number;
      const pass = variant.ratio <= target;
      return {
        id: `queue.vsSandbox${variant.inFlight}`,
        target: `ours/BullMQ sandboxed (time per call, 1 host thread, ${variant.inFlight} in flight) <= ${target}`,
        value: variant.ratio,
        pass,
        ...(pass ? {} : { note: `${variant.oursUsPerCall} µs vs ${variant.peerUsPerCall} µs per call` }),
      };
    }),
    ...queueCommandTargets(result.counts),
  ];
}
