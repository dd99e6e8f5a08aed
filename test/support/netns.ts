// Real network partitions for the queue tests: a network namespace of the test's own, joined
// to the root namespace by a veth pair. Processes started with `spawn` run inside it and reach
// the root side (a redis-server of the test's own, bound to `rootAddress`) only over the veth;
// `cut()` gives both ends of the link a queue that holds no packet (`tc qdisc … pfifo limit 0`):
// every packet either way is lost, the links stay up (no RST, no FIN, no route goes away), and
// TCP retransmits with its own backoff until `heal()` takes the queues away. (Taking a link down
// instead holds the packets queued on the other end and sends them at once when it comes back:
// no loss at all, and none of TCP's backoff.) Names carry the pid and a counter, so parallel
// runs never collide; `close()` deletes the namespace and the link.
// Making one needs root and iproute2 (CI runs as root): `namespaceSupport()` says why it cannot,
// for the test to print and skip.
import { type ChildProcess, execFileSync, type SpawnOptions, spawn, spawnSync } from "node:child_process";

export interface NetworkNamespace {
  readonly name: string;
  /** The root side's address on the link: bind the test's redis-server to it. */
  readonly rootAddress: string;
  /** The namespace side's address. */
  readonly innerAddress: string;
  /** Starts `command` inside the namespace. */
  spawn(command: string, args: readonly string[], options?: SpawnOptions): ChildProcess;
  /** Every packet between the namespace and the root side is lost from now on. */
  cut(): void;
  /** Packets pass again. */
  heal(): void;
  /** Deletes the link and the namespace (idempotent). */
  close(): void;
}

let made = 0;
let support: { ok: true } | { ok: false; reason: string } | undefined;

function run(command: string, ...args: string[]): void {
  execFileSync(command, args, { stdio: ["ignore", "ignore", "pipe"] });
}

const ip = (...args: string[]): void => run("ip", ...args);

/** Whether this process can make namespaces and veth pairs (root, iproute2): probed once. */
export function namespaceSupport(): { ok: true } | { ok: false; reason: string } {
  support ??= probe();
  return support;
}

function probe(): { ok: true } | { ok: false; reason: string } {
  if (process.platform !== "linux") return { ok: false, reason: `network namespaces are Linux's (this is ${process.platform})` };
  if (spawnSync("ip", ["-V"], { stdio: "ignore" }).status !== 0) return { ok: false, reason: "iproute2's `ip` is not on PATH" };
  try {
    makeNamespace(true).close(); // namespace, veth pair, addresses, and one cut
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: `cannot make a network namespace with a veth pair and cut it (${String(error).trim()}; needs root)` };
  }
}

/** A /30 of 10.200.0.0/13 that no interface of this machine uses, starting from one the pid picks. */
function freeSubnet(): [string, string] {
  const used = execFileSync("ip", ["-o", "-4", "addr", "show"], { encoding: "utf8" });
  const start = (process.pid * 7 + made * 131) % 131_072;
  for (let offset = 0; offset < 131_072; offset += 1) {
    const index = (start + offset) % 131_072; // 2^17 subnets of 4 addresses in a /13
    const base = index * 4;
    const second = 200 + (base >> 16);
    const third = (base >> 8) & 255;
    const fourth = base & 255;
    const root = `10.${second}.${third}.${fourth + 1}`;
    const inner = `10.${second}.${third}.${fourth + 2}`;
    if (!used.includes(` ${root}/`) && !used.includes(` ${inner}/`)) return [root, inner];
  }
  throw new Error("no free /30 in 10.200.0.0/13");
}

/** Makes a namespace and its link (`probing`: and cuts and heals it once); deleted at `close()`, or when this process exits. */
export function makeNamespace(probing = false): NetworkNamespace {
  made += 1;
  const name = `tg${process.pid}n${made}`;
  const rootEnd = `tg${process.pid}r${made}`.slice(0, 15);
  const innerEnd = `tg${process.pid}i${made}`.slice(0, 15);
  const [rootAddress, innerAddress] = freeSubnet();
  let closed = false;
  const close = (): void => {
    if (closed) return;
    closed = true;
    process.removeListener("exit", close);
    spawnSync("ip", ["link", "del", rootEnd], { stdio: "ignore" });
    spawnSync("ip", ["netns", "del", name], { stdio: "ignore" });
  };
  process.once("exit", close);
  const cut = (): void => {
    run("tc", "qdisc", "replace", "dev", rootEnd, "root", "pfifo", "limit", "0");
    ip("netns", "exec", name, "tc", "qdisc", "replace", "dev", innerEnd, "root", "pfifo", "limit", "0");
  };
  const heal = (): void => {
    run("tc", "qdisc", "del", "dev", rootEnd, "root");
    ip("netns", "exec", name, "tc", "qdisc", "del", "dev", innerEnd, "root");
  };
  try {
    ip("netns", "add", name);
    ip("link", "add", rootEnd, "type", "veth", "peer", "name", innerEnd);
    ip("link", "set", innerEnd, "netns", name);
    ip("addr", "add", `${rootAddress}/30`, "dev", rootEnd);
    ip("link", "set", rootEnd, "up");
    ip("netns", "exec", name, "ip", "addr", "add", `${innerAddress}/30`, "dev", innerEnd);
    ip("netns", "exec", name, "ip", "link", "set", innerEnd, "up");
    ip("netns", "exec", name, "ip", "link", "set", "lo", "up");
    if (probing) {
      cut(); // a machine whose tc cannot do this cannot run the partition tests
      heal();
    }
  } catch (error) {
    close();
    throw error;
  }
  return {
    name,
    rootAddress,
    innerAddress,
    spawn: (command, args, options = {}) => spawn("ip", ["netns", "exec", name, command, ...args], options),
    cut,
    heal,
    close,
  };
}
