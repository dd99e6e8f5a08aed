import { WorkerToolExecutor } from "toolgate";
import { PI_E2E_TOOLS_MODULE, describePiAgentLoopSuite } from "./support/pi-e2e.js";
describePiAgentLoopSuite("WorkerToolExecutor", async () => {
  const executor = await WorkerToolExecutor.create({ modules: [PI_E2E_TOOLS_MODULE.href], minThreads: 2, maxThreads: 4, abortGraceMs: 200 });
  return { executor, close: () => executor.close() };
});
