// toolgate/queue: tool calls over a BullMQ queue on Redis (bullmq and ioredis are optional
// peers, imported when an executor or a host is created: src/queue/peers.ts). The
// agent side is QueueToolExecutor; worker hosts run `runToolWorkerHost` (or the
// `toolgate-worker` command).
// docs/queue.md.
export { QueueToolExecutor, type QueueToolExecutorOptions } from "./executor.js";
export { runToolWorkerHost, type ToolWorkerHost, type ToolWorkerHostOptions } from "./host.js";
export type { QueueClusterNode, QueueConnection, QueueConnectionOptions } from "./options.js";
