// A TCP proxy between Redis clients and a redis-server, for silent network partitions: on
// `cut()` it stops forwarding bytes both ways without closing any socket (no RST, no FIN), as
// a link whose packets are lost does; what arrives meanwhile is held, and `heal()` delivers it,
// as TCP's retransmissions would once the link is back. Kills and restarts are not this.
import { connect, createServer, type Server, type Socket } from "node:net";

export interface PartitionProxy {
  /** The proxy's redis:// URL (loopback). */
  readonly url: string;
  /** Black-holes every connection, open and new, both ways. */
  cut(): void;
  /** Delivers what was held and forwards again. */
  heal(): void;
  /**
   * Black-holes for good the connections open now that were accepted `from`-th (0-based) or
   * later, both ways; later connections are forwarded (a client's old links are dead, a new link
   * works: a failover behind a partition). Returns the local ports of their upstream sockets,
   * which Redis's CLIENT LIST shows as each client's `addr`.
   */
  blackHoleOpen(from?: number): number[];
  /**
   * While on, new connections are accepted and held (nothing forwarded either way, as for a
   * link that cannot get through yet); off: what they held is delivered and they forward.
   */
  holdNew(on: boolean): void;
  /** Destroys every connection and stops listening. */
  close(): Promise<void>;
}

/** One direction of one connection: bytes go to `to`, or wait while the link is cut. */
class Pipe {
  readonly #held: Buffer[] = [];
  constructor(
    readonly to: Socket,
    readonly isCut: () => boolean,
  ) {}
  push(chunk: Buffer): void {
    if (this.isCut()) this.#held.push(chunk);
    else this.to.write(chunk);
  }
  flush(): void {
    if (this.isCut()) return;
    for (const chunk of this.#held.splice(0)) this.to.write(chunk);
  }
}

export async function startPartitionProxy(targetPort: number): Promise<PartitionProxy> {
  let cut = false;
  const sockets = new Set<Socket>();
  const pipes = new Set<Pipe>();
  const links: { readonly index: number; readonly upstream: Socket; holed: boolean; held: boolean }[] = [];
  let holdingNew = false;
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, "127.0.0.1");
    const link = { index: links.length, upstream, holed: false, held: holdingNew };
    links.push(link);
    const isLinkCut = (): boolean => cut || link.holed || link.held;
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => {
        sockets.delete(socket);
        // A real end of one side (not a partition) ends the other.
        client.destroy();
        upstream.destroy();
      });
    }
    const up = new Pipe(upstream, isLinkCut);
    const down = new Pipe(client, isLinkCut);
    pipes.add(up).add(down);
    client.on("data", (chunk: Buffer) => up.push(chunk));
    upstream.on("data", (chunk: Buffer) => down.push(chunk));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    url: `redis://127.0.0.1:${port}`,
    cut() {
      cut = true;
    },
    heal() {
      cut = false;
      for (const pipe of pipes) pipe.flush();
    },
    blackHoleOpen(from = 0) {
      const holed = links.filter((link) => link.index >= from && !link.upstream.destroyed);
      for (const link of holed) link.holed = true;
      return holed.map((link) => link.upstream.localPort as number);
    },
    holdNew(on) {
      holdingNew = on;
      if (on) return;
      for (const link of links) link.held = false;
      for (const pipe of pipes) pipe.flush();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
