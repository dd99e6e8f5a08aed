// Progress across machines. On the host, the tool's reports (already throttled and checked by
// the host's own executor) become the job's BullMQ progress, which BullMQ publishes as a
// `progress` event; on the agent, each event of a call still in flight goes through the same
// channel as the pool's (checked again, throttled, nothing after the call settled or aborted).
// A report is sent only for a job whose agent listens (its data says `progress: true`).
// docs/queue.md — Attachments, progress and thread facts across machines.
import type { Job } from "bullmq";
import { openProgressChannel, type ProgressListener, type ToolProgress } from "../executor/progress.js";

/** Host side: the listener that turns the host call's progress into the job's. Redis errors drop the report. */
export function relayToJob(job: Job): ProgressListener {
  return (progress: ToolProgress) => {
    const report = progress.total === undefined ? { progress: progress.progress } : { progress: progress.progress, total: progress.total };
    job.updateProgress(progress.message === undefined ? report : { ...report, message: progress.message }).catch(ignore);
  };
}

/** Agent side: one call's remote progress. `deliver` takes what an event carried (untrusted). */
export interface RemoteProgress {
  readonly deliver: (data: unknown) => void;
  readonly close: () => void;
}

/**
 * The agent's end of a call's progress: an event's data is read as a tool's report would be
 * (own data properties, finite numbers, the message cut), and one that is not a report is
 * dropped, never thrown: a third party's event costs only itself.
 */
export function openRemoteProgress(listener: ProgressListener, toolCallId: string, toolName: string, signal: AbortSignal): RemoteProgress {
  const channel = openProgressChannel(listener, toolCallId, toolName, signal);
  return {
    deliver: (data) => {
      try {
        channel.report(data as never);
      } catch {
        // not a report: dropped
      }
    },
    close: channel.close,
  };
}

function ignore(): void {}
