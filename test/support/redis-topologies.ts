// The Redis that production runs, started by a test (issue 44): a Redis Cluster of three
// primaries (optionally each with a replica), a Sentinel set (one primary, one replica, three
// sentinels) and a TLS server with ACL users. Every server is a `redis-server` of its own on a
// free loopback port, configured by a file in a temporary directory of its topology; `stop()`
// ends each by pid and removes the directory, and whatever a test leaves running (a failed
// test, a thrown start) is killed when the test process exits. The shared Redis at
// 127.0.0.1:6379 is never touched: every port here is one the OS just handed out.
// Every start is bounded: a topology that does not come up within its bound is an Error naming
// the topology, the bound and what was still missing (with the tail of a dead server's log),
// never a hang.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis, type RedisOptions } from "ioredis";

/** One redis-server (a data node or a sentinel) started here. */
export interface RedisNode {
  /** Its role when started, numbered: "primary-1", "replica-2", "sentinel-3", "tls". */
  readonly name: string;
  readonly port: number;
  readonly pid: number;
  /** Its working directory: redis.conf, redis.log, and what the server writes. */
  readonly dir: string;
  running(): boolean;
  /** SIGKILL (a crash: nothing saved, no goodbye to the cluster or the sentinels); resolves once it exited. */
  kill(): Promise<void>;
}

/** Where a client finds a node: what ioredis's `Cluster` and `sentinels` options take. */
export interface NodeAddress {
  readonly host: string;
  readonly port: number;
}

/** Slots `from`..`to` (inclusive), served by the node on port `primary`. */
export interface SlotRange {
  readonly from: number;
  readonly to: number;
  readonly primary: number;
  readonly replicas: readonly number[];
}

/** What every start returns: its temporary directory, and how to end it. */
export interface StartedTopology {
  readonly dir: string;
  /** Ends every node by pid (SIGKILL) and removes the directory. */
  stop(): Promise<void>;
}

export interface RedisCluster extends StartedTopology {
  readonly nodes: readonly RedisNode[];
  readonly startupNodes: readonly NodeAddress[];
}

export interface RedisSentinelSet extends StartedTopology {
  readonly masterName: string;
  /** The data node that was primary at start (after a failover, ask `awaitSentinelFailover`). */
  readonly primary: RedisNode;
  /** The data node that was its replica at start. */
  readonly replica: RedisNode;
  readonly sentinels: readonly RedisNode[];
  readonly sentinelAddresses: readonly NodeAddress[];
}

/** An ACL user as Redis's `user` directive takes it: `rules` such as "~{tg:q}:*", "+@all", "-flushall". */
export interface AclUser {
  readonly name: string;
  readonly password: string;
  readonly rules: readonly string[];
}

/** PEM files made with openssl: a CA, a server certificate it signed (for 127.0.0.1 and localhost), and an unrelated CA. */
export interface TlsFiles {
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
  readonly wrongCaFile: string;
}

export interface TlsRedis extends StartedTopology {
  readonly node: RedisNode;
  /** `rediss://127.0.0.1:<port>` (no credentials). */
  readonly url: string;
  readonly files: TlsFiles;
  /** The PEM text of the CA that signed the server's certificate, for a client's `tls.ca`. */
  readonly ca: string;
  /** The PEM text of a CA that signed nothing here: a client trusting only it must be refused. */
  readonly wrongCa: string;
}

/** Redis Cluster's slot count: a map covers the cluster when its ranges add up to this. */
export const CLUSTER_SLOTS = 16_384;

const HOST = "127.0.0.1";
/** How long one probe (a connect and one command) may take: a server this slow counts as not up yet. */
const PROBE_MS = 1000;
/** Pause between two probes of a topology that is not up yet. */
const POLL_MS = 100;

// ---- processes and directories ----------------------------------------------------------

const liveChildren = new Set<ChildProcess>();
const liveDirs = new Set<string>();
process.once("exit", () => {
  for (const child of liveChildren) child.kill("SIGKILL");
  for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true });
});

/** A start's bound: a label for errors, and the moment it runs out. */
interface Bound {
  readonly what: string;
  readonly withinMs: number;
  readonly deadline: number;
}

const boundOf = ({ what, withinMs }: { what: string; withinMs: number }): Bound => ({ what, withinMs, deadline: Date.now() + withinMs });

const timeLeft = (bound: Bound): number => Math.max(1, bound.deadline - Date.now());

/** Polls `check` until it reports done; past the bound, throws naming what was still missing. A check that throws ends the wait at once. */
async function waitUntil<T>({ bound, check }: { bound: Bound; check: () => Promise<{ done: T } | { missing: string }> }): Promise<T> {
  for (;;) {
    const outcome = await check();
    if ("done" in outcome) return outcome.done;
    if (Date.now() >= bound.deadline) {
      throw new Error(`${bound.what} did not come up within ${bound.withinMs / 1000} s: ${outcome.missing}`);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** `count` distinct loopback ports nothing listens on (all held until every one is chosen). */
async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let index = 0; index < count; index += 1) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(0, HOST, () => resolve());
      });
    }
    return servers.map((server) => {
      const address = server.address();
      if (typeof address !== "object" || address === null) throw new Error("a listening server has no port");
      return address.port;
    });
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/** The directory of one topology and the nodes started in it; `stop()` ends them and removes it. */
interface Topology {
  readonly dir: string;
  readonly nodes: RedisNode[];
  stop(): Promise<void>;
}

function openTopology(kind: string): Topology {
  const dir = mkdtempSync(join(tmpdir(), `toolgate-redis-${kind}-`));
  liveDirs.add(dir);
  const nodes: RedisNode[] = [];
  return {
    dir,
    nodes,
    async stop() {
      await Promise.all(nodes.map((node) => node.kill()));
      rmSync(dir, { recursive: true, force: true });
      liveDirs.delete(dir);
    },
  };
}

/** Runs `start` in a fresh topology; when it throws, everything it started is stopped before the error goes on. */
async function within<T>(kind: string, start: (topology: Topology) => Promise<T>): Promise<T> {
  const topology = openTopology(kind);
  try {
    return await start(topology);
  } catch (error) {
    await topology.stop();
    throw error;
  }
}

/** The last lines of a node's log, for an error about it. */
function logTail(dir: string): string {
  const path = join(dir, "redis.log");
  if (!existsSync(path)) return "(no log)";
  const lines = readFileSync(path, "utf8").trim().split("\n");
  return lines
    .filter((line) => !line.includes("WARNING Memory overcommit")) // printed by every start on this kernel setting
    .slice(-4)
    .join(" | ");
}

/**
 * Starts one redis-server from a config file of `lines` (plus its directory, log and no
 * persistence), in `--sentinel` mode when asked. Does not wait for it to answer.
 */
function spawnNode({
  topology,
  name,
  port,
  lines,
  sentinel = false,
}: {
  topology: Topology;
  name: string;
  port: number;
  lines: readonly string[];
  sentinel?: boolean;
}): RedisNode {
  const dir = join(topology.dir, name);
  mkdirSync(dir);
  const config = [`bind ${HOST}`, `dir ${dir}`, `logfile ${join(dir, "redis.log")}`, "daemonize no", ...lines];
  // No persistence. A replica's first sync starts at once (by default it waits 5 s for more
  // replicas), and a primary pings its replicas every second (by default every 10 s: until
  // the first ping a replica's offset is 0, and CLUSTER SLOTS does not list it).
  if (!sentinel) config.push('save ""', "appendonly no", "repl-diskless-sync-delay 0", "repl-ping-replica-period 1");
  const configFile = join(dir, "redis.conf");
  writeFileSync(configFile, `${config.join("\n")}\n`);
  const child = spawn("redis-server", sentinel ? [configFile, "--sentinel"] : [configFile], { stdio: "ignore" });
  liveChildren.add(child);
  let spawnError: Error | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    // No redis-server (ENOENT), or not executable: there is no process, and "exit" may never come.
    child.once("error", (error) => {
      spawnError = error;
      writeFileSync(join(dir, "redis.log"), `could not start redis-server: ${error.message}\n`, { flag: "a" });
      resolve();
    });
  });
  void exited.then(() => liveChildren.delete(child));
  const running = (): boolean => spawnError === undefined && child.exitCode === null && child.signalCode === null;
  const node: RedisNode = {
    name,
    port,
    pid: child.pid ?? -1,
    dir,
    running,
    async kill() {
      if (running()) child.kill("SIGKILL");
      await exited;
    },
  };
  topology.nodes.push(node);
  return node;
}

// ---- asking a node ----------------------------------------------------------------------

/** How a probe reaches a node: over TLS trusting `ca` when given. */
interface ProbeAccess {
  readonly ca?: string;
}

/** One command on a fresh connection to `port`, within PROBE_MS; a Redis error reply rejects as ioredis's ReplyError. */
async function ask({ port, command, access = {} }: { port: number; command: readonly string[]; access?: ProbeAccess }): Promise<unknown> {
  const options: RedisOptions = {
    host: HOST,
    port,
    lazyConnect: true,
    connectTimeout: PROBE_MS,
    commandTimeout: PROBE_MS,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableReadyCheck: false, // its INFO would be refused before AUTH when the default user is off
  };
  if (access.ca !== undefined) options.tls = { ca: access.ca };
  const client = new Redis(options);
  client.on("error", () => {}); // the rejection below carries it
  try {
    await client.connect();
    const [name, ...args] = command;
    return await client.call(name as string, ...args);
  } finally {
    client.disconnect();
  }
}

const isReplyError = (error: unknown): boolean => error instanceof Error && error.name === "ReplyError";

const describeError = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** Throws, ending a wait at once, when a node it waits for has exited: nothing will come up then. */
function assertRunning(node: RedisNode): void {
  if (!node.running()) throw new Error(`${node.name} (redis-server, port ${node.port}) exited: ${logTail(node.dir)}`);
}

/** Waits until every node answers anything at all (an error reply too: NOAUTH means it is up). */
async function awaitAnswers({ nodes, bound, access }: { nodes: readonly RedisNode[]; bound: Bound; access?: ProbeAccess }): Promise<void> {
  await waitUntil({
    bound,
    async check() {
      for (const node of nodes) {
        assertRunning(node);
        try {
          await ask({ port: node.port, command: ["PING"], ...(access === undefined ? {} : { access }) });
        } catch (error) {
          if (!isReplyError(error)) return { missing: `${node.name} (port ${node.port}) does not answer: ${describeError(error)}` };
        }
      }
      return { done: undefined };
    },
  });
}

/** `field:value` lines of an INFO-style reply (CLUSTER INFO, INFO replication). */
function infoField(reply: unknown, field: string): string | undefined {
  if (typeof reply !== "string") return undefined;
  const line = reply.split("\r\n").find((entry) => entry.startsWith(`${field}:`));
  return line?.slice(field.length + 1);
}

/** A flat [field, value, ...] reply (SENTINEL MASTER) as a record. */
function pairs(reply: unknown): Record<string, string> {
  const record: Record<string, string> = {};
  if (!Array.isArray(reply)) return record;
  for (let index = 0; index + 1 < reply.length; index += 2) record[String(reply[index])] = String(reply[index + 1]);
  return record;
}

// ---- Redis Cluster ----------------------------------------------------------------------

/**
 * Starts a Redis Cluster of three primaries (each with one replica when `replicas`), joined
 * with `redis-cli --cluster create`, and resolves once every node says cluster_state:ok, every
 * node's slot map covers all 16384 slots the same way and (with replicas) every replica is in
 * sync with its primary. `nodeTimeoutMs` is cluster-node-timeout: a killed primary is failed
 * over about that long after its death.
 */
export async function startRedisCluster({
  replicas = false,
  nodeTimeoutMs = 1000,
  withinMs = 30_000,
}: {
  replicas?: boolean;
  nodeTimeoutMs?: number;
  withinMs?: number;
} = {}): Promise<RedisCluster> {
  const count = replicas ? 6 : 3;
  const bound = boundOf({ what: `a Redis Cluster of 3 primaries${replicas ? " and 3 replicas" : ""}`, withinMs });
  return within("cluster", async (topology) => {
    const ports = await freePorts(2 * count); // a client port and a cluster bus port for each node
    for (let index = 0; index < count; index += 1) {
      spawnNode({
        topology,
        name: `node-${index + 1}`,
        port: ports[index] as number,
        lines: [
          `port ${ports[index]}`,
          `cluster-port ${ports[count + index]}`,
          "cluster-enabled yes",
          "cluster-config-file nodes.conf",
          `cluster-node-timeout ${nodeTimeoutMs}`,
        ],
      });
    }
    await awaitAnswers({ nodes: topology.nodes, bound });
    await createCluster({ nodes: topology.nodes, replicas, bound });
    await awaitClusterSettled({ nodes: topology.nodes, replicas, bound });
    return {
      dir: topology.dir,
      nodes: topology.nodes,
      startupNodes: topology.nodes.map((node) => ({ host: HOST, port: node.port })),
      stop: topology.stop,
    };
  });
}

/** `redis-cli --cluster create` over `nodes`, within the bound. */
async function createCluster({ nodes, replicas, bound }: { nodes: readonly RedisNode[]; replicas: boolean; bound: Bound }): Promise<void> {
  const addresses = nodes.map((node) => `${HOST}:${node.port}`);
  await run({
    command: "redis-cli",
    args: ["--cluster", "create", ...addresses, "--cluster-replicas", replicas ? "1" : "0", "--cluster-yes"],
    bound,
  });
}

/** Resolves with the slot map once `settledMap` finds the cluster settled. */
async function awaitClusterSettled({
  nodes,
  replicas,
  bound,
}: {
  nodes: readonly RedisNode[];
  replicas: boolean;
  bound: Bound;
}): Promise<SlotRange[]> {
  return waitUntil({ bound, check: () => settledMap({ nodes, replicas }) });
}

/**
 * The slot map when every running node says cluster_state:ok and sees the same map covering
 * every slot (and, with `replicas`, every range's replica is in sync); else what is missing.
 */
async function settledMap({
  nodes,
  replicas,
}: {
  nodes: readonly RedisNode[];
  replicas: boolean;
}): Promise<{ done: SlotRange[] } | { missing: string }> {
  const running = nodes.filter((node) => node.running());
  let agreed: SlotRange[] | undefined;
  for (const node of running) {
    const view = await clusterViewOf(node);
    if ("missing" in view) return view;
    if (agreed !== undefined && JSON.stringify(agreed) !== JSON.stringify(view.done)) {
      return { missing: `${node.name} sees another slot map than ${running[0]?.name}` };
    }
    agreed = view.done;
  }
  if (agreed === undefined) return { missing: "no node is running" };
  if (replicas) {
    const unsynced = await unsyncedReplica({ nodes: running, map: agreed });
    if (unsynced !== undefined) return { missing: unsynced };
  }
  return { done: agreed };
}

/** What one node says: its slot map when it says cluster_state:ok and the map covers every slot. */
async function clusterViewOf(node: RedisNode): Promise<{ done: SlotRange[] } | { missing: string }> {
  try {
    const state = infoField(await ask({ port: node.port, command: ["CLUSTER", "INFO"] }), "cluster_state");
    if (state !== "ok") return { missing: `${node.name} says cluster_state:${state}` };
    const map = parseSlots(await ask({ port: node.port, command: ["CLUSTER", "SLOTS"] }));
    const covered = map.reduce((sum, range) => sum + range.to - range.from + 1, 0);
    const contiguous = map.every((range, index) => range.from === (index === 0 ? 0 : (map[index - 1] as SlotRange).to + 1));
    if (covered !== CLUSTER_SLOTS || !contiguous) return { missing: `${node.name} sees ${covered} of ${CLUSTER_SLOTS} slots covered` };
    return { done: map };
  } catch (error) {
    return { missing: `${node.name} (port ${node.port}): ${describeError(error)}` };
  }
}

/** A replica of `map` that is not yet in sync with its primary (named), or undefined when all are. */
async function unsyncedReplica({ nodes, map }: { nodes: readonly RedisNode[]; map: readonly SlotRange[] }): Promise<string | undefined> {
  for (const range of map) {
    if (range.replicas.length === 0) return `slots ${range.from}-${range.to} have no replica yet`;
    for (const port of range.replicas) {
      const node = nodes.find((candidate) => candidate.port === port);
      if (node === undefined) return `the replica on port ${port} is not one of this cluster's running nodes`;
      try {
        const link = infoField(await ask({ port, command: ["INFO", "replication"] }), "master_link_status");
        if (link !== "up") return `${node.name} (replica) has master_link_status:${link}`;
      } catch (error) {
        return `${node.name} (port ${port}): ${describeError(error)}`;
      }
    }
  }
  return undefined;
}

/** CLUSTER SLOTS as ranges sorted by first slot; each node is [host, port, id, ...]. */
function parseSlots(reply: unknown): SlotRange[] {
  if (!Array.isArray(reply)) return [];
  const ranges = reply.map((entry: unknown[]) => {
    const [from, to, primary, ...replicas] = entry as [number, number, unknown[], ...unknown[][]];
    return { from, to, primary: Number(primary[1]), replicas: replicas.map((replica) => Number(replica[1])).sort((a, b) => a - b) };
  });
  return ranges.sort((a, b) => a.from - b.from);
}

/** The slot map as a running node of the cluster sees it. */
export async function clusterSlotMap({ cluster }: { cluster: RedisCluster }): Promise<SlotRange[]> {
  return parseSlots(await ask({ port: runningNode(cluster).port, command: ["CLUSTER", "SLOTS"] }));
}

/** The slot of `key` (hash tags honoured, as the server computes it) and the node serving it now. */
export async function primaryForKey({
  cluster,
  key,
}: {
  cluster: RedisCluster;
  key: string;
}): Promise<{ slot: number; primary: RedisNode }> {
  const slot = Number(await ask({ port: runningNode(cluster).port, command: ["CLUSTER", "KEYSLOT", key] }));
  const range = (await clusterSlotMap({ cluster })).find((candidate) => candidate.from <= slot && slot <= candidate.to);
  const primary = cluster.nodes.find((node) => node.port === range?.primary);
  if (primary === undefined) throw new Error(`no node of the cluster serves slot ${slot} (of key ${JSON.stringify(key)})`);
  return { slot, primary };
}

/**
 * After `formerPrimary` was killed: resolves once another running node serves `slot`, every
 * running node says cluster_state:ok and agrees on a map covering every slot. Resolves with
 * that node and the map; past `withinMs`, throws naming what was still missing.
 */
export async function awaitPromotion({
  cluster,
  formerPrimary,
  slot,
  withinMs = 15_000,
}: {
  cluster: RedisCluster;
  formerPrimary: RedisNode;
  slot: number;
  withinMs?: number;
}): Promise<{ primary: RedisNode; map: SlotRange[] }> {
  const bound = boundOf({ what: `a replica promoted in place of ${formerPrimary.name} (port ${formerPrimary.port})`, withinMs });
  return waitUntil({
    bound,
    async check() {
      const settled = await settledMap({ nodes: cluster.nodes, replicas: false });
      if ("missing" in settled) return settled;
      const map = settled.done;
      const range = map.find((candidate) => candidate.from <= slot && slot <= candidate.to);
      const primary = cluster.nodes.find((node) => node.port === range?.primary && node !== formerPrimary && node.running());
      if (primary === undefined) return { missing: `slot ${slot} is still served by port ${range?.primary}` };
      return { done: { primary, map } };
    },
  });
}

function runningNode(cluster: RedisCluster): RedisNode {
  const node = cluster.nodes.find((candidate) => candidate.running());
  if (node === undefined) throw new Error("no node of the cluster is running");
  return node;
}

// ---- a plain node -----------------------------------------------------------------------

export interface RedisNodeAlone extends StartedTopology {
  readonly node: RedisNode;
}

/**
 * One redis-server without persistence in a directory of its own (a replica's full sync writes
 * its RDB there, never in the test's working directory, where the next server would load it),
 * for a test that makes it a replica or fails it over by hand. Resolves once it answers.
 */
export async function startRedisNode({
  name = "node",
  withinMs = 10_000,
}: {
  name?: string;
  withinMs?: number;
} = {}): Promise<RedisNodeAlone> {
  const bound = boundOf({ what: `a redis-server (${name})`, withinMs });
  return within("node", async (topology) => {
    const [port] = await freePorts(1);
    const node = spawnNode({ topology, name, port: port as number, lines: [`port ${port}`] });
    await awaitAnswers({ nodes: [node], bound });
    return { dir: topology.dir, node, stop: topology.stop };
  });
}

// ---- Sentinel ---------------------------------------------------------------------------

/**
 * Starts one primary, one replica of it and three sentinels monitoring it as `masterName`
 * (quorum 2), and resolves once the replica is in sync and every sentinel sees the primary,
 * its replica and the two other sentinels (without which no failover can be agreed).
 * `downAfterMs` and `failoverTimeoutMs` are the sentinels' down-after-milliseconds and
 * failover-timeout.
 */
export async function startRedisSentinel({
  masterName = "toolgate",
  downAfterMs = 1000,
  failoverTimeoutMs = 5000,
  withinMs = 30_000,
}: {
  masterName?: string;
  downAfterMs?: number;
  failoverTimeoutMs?: number;
  withinMs?: number;
} = {}): Promise<RedisSentinelSet> {
  const bound = boundOf({ what: `a Sentinel set (1 primary, 1 replica, 3 sentinels) for "${masterName}"`, withinMs });
  return within("sentinel", async (topology) => {
    const [primaryPort, replicaPort, ...sentinelPorts] = await freePorts(5);
    const primary = spawnNode({ topology, name: "primary", port: primaryPort as number, lines: [`port ${primaryPort}`] });
    const replica = spawnNode({
      topology,
      name: "replica",
      port: replicaPort as number,
      lines: [`port ${replicaPort}`, `replicaof ${HOST} ${primaryPort}`],
    });
    const sentinels = sentinelPorts.map((port, index) =>
      spawnNode({
        topology,
        name: `sentinel-${index + 1}`,
        port,
        sentinel: true,
        lines: [
          `port ${port}`,
          `sentinel monitor ${masterName} ${HOST} ${primaryPort} 2`,
          `sentinel down-after-milliseconds ${masterName} ${downAfterMs}`,
          `sentinel failover-timeout ${masterName} ${failoverTimeoutMs}`,
        ],
      }),
    );
    await awaitAnswers({ nodes: topology.nodes, bound });
    await awaitSentinelsReady({ primary, replica, sentinels, masterName, bound });
    return {
      dir: topology.dir,
      masterName,
      primary,
      replica,
      sentinels,
      sentinelAddresses: sentinels.map((node) => ({ host: HOST, port: node.port })),
      stop: topology.stop,
    };
  });
}

async function awaitSentinelsReady({
  primary,
  replica,
  sentinels,
  masterName,
  bound,
}: {
  primary: RedisNode;
  replica: RedisNode;
  sentinels: readonly RedisNode[];
  masterName: string;
  bound: Bound;
}): Promise<void> {
  await waitUntil({
    bound,
    async check() {
      for (const node of [primary, replica, ...sentinels]) assertRunning(node);
      try {
        const role = (await ask({ port: replica.port, command: ["ROLE"] })) as unknown[];
        if (role[0] !== "slave" || role[3] !== "connected") return { missing: `the replica's ROLE is ${JSON.stringify(role)}` };
        for (const sentinel of sentinels) {
          const master = pairs(await ask({ port: sentinel.port, command: ["SENTINEL", "MASTER", masterName] }));
          if (master.flags !== "master" || master["num-slaves"] !== "1" || master["num-other-sentinels"] !== "2") {
            return {
              missing: `${sentinel.name} sees flags ${master.flags}, ${master["num-slaves"]} replica(s), ${master["num-other-sentinels"]} other sentinel(s)`,
            };
          }
        }
      } catch (error) {
        return { missing: describeError(error) };
      }
      return { done: undefined };
    },
  });
}

/** The primary's port as each sentinel reports it (SENTINEL GET-MASTER-ADDR-BY-NAME), in order; undefined for one that does not answer. */
export async function reportedPrimaries({ set }: { set: RedisSentinelSet }): Promise<(number | undefined)[]> {
  return Promise.all(
    set.sentinels.map(async (sentinel) => {
      try {
        const address = await ask({ port: sentinel.port, command: ["SENTINEL", "GET-MASTER-ADDR-BY-NAME", set.masterName] });
        return Array.isArray(address) ? Number(address[1]) : undefined;
      } catch {
        return undefined;
      }
    }),
  );
}

/**
 * After `formerPrimary` was killed: resolves with the new primary once every sentinel reports
 * it and it says ROLE master; past `withinMs`, throws naming what the sentinels still said.
 */
export async function awaitSentinelFailover({
  set,
  formerPrimary,
  withinMs = 20_000,
}: {
  set: RedisSentinelSet;
  formerPrimary: RedisNode;
  withinMs?: number;
}): Promise<RedisNode> {
  const bound = boundOf({ what: `a new primary for "${set.masterName}" in place of port ${formerPrimary.port}`, withinMs });
  return waitUntil({
    bound,
    async check() {
      const reports = await reportedPrimaries({ set });
      const port = reports[0];
      if (port === formerPrimary.port || reports.some((report) => report !== port)) {
        return { missing: `the sentinels report ports ${JSON.stringify(reports)}` };
      }
      const primary = [set.primary, set.replica].find((node) => node.port === port && node.running());
      if (primary === undefined) return { missing: `the sentinels report port ${port}, which is no running data node of this set` };
      try {
        const role = (await ask({ port: primary.port, command: ["ROLE"] })) as unknown[];
        return role[0] === "master" ? { done: primary } : { missing: `${primary.name} says ROLE ${String(role[0])}` };
      } catch (error) {
        return { missing: `${primary.name}: ${describeError(error)}` };
      }
    },
  });
}

// ---- TLS and ACL users ------------------------------------------------------------------

/** One command run to its end within the bound; a failure (or the bound) throws with its output. */
async function run({
  command,
  args,
  bound,
  cwd,
}: {
  command: string;
  args: readonly string[];
  bound: Bound;
  cwd?: string;
}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      { timeout: timeLeft(bound), killSignal: "SIGKILL", ...(cwd === undefined ? {} : { cwd }) },
      (error, stdout, stderr) => {
        if (error === null) resolve(stdout);
        else {
          const output = `${stdout}${stderr}`.trim().split("\n").slice(-5).join(" | ");
          reject(
            new Error(`${bound.what}: \`${command} ${args.slice(0, 3).join(" ")} …\` failed (${error.message.split("\n")[0]}): ${output}`),
          );
        }
      },
    );
  });
}

/** A minimal openssl config, so the system's openssl.cnf adds no extensions of its own. */
const OPENSSL_CONFIG = "[req]\ndistinguished_name = dn\n[dn]\n";
const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

/**
 * Makes, with openssl in `dir`: a self-signed CA, a server key and certificate it signed (valid
 * for IP 127.0.0.1 and localhost, one day), and a second self-signed CA that signed nothing.
 */
export async function makeTlsFiles({ dir, withinMs = 15_000 }: { dir: string; withinMs?: number }): Promise<TlsFiles> {
  const bound = boundOf({ what: "the test's TLS certificates (openssl)", withinMs });
  const path = (name: string): string => join(dir, name);
  writeFileSync(path("openssl.cnf"), OPENSSL_CONFIG);
  writeFileSync(
    path("server.ext"),
    "basicConstraints = CA:FALSE\nsubjectAltName = IP:127.0.0.1, DNS:localhost\nextendedKeyUsage = serverAuth\n",
  );
  const makeCa = (name: string, subject: string): Promise<string> =>
    run({
      command: "openssl",
      args: ["req", "-config", path("openssl.cnf"), "-x509", ...EC_KEY, "-keyout", path(`${name}.key`), "-out", path(`${name}.crt`)].concat(
        [
          "-days",
          "1",
          "-subj",
          subject,
          "-addext",
          "basicConstraints=critical,CA:TRUE",
          "-addext",
          "keyUsage=critical,keyCertSign,cRLSign",
        ],
      ),
      bound,
    });
  await makeCa("ca", `/CN=toolgate test CA ${process.pid}`);
  await makeCa("wrong-ca", `/CN=toolgate unrelated CA ${process.pid}`);
  await run({
    command: "openssl",
    args: [
      "req",
      "-config",
      path("openssl.cnf"),
      "-new",
      ...EC_KEY,
      "-keyout",
      path("server.key"),
      "-out",
      path("server.csr"),
      "-subj",
      "/CN=127.0.0.1",
    ],
    bound,
  });
  await run({
    command: "openssl",
    args: ["x509", "-req", "-in", path("server.csr"), "-CA", path("ca.crt"), "-CAkey", path("ca.key"), "-CAcreateserial"].concat([
      "-out",
      path("server.crt"),
      "-days",
      "1",
      "-extfile",
      path("server.ext"),
    ]),
    bound,
  });
  return { caFile: path("ca.crt"), certFile: path("server.crt"), keyFile: path("server.key"), wrongCaFile: path("wrong-ca.crt") };
}

/** A token of an ACL line: printable ASCII without spaces (a space or newline would smuggle in another rule). */
const ACL_TOKEN = /^[!-~]+$/;

/** The `user` directives of `users` and of the default user; refuses a name, password or rule that is not one token. */
function aclLines({ users, defaultUser }: { users: readonly AclUser[]; defaultUser: "off" | { password: string } }): string[] {
  const token = (what: string, value: string): string => {
    if (!ACL_TOKEN.test(value)) throw new Error(`${what} must be printable ASCII without spaces (got ${JSON.stringify(value)})`);
    return value;
  };
  const lines = users.map((user) => {
    const rules = user.rules.map((rule) => token(`user ${user.name}'s rule`, rule));
    return [
      "user",
      token("an ACL user's name", user.name),
      "reset",
      "on",
      `>${token(`user ${user.name}'s password`, user.password)}`,
      ...rules,
    ].join(" ");
  });
  const fallback =
    defaultUser === "off"
      ? "user default off"
      : `user default reset on >${token("the default user's password", defaultUser.password)} ~* &* +@all`;
  return [...lines, fallback];
}

/**
 * Starts a redis-server that speaks only TLS (`port 0`, `tls-port`), with certificates made
 * by `makeTlsFiles` (clients need no certificate of their own) and the ACL `users`; the
 * default user is disabled, or given a password. Resolves once it answers over TLS.
 */
export async function startTlsRedis({
  users,
  defaultUser = "off",
  withinMs = 20_000,
}: {
  users: readonly AclUser[];
  defaultUser?: "off" | { password: string };
  withinMs?: number;
}): Promise<TlsRedis> {
  const acl = aclLines({ users, defaultUser }); // refused before anything starts
  const bound = boundOf({ what: "a TLS redis-server with ACL users", withinMs });
  return within("tls", async (topology) => {
    const files = await makeTlsFiles({ dir: topology.dir, withinMs: timeLeft(bound) });
    const [port] = await freePorts(1);
    const node = spawnNode({
      topology,
      name: "tls",
      port: port as number,
      lines: [
        "port 0",
        `tls-port ${port}`,
        `tls-cert-file ${files.certFile}`,
        `tls-key-file ${files.keyFile}`,
        `tls-ca-cert-file ${files.caFile}`,
        "tls-auth-clients no",
        ...acl,
      ],
    });
    const ca = readFileSync(files.caFile, "utf8");
    await awaitAnswers({ nodes: [node], bound, access: { ca } });
    return {
      dir: topology.dir,
      node,
      url: `rediss://${HOST}:${port}`,
      files,
      ca,
      wrongCa: readFileSync(files.wrongCaFile, "utf8"),
      stop: topology.stop,
    };
  });
}
