// `npm run demo:queue`: one scripted model turn through Redis. A `toolgate-worker` host
// process consumes a fresh queue; this process is the agent, with a QueueToolExecutor over
// the same tool module (demo/tools.ts). No network beyond the Redis at REDIS_URL (default
// redis://127.0.0.1:6379), no API key. One call is aborted mid-way (its tool ignores the
// signal: the host terminates its thread), one times out, and at the end the host is
// killed with SIGKILL mid-call to show what the agent gets then.
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import type { ToolCall, ToolResultMessage } from "toolgate";
import { QueueToolExecutor } from "toolgate/queue";

const TOOLS = new URL("./tools.js", import.meta.url);
const CLI = fileURLToPath(new URL("../src/queue/cli.js", import.meta.url));
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const QUEUE = `toolgate-demo-${randomUUID()}`;
const TIMEOUT_MS = 2000;
const LOCK_MS = 1000;
const ABORTED_CALL = "call_08";
const ABORT_AFTER_MS = 500;

const toolCall = (id: string, name: string, args: ToolCall["arguments"]): ToolCall => ({
  type: "toolCall",
  id,
  name,
  arguments: args,
});

const turn = [
  toolCall("call_01", "sha256", { bytes: 4 * 2 ** 20, seed: 7 }),
  toolCall("call_02", "countPrimes", { below: 300_000 }),
  toolCall("call_03", "parseJson", { text: '{"user":"ada","roles":["admin"]}' }),
  toolCall("call_04", "parseJson", { text: "{not json" }),
  toolCall("call_05", "fetchReport", { report: "weekly-sales", ms: 200 }),
  toolCall("call_06", "fetchReport", { report: "full-audit", ms: 10_000 }),
  toolCall("call_07", "hostileOutput", { kind: "getter" }),
  toolCall(ABORTED_CALL, "stubbornLoop", { ms: 60_000 }),
  toolCall("call_09", "getWeather", { city: "Hanoi" }),
  toolCall("call_10", "countPrimes", { below: "a lot" }),
];

function startHost(): Promise<ChildProcess> {
  const args = [CLI, "--redis", REDIS_URL, "--queue", QUEUE, "--threads", "2", "--abort-grace", "200"];
  const child = spawn(process.execPath, [...args, "--lock-duration", String(LOCK_MS), fileURLToPath(TOOLS)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    child.stdout?.setEncoding("utf8").once("data", (line: string) => {
      process.stdout.write(`host:  ${line}`);
      resolve(child);
    });
    child.once("exit", (code) => reject(new Error(`the host exited (code ${code})`)));
  });
}

function describe(outcome: PromiseSettledResult<ToolResultMessage>): { status: string; text: string } {
  if (outcome.status === "rejected") return { status: "rejected", text: String((outcome.reason as Error)?.message ?? outcome.reason) };
  const result = outcome.value;
  if (!result.isError) return { status: "ok", text: result.content };
  const { code, message } = (JSON.parse(result.content) as { error: { code: string; message: string } }).error;
  return { status: code, text: message };
}

const clip = (text: string, width = 70): string => {
  const points = [...text.replace(/\n/g, "⏎")];
  return points.length <= width ? points.join("") : `${points.slice(0, width - 1).join("")}…`;
};

async function main(): Promise<void> {
  console.log(`toolgate demo: one model turn, tool calls run by a worker host over Redis (${REDIS_URL}, queue ${QUEUE})\n`);
  const host = await startHost();
  let executor: QueueToolExecutor | undefined;
  try {
    executor = await QueueToolExecutor.create({ connection: REDIS_URL, queue: QUEUE, modules: [TOOLS], timeoutMs: TIMEOUT_MS });
    const agent = executor;
    console.log(
      `agent: ${turn.length} tool calls at once · timeout ${TIMEOUT_MS} ms · ${ABORTED_CALL} cancelled after ${ABORT_AFTER_MS} ms\n`,
    );
    const started = performance.now();
    const outcomes = await Promise.allSettled(
      turn.map((call) => {
        const controller = new AbortController();
        if (call.id === ABORTED_CALL)
          setTimeout(() => controller.abort(new DOMException("the user cancelled", "AbortError")), ABORT_AFTER_MS);
        const t0 = performance.now();
        return agent.executeToolCall(call, controller.signal).finally(() => {
          elapsed.set(call.id, performance.now() - t0);
        });
      }),
    );
    console.log(`${"call".padEnd(8)} ${"tool".padEnd(14)} ${"outcome".padEnd(33)} ${"ms".padStart(6)}  content`);
    turn.forEach((call, index) => {
      const { status, text } = describe(outcomes[index] as PromiseSettledResult<ToolResultMessage>);
      const ms = (elapsed.get(call.id) ?? 0).toFixed(0);
      console.log(`${call.id.padEnd(8)} ${call.name.padEnd(14)} ${status.padEnd(33)} ${ms.padStart(6)}  ${clip(text)}`);
    });
    console.log(`\nturn settled in ${(performance.now() - started).toFixed(0)} ms; every result frozen and linked to its call`);

    const follow = await agent.executeToolCall(toolCall("call_11", "sha256", { bytes: 1024, seed: 1 }), new AbortController().signal);
    console.log(`after: the host still serves (the spinning thread was terminated): call_11 -> ${follow.isError ? "error" : "ok"}`);

    // The host dies mid-call: the agent notices once the job's lock expires, and the call is not retried.
    const dying = agent.executeToolCall(toolCall("call_12", "fetchReport", { report: "slow", ms: 10_000 }), new AbortController().signal);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const killedAt = performance.now();
    host.kill("SIGKILL");
    const { status, text } = describe((await Promise.allSettled([dying]))[0] as PromiseSettledResult<ToolResultMessage>);
    console.log(
      `kill:  host SIGKILLed mid-call; call_12 -> ${status} after ${(performance.now() - killedAt).toFixed(0)} ms: ${clip(text, 90)}`,
    );
  } finally {
    await executor?.close();
    if (host.exitCode === null && host.signalCode === null) host.kill("SIGTERM");
  }
}

const elapsed = new Map<string, number>();

main().then(
  () => {
    process.exitCode = 0;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  },
);
