// Pi's real agent loop over toolgate tools running in the WorkerToolExecutor's pool
// (docs/adapters.md — Use it with Pi; docs/contract.md, rule W2 — abort relay): the
// same scenarios as the in-process run (test/support/pi-e2e.ts), including the CPU-heavy
// tool and an abort while a tool that ignores its signal is running in a worker.
import { WorkerToolExecutor } from "toolgate/worker";
import { describePiAgentLoopSuite, PI_E2E_TOOLS_MODULE } from "../support/pi-e2e.js";

describePiAgentLoopSuite("WorkerToolExecutor", async () => {
  const executor = await WorkerToolExecutor.create({
    modules: [PI_E2E_TOOLS_MODULE.href],
    minThreads: 2,
    maxThreads: 4,
    // `stall` ignores its signal: its thread is terminated soon after the abort.
    abortGraceMs: 200,
  });
  return { executor, close: () => executor.close() };
});
