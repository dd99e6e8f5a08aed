// The sandboxed BullMQ peer's processor file: BullMQ runs it in a worker thread
// (`useWorkerThreads: true`), its own isolation, doing what toolgate's `ping` does.
export default async function ping(job: { data: { n?: unknown } }): Promise<{ pong: unknown }> {
  return { pong: job.data.n ?? null };
}
