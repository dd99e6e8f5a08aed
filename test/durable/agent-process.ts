// An agent process of the durable fault tests (test/durable/faults.test.ts and
// test/queue/queue-durable-faults.test.ts): a fixture script that issues durable calls, prints
// "issued" once they are on their way and then one JSON report, and can be SIGKILLed anywhere.
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { ToolResultMessage } from "toolgate";

/** What an agent process reports: each call's outcome, and its onCallEnd `durable` fields. */
export interface AgentReport {
  readonly outcomes: readonly ({ result: ToolResultMessage } | { rejected: { name: string; code?: string; message: string } })[];
  readonly ends: readonly (string | undefined)[];
}

/** A running agent process: its "issued" line, its report, and its pid to kill. */
export interface Agent {
  readonly child: ChildProcess;
  readonly issued: Promise<void>;
  readonly report: Promise<AgentReport>;
}

/** Starts `script` with `config` (JSON, its one argument) against the Redis at `redisUrl`; `children` keeps it for the test's cleanup. */
export function startAgent(script: URL, config: Record<string, unknown>, redisUrl: string, children: ChildProcess[]): Agent {
  const child = spawn(process.execPath, [script.pathname, JSON.stringify(config)], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, DURABLE_TEST_REDIS: redisUrl },
  });
  children.push(child);
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  let onIssued: () => void = () => {};
  const issued = new Promise<void>((resolve) => (onIssued = resolve));
  const report = new Promise<AgentReport>((resolve, reject) => {
    lines.on("line", (line) => {
      if (line === "issued") onIssued();
      else resolve(JSON.parse(line) as AgentReport);
    });
    child.once("exit", (code, signal) => reject(new Error(`agent exited (${code ?? signal}) without a report`)));
  });
  report.catch(() => {}); // a killed agent's report is never awaited
  return { child, issued, report };
}

/** SIGKILLs `child` and resolves once it is gone (at once if it already exited: a fast call may beat the kill). */
export function killed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}
