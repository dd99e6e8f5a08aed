// Compiled module URLs (worker threads cannot load .ts: these point into dist/bench).
export const TOOLS_MODULE = new URL("./tools.js", import.meta.url);
export const RAW_WORKER = new URL("./raw-worker.js", import.meta.url);
/** Where `npm run bench` writes its results: bench/results.json in the repository. */
export const RESULTS_FILE = new URL("../../bench/results.json", import.meta.url);
/** Where `npm run bench` writes report.md and charts/: the repository's bench/ folder. */
export const REPORT_DIR = new URL("../../bench/", import.meta.url);
/** The peers benchmark's workers: Piscina and tinypool share one, workerpool and a bare thread have theirs. */
export const PEER_POOL_WORKER = new URL("./peers/pool-worker.js", import.meta.url);
export const PEER_WORKERPOOL_WORKER = new URL("./peers/workerpool-worker.js", import.meta.url);
export const PEER_PORT_WORKER = new URL("./peers/port-worker.js", import.meta.url);
/** The versus case's zod tool module (toolgate's worker pool loads it) and the bare Piscina worker beside it. */
export const VERSUS_TOOLS_MODULE = new URL("./versus-tools.js", import.meta.url);
export const VERSUS_PISCINA_WORKER = new URL("./peers/versus-piscina.js", import.meta.url);
