#!/usr/bin/env node
// toolgate-worker: a worker host as a command.
//   toolgate-worker --redis redis://127.0.0.1:6379 --queue tools [--threads N] [--timeout MS]
//                   [--abort-grace MS] [--lock-duration MS] tools.js [more-tools.js ...]
// Prints one "ready" line on stdout once it consumes the queue; SIGINT or SIGTERM closes it
// gracefully (running jobs finish), a second signal exits at once.
// docs/queue.md — Topology (a worker host as a command), Options.
import { parseArgs } from "node:util";
import { describeFailure } from "../contract/failure.js";
import { runToolWorkerHost, type ToolWorkerHostOptions } from "./host.js";

const USAGE =
  "usage: toolgate-worker --redis redis://host:port --queue NAME [--threads N] [--timeout MS] [--abort-grace MS] [--lock-duration MS] tools.js [...]";

function numberFlag(values: Record<string, unknown>, flag: string): number | undefined {
  const value = values[flag];
  return typeof value === "string" ? Number(value) : undefined;
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      redis: { type: "string" },
      queue: { type: "string" },
      threads: { type: "string" },
      timeout: { type: "string" },
      "abort-grace": { type: "string" },
      "lock-duration": { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help === true || values.redis === undefined || values.queue === undefined || positionals.length === 0) {
    process.stderr.write(`${USAGE}\n`);
    process.exitCode = values.help === true ? 0 : 2;
    return;
  }
  const optional = {
    threads: numberFlag(values, "threads"),
    timeoutMs: numberFlag(values, "timeout"),
    abortGraceMs: numberFlag(values, "abort-grace"),
    lockDurationMs: numberFlag(values, "lock-duration"),
  };
  const options: ToolWorkerHostOptions = {
    connection: values.redis,
    queue: values.queue,
    modules: positionals,
    onError: (error) => process.stderr.write(`toolgate-worker: ${describeFailure(error).text}\n`),
    ...Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)),
  };
  const host = await runToolWorkerHost(options);
  process.stdout.write(`toolgate-worker ready: queue ${host.queue}, tools ${host.registry.names().join(", ")}, pid ${process.pid}\n`);
  let stopping = false;
  const stop = (): void => {
    if (stopping) process.exit(1);
    stopping = true;
    void host.close().then(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`toolgate-worker: ${describeFailure(error).text}\n`);
  process.exitCode = 1;
});
