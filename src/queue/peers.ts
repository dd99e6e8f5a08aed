// bullmq and ioredis: optional peer dependencies of toolgate/queue alone (the root entry, the
// worker pool and the adapters never load them). They are imported when a queue executor or a
// worker host is created, not when toolgate/queue is: importing the entry without them works
// (for its types, say), and creating either says which package is missing and how to add it.
// docs/queue.md — Install.
import type { Queue, QueueEvents, Worker } from "bullmq";
import type { Cluster, Redis } from "ioredis";
import { ContractErrorCode } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { PromiseResolve } from "../contract/primordials.js";
import { describeFailure, readOwnDataProperty } from "../contract/untrusted.js";

/** The classes toolgate/queue takes from its peers. */
export interface QueuePeers {
  readonly Queue: typeof Queue;
  readonly QueueEvents: typeof QueueEvents;
  readonly Worker: typeof Worker;
  readonly Redis: typeof Redis;
  readonly Cluster: typeof Cluster;
}

/** The ranges package.json's peerDependencies declare (test/package/pack.test.ts holds them equal). */
export const QUEUE_PEER_RANGES: Readonly<Record<"bullmq" | "ioredis", string>> = { bullmq: "~6.7.0", ioredis: ">=5.11.1 <7.0.0" };

let loaded: QueuePeers | undefined;
let loading: Promise<QueuePeers> | undefined;

/**
 * The peers, imported once per process. Rejects with ToolContractError(MISSING_PEER_DEPENDENCY)
 * naming what is not installed and the command that installs both (a failed load is tried
 * again next time: the packages may have been installed since).
 */
export function loadQueuePeers(): Promise<QueuePeers> {
  if (loaded !== undefined) return PromiseResolve(loaded);
  loading ??= importPeers().then(
    (peers) => {
      loaded = peers;
      return peers;
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** The peers loadQueuePeers() brought (every caller is reached only after it resolved). */
export function queuePeers(): QueuePeers {
  if (loaded === undefined) throw new Error("toolgate: the queue's peer dependencies were used before they were loaded");
  return loaded;
}

async function importPeers(): Promise<QueuePeers> {
  const [bullmq, ioredis] = await Promise.allSettled([import("bullmq"), import("ioredis")]);
  if (bullmq.status === "fulfilled" && ioredis.status === "fulfilled") {
    const { Queue, QueueEvents, Worker } = bullmq.value;
    return { Queue, QueueEvents, Worker, Redis: ioredis.value.Redis, Cluster: ioredis.value.Cluster };
  }
  const missing: string[] = [];
  const broken: string[] = [];
  let cause: unknown;
  for (const [name, outcome] of [
    ["bullmq", bullmq],
    ["ioredis", ioredis],
  ] as const) {
    if (outcome.status === "fulfilled") continue;
    if (isNotInstalled(outcome.reason, name)) missing.push(name);
    else {
      broken.push(`${name} could not be loaded (${describeFailure(outcome.reason).text})`);
      cause ??= outcome.reason;
    }
  }
  if (missing.length > 0) broken.unshift(`${missing.join(" and ")} ${missing.length === 1 ? "is" : "are"} not installed`);
  const what = broken.join("; ");
  // Quoted: a range with a space ("ioredis@>=5.11.1 <7.0.0") is one argument to a shell.
  const install = `npm install "bullmq@${QUEUE_PEER_RANGES.bullmq}" "ioredis@${QUEUE_PEER_RANGES.ioredis}"`;
  throw new ToolContractError(
    ContractErrorCode.MISSING_PEER_DEPENDENCY,
    `toolgate/queue needs its optional peer dependencies bullmq and ioredis: ${what}. Add them beside toolgate: ${install}`,
    cause === undefined ? undefined : { cause },
  );
}

/** Node's "Cannot find package 'name'" for the peer itself (not for something the peer imports). */
function isNotInstalled(error: unknown, name: string): boolean {
  if (typeof error !== "object" || error === null) return false;
  const code = readOwnDataProperty(error, "code");
  const message = readOwnDataProperty(error, "message");
  return code === "ERR_MODULE_NOT_FOUND" && typeof message === "string" && message.includes(`'${name}'`);
}
