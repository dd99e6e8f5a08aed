// Peers: what a user would pick instead for off-thread tools, on the same no-op and CPU
// tasks, one thread each, one call at a time (pure per-call latency): a bare
// node:worker_threads thread on one MessagePort (the floor), Piscina, tinypool, workerpool,
// and toolgate's WorkerToolExecutor through its public API.
import { MessageChannel, type MessagePort as PortType, Worker } from "node:worker_threads";
import { Piscina } from "piscina";
import { Tinypool } from "tinypool";
import type { ToolCall } from "toolgate";
import { WorkerToolExecutor } from "toolgate/worker";
import workerpool from "workerpool";
import { type CaseOptions, interleave, median, neverAborted, now, pairedRatios, round, type TargetCheck } from "../harness.js";
import { PEER_POOL_WORKER, PEER_PORT_WORKER, PEER_WORKERPOOL_WORKER, TOOLS_MODULE } from "../paths.js";
import type { PeerTask } from "../peers/task.js";

export const PEER_NAMES = ["rawWorkerThreads", "piscina", "tinypool", "workerpool", "toolgate"] as const;
export type PeerName = (typeof PEER_NAMES)[number];

export interface PeerFigures {
  /** No-op task (`ping`): µs per call, median over rounds. */
  readonly usPerCall: number;
  /** CPU task (`burn`, about `cpuTaskUs` of work): µs per call. */
  readonly cpuTaskUsPerCall: number;
  /** toolgate's time per no-op call over this peer's (median of per-round ratios); 1 for toolgate itself. */
  readonly toolgateRatio: number;
  /** toolgate's µs per no-op call minus this peer's. */
  readonly toolgateOverheadUs: number;
}

export interface PeersResult {
  readonly rounds: number;
  readonly callsPerRound: number;
  readonly cpuIterations: number;
  readonly peers: Record<PeerName, PeerFigures>;
  readonly targets: TargetCheck[];
}

type Run = (task: PeerTask) => Promise<unknown>;

/** A bare worker thread answering on one MessagePort: the floor every pool adds to. */
function rawPortWorker(): { run: Run; close: () => Promise<number> } {
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(PEER_PORT_WORKER, { workerData: { port: port2 }, transferList: [port2] });
  const pending = new Map<number, (value: unknown) => void>();
  let nextId = 0;
  port1.on("message", (message: { id: number; result: unknown }) => {
    const resolve = pending.get(message.id);
    pending.delete(message.id);
    resolve?.(message.result);
  });
  return {
    run: (task) =>
      new Promise((resolve) => {
        const id = nextId++;
        pending.set(id, resolve);
        (port1 as PortType).postMessage({ id, task });
      }),
    close: () => {
      port1.close();
      return worker.terminate();
    },
  };
}

const toolCall = (task: PeerTask, n: number): ToolCall =>
  task.kind === "ping"
    ? { type: "toolCall", id: `peer-${n}`, name: "ping", arguments: { n: task.n } }
    : { type: "toolCall", id: `peer-${n}`, name: "burn", arguments: { iterations: task.iterations } };

export async function benchPeers(options: CaseOptions = {}): Promise<PeersResult> {
  const smoke = options.smoke === true;
  const rounds = smoke ? 1 : 7;
  const warmupRounds = smoke ? 0 : 2;
  const calls = smoke ? 10 : 1500;
  const cpuCalls = smoke ? 4 : 200;
  const cpuIterations = smoke ? 1000 : 100_000; // about 0.2 ms of xorshift per call
  const raw = rawPortWorker();
  const piscina = new Piscina({ filename: PEER_POOL_WORKER.href, minThreads: 1, maxThreads: 1 });
  const tinypool = new Tinypool({ filename: PEER_POOL_WORKER.href, minThreads: 1, maxThreads: 1 });
  const pool = workerpool.pool(PEER_WORKERPOOL_WORKER.pathname, { minWorkers: 1, maxWorkers: 1, workerType: "thread" });
  const executor = await WorkerToolExecutor.create({ modules: [TOOLS_MODULE], minThreads: 1, maxThreads: 1 });
  const signal = neverAborted();
  let callNumber = 0;
  const runners: Record<PeerName, Run> = {
    rawWorkerThreads: raw.run,
    piscina: (task) => piscina.run(task),
    tinypool: (task) => tinypool.run(task),
    workerpool: (task) => pool.exec("run", [task]) as Promise<unknown>,
    toolgate: async (task) => {
      const result = await executor.executeToolCall(toolCall(task, callNumber++), signal);
      if (result.isError) throw new Error(`peers benchmark: toolgate call failed: ${result.content}`);
      return result.content; // already JSON: the other pools' values are stringified to compare
    },
  };
  try {
    const ping: PeerTask = { kind: "ping", n: 7 };
    const expected = JSON.stringify(await runners.rawWorkerThreads(ping));
    for (const name of PEER_NAMES) {
      const value = await runners[name](ping);
      if ((name === "toolgate" ? value : JSON.stringify(value)) !== expected) throw new Error(`peers benchmark: ${name} disagrees`);
    }
    const sequential = (run: Run, task: PeerTask, count: number) => async (): Promise<number> => {
      const start = now();
      for (let index = 0; index < count; index += 1) await run(task);
      return ((now() - start) * 1000) / count;
    };
    const variants = <T>(make: (name: PeerName) => T): Record<PeerName, T> =>
      Object.fromEntries(PEER_NAMES.map((name) => [name, make(name)])) as Record<PeerName, T>;
    options.log?.("peers: no-op task, 1 thread each");
    const noop = await interleave(
      variants((name) => sequential(runners[name], ping, calls)),
      rounds,
      warmupRounds,
    );
    options.log?.("peers: CPU task, 1 thread each");
    const burnTask: PeerTask = { kind: "burn", iterations: cpuIterations };
    const cpu = await interleave(
      variants((name) => sequential(runners[name], burnTask, cpuCalls)),
      rounds,
      smoke ? 0 : 1,
    );
    const toolgateUs = median(noop.toolgate);
    const peers = variants(
      (name): PeerFigures => ({
        usPerCall: round(median(noop[name]), 2),
        cpuTaskUsPerCall: round(median(cpu[name]), 2),
        toolgateRatio: round(median(pairedRatios(noop.toolgate, noop[name]))),
        toolgateOverheadUs: round(toolgateUs - median(noop[name]), 2),
      }),
    );
    return {
      rounds,
      callsPerRound: calls,
      cpuIterations,
      peers,
      targets: PEER_NAMES.map(
        (name): TargetCheck => ({
          id: `peers.${name}.usPerCall`,
          target: "reported: µs per no-op call, 1 thread, sequential",
          value: peers[name].usPerCall,
          pass: true,
          informational: true,
          note:
            name === "toolgate"
              ? "toolgate's own figure; the other rows state its overhead over each peer"
              : `toolgate: ${peers[name].toolgateRatio}x, +${peers[name].toolgateOverheadUs} µs per call`,
        }),
      ),
    };
  } finally {
    await executor.close();
    await piscina.close();
    await tinypool.destroy();
    await pool.terminate();
    await raw.close();
  }
}
