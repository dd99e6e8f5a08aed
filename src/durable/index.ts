// toolgate/durable: where durable calls keep their records. Give a store to an executor as
// `durable: { store }`, then pass `durable: { runId }` with a call or a batch: a call re-issued
// under the same (runId, call id) runs at most once, and every caller gets the same outcome.
// docs/durable.md.
export { type MemoryDurableStoreOptions, memoryDurableStore } from "./memory-store.js";
export { type RedisDurableStoreOptions, redisDurableStore } from "./redis-store.js";
export type { DurableCallKey, DurableCallRecords, DurableCallView, DurableStore } from "./store.js";
