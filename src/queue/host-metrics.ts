// What an operator watches on a worker host: its calls (by tool and outcome, and how long they
// took), its threads (busy, total, killed), the jobs waiting for a thread, Redis reconnections,
// and whether it is alive and ready. Served over HTTP when `metricsPort` is given: GET /metrics
// (Prometheus text format 0.0.4), /healthz (the process answers), /readyz (Redis connected, the
// threads booted and the host taking jobs; 503 while one is lost, with the reason when the host,
// connected, takes no jobs (fetch-watchdog.ts), or once the host closes).
// docs/queue.md — Watching a host (metrics and health).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { CallEndEvent, ThreadKilledEvent, ToolExecutorHooks } from "../executor/hooks.js";

/** Upper bounds of the call duration histogram, in seconds. */
const DURATION_BUCKETS = Object.freeze([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]);
/** Distinct tool names counted, at most (the registry's, in practice; a bound all the same). */
const MAX_TOOLS = 1024;

interface ToolFigures {
  readonly outcomes: Map<string, number>;
  readonly buckets: number[];
  count: number;
  sumSeconds: number;
}

/** What the host tells the metrics of its state when they are read. */
export interface HostState {
  readonly threads: number;
  threadsBusy(): number;
  jobsWaitingForThread(): number;
  /** Every Redis client of the host is connected, and the host is not closing. */
  ready(): boolean;
  /** Why the host, connected, takes no jobs (its fetch watchdog's finding), or undefined. */
  stalled(): string | undefined;
}

export class HostMetrics {
  readonly #tools = new Map<string, ToolFigures>();
  #threadKills = 0;
  #redisReconnects = 0;
  #fetchStalls = 0;

  constructor(readonly state: HostState) {}

  /** `inner` (the host's own hooks) and these figures, as the host executor's hooks. */
  hooksOver(inner: ToolExecutorHooks): ToolExecutorHooks {
    return {
      onCallEnd: (event: CallEndEvent) => {
        inner.onCallEnd?.(event);
        this.callEnded(event);
      },
      onThreadKilled: (event: ThreadKilledEvent) => {
        inner.onThreadKilled?.(event);
        this.threadKilled(event);
      },
    };
  }

  /** The host executor's onCallEnd: one call of a tool ended. */
  callEnded(event: CallEndEvent): void {
    let figures = this.#tools.get(event.toolName);
    if (figures === undefined) {
      if (this.#tools.size >= MAX_TOOLS) return;
      figures = { outcomes: new Map(), buckets: DURATION_BUCKETS.map(() => 0), count: 0, sumSeconds: 0 };
      this.#tools.set(event.toolName, figures);
    }
    figures.outcomes.set(event.outcome, (figures.outcomes.get(event.outcome) ?? 0) + 1);
    const seconds = event.durationMs / 1000;
    figures.count += 1;
    figures.sumSeconds += seconds;
    for (let index = 0; index < DURATION_BUCKETS.length; index += 1) {
      if (seconds <= (DURATION_BUCKETS[index] as number)) figures.buckets[index] = (figures.buckets[index] as number) + 1;
    }
    if (event.threadKilled) this.#threadKills += 1;
  }

  /** The host executor's onThreadKilled: a thread terminated after its call had settled. */
  threadKilled(_event: ThreadKilledEvent): void {
    this.#threadKills += 1;
  }

  /** A Redis client of the host is reconnecting. */
  redisReconnecting(): void {
    this.#redisReconnects += 1;
  }

  /** The host found itself stuck (fetch-watchdog.ts) and made its connections again. */
  fetchStalled(): void {
    this.#fetchStalls += 1;
  }

  /**
   * undefined when ready, else why not: the watchdog's finding (it stands while the host makes its
   * connections again), or "" when a Redis connection is down or the host closes.
   */
  #unready(): string | undefined {
    const stalled = this.state.stalled();
    if (stalled !== undefined) return stalled;
    return this.state.ready() ? undefined : "";
  }

  /** The Prometheus text exposition of every figure. */
  render(): string {
    const lines: string[] = [];
    lines.push("# HELP toolgate_host_calls_total Calls run by this host, by tool and outcome.");
    lines.push("# TYPE toolgate_host_calls_total counter");
    for (const [tool, figures] of this.#tools) {
      for (const [outcome, count] of figures.outcomes)
        lines.push(`toolgate_host_calls_total{tool="${label(tool)}",outcome="${outcome}"} ${count}`);
    }
    lines.push("# HELP toolgate_host_call_duration_seconds Time from a call's start on this host to its end, by tool.");
    lines.push("# TYPE toolgate_host_call_duration_seconds histogram");
    for (const [tool, figures] of this.#tools) {
      const name = label(tool);
      for (let index = 0; index < DURATION_BUCKETS.length; index += 1) {
        lines.push(`toolgate_host_call_duration_seconds_bucket{tool="${name}",le="${DURATION_BUCKETS[index]}"} ${figures.buckets[index]}`);
      }
      lines.push(`toolgate_host_call_duration_seconds_bucket{tool="${name}",le="+Inf"} ${figures.count}`);
      lines.push(`toolgate_host_call_duration_seconds_sum{tool="${name}"} ${figures.sumSeconds}`);
      lines.push(`toolgate_host_call_duration_seconds_count{tool="${name}"} ${figures.count}`);
    }
    const gauge = (name: string, help: string, value: number): void => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${value}`);
    };
    const counter = (name: string, help: string, value: number): void => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`, `${name} ${value}`);
    };
    gauge("toolgate_host_threads", "Worker threads of this host.", this.state.threads);
    gauge("toolgate_host_threads_busy", "Worker threads running a job now.", this.state.threadsBusy());
    gauge(
      "toolgate_host_jobs_waiting_for_thread",
      "Jobs taken from the queue and waiting for a free thread.",
      this.state.jobsWaitingForThread(),
    );
    counter(
      "toolgate_host_thread_kills_total",
      "Threads terminated under or after a call (a timeout or abort ignored, a crash).",
      this.#threadKills,
    );
    counter(
      "toolgate_host_redis_reconnects_total",
      "Times a Redis connection of this host was lost and tried again.",
      this.#redisReconnects,
    );
    counter(
      "toolgate_host_fetch_stalls_total",
      "Times this host, connected, found itself taking no jobs while jobs waited (or its check unanswered) and made its connections again.",
      this.#fetchStalls,
    );
    gauge(
      "toolgate_host_ready",
      "1 while Redis is connected, the threads are up and the host takes jobs, else 0.",
      this.#unready() === undefined ? 1 : 0,
    );
    return `${lines.join("\n")}\n`;
  }

  /** Serves /metrics, /healthz and /readyz on `port` (0: any free port); resolves with the server once it listens. */
  serve(port: number): Promise<Server> {
    const server = createServer((request: IncomingMessage, response: ServerResponse) => this.#answer(request, response));
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, () => {
        server.off("error", reject);
        resolve(server);
      });
    });
  }

  #answer(request: IncomingMessage, response: ServerResponse): void {
    const path = (request.url ?? "/").split("?")[0];
    if (request.method !== "GET" && request.method !== "HEAD") reply(response, 405, "only GET and HEAD\n");
    else if (path === "/metrics") reply(response, 200, this.render(), "text/plain; version=0.0.4; charset=utf-8");
    else if (path === "/healthz") reply(response, 200, "ok\n");
    else if (path === "/readyz") {
      const unready = this.#unready();
      if (unready === undefined) reply(response, 200, "ready\n");
      else reply(response, 503, unready === "" ? "not ready\n" : `not ready: ${unready}\n`);
    } else reply(response, 404, "not found: /metrics, /healthz, /readyz\n");
  }
}

/** Stops `server` and the connections it holds (a scraper's keep-alive one). */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function reply(response: ServerResponse, status: number, body: string, type = "text/plain; charset=utf-8"): void {
  response.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) });
  response.end(body);
}

/** A label value escaped as the text format says (backslash, double quote, line feed). */
function label(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}
