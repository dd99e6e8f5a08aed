import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // One test file at a time. The worker-pool tests start thread pools, the package test runs
    // npm and tsc in child processes, and several tests bound latency (abort, event-loop delay,
    // refusal time): on a 2-core machine two such files side by side fight for the cores. It is
    // also what vitest already did here by default (maxWorkers = cores - 1 = 1), now said outright.
    fileParallelism: false,
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
