// Compiled module URLs (worker threads cannot load .ts: these point into dist/bench).
export const TOOLS_MODULE = new URL("./tools.js", import.meta.url);
export const RAW_WORKER = new URL("./raw-worker.js", import.meta.url);
/** Where `npm run bench` writes its results: bench/results.json in the repository. */
export const RESULTS_FILE = new URL("../../bench/results.json", import.meta.url);
