// Worker hosts in their own processes, through the real `toolgate-worker` command (the
// compiled bin), so a test can SIGKILL one mid-call.
import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../../dist/src/queue/cli.js", import.meta.url));

export interface HostProcess {
  readonly pid: number;
  /** Everything the host printed on stderr so far. */
  stderr(): string;
  /** Sends `signal` and resolves once the process has exited. */
  stop(signal: NodeJS.Signals): Promise<void>;
}

const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

/** Starts `toolgate-worker` and resolves once it printed its ready line (or rejects with its stderr). */
export function startHostProcess(
  redisUrl: string,
  queue: string,
  modules: readonly URL[],
  flags: readonly string[] = [],
  /** How the process is started: by default here; a network namespace's `spawn` starts it inside. */
  start: (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess = spawn,
): Promise<HostProcess> {
  const child = start(
    process.execPath,
    [CLI, "--redis", redisUrl, "--queue", queue, ...flags, ...modules.map((url) => fileURLToPath(url))],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  live.add(child);
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  void exited.then(() => live.delete(child));
  return new Promise((resolve, reject) => {
    let stdout = "";
    const timer = setTimeout(() => reject(new Error(`toolgate-worker did not get ready within 15 s: ${stderr}`)), 15_000);
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      if (!stdout.includes("toolgate-worker ready")) return;
      clearTimeout(timer);
      resolve({
        pid: child.pid as number,
        stderr: () => stderr,
        async stop(signal) {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          await exited;
        },
      });
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`toolgate-worker exited before it was ready (code ${child.exitCode}): ${stderr}`));
    });
  });
}
