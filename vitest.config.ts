import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Worker-pool tests spawn threads; keep files from competing for the 2 cores too hard.
    fileParallelism: true,
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
