// `npm start`: one scripted model turn through the worker-pool tool boundary. No network,
// no API key. The "model" asks for 14 tool calls at once: real work, a slow report, hostile
// output, a tool that ignores cancellation, an unknown tool and invalid arguments. The
// calls run in a WorkerToolExecutor with a live progress line; one call is aborted mid-way.
import { availableParallelism } from "node:os";
import { Limits, type ToolCall, type ToolResultMessage } from "toolgate";
import { WorkerToolExecutor } from "toolgate/worker";

const TOOLS = new URL("./tools.js", import.meta.url);
/** Two of the calls only wait on timers, so the pool gets a few more threads than cores. */
const THREADS = Math.max(4, availableParallelism());
const TIMEOUT_MS = 2000;
const ABORT_GRACE_MS = 200;
/** The call the user cancels, and how long after it starts running. */
const ABORTED_CALL = "call_10";
const ABORT_AFTER_MS = 500;

const toolCall = (id: string, name: string, args: ToolCall["arguments"]): ToolCall => ({
  type: "toolCall",
  id,
  name,
  arguments: args,
});

// What a model layer hands over after normalizing the assistant message.
const turn = {
  text: "Let me hash the upload, count the primes, parse both payloads, pull the two reports and look at the odd tools, all at once.",
  toolCalls: [
    toolCall("call_01", "sha256", { bytes: 16 * 2 ** 20, seed: 7 }),
    toolCall("call_02", "countPrimes", { below: 1_000_000 }),
    toolCall("call_03", "parseJson", { text: '{"user":"ada","roles":["admin","dev"],"active":true}' }),
    toolCall("call_04", "parseJson", { text: '{"user": "bob", "roles": [admin]}' }),
    toolCall("call_05", "fetchReport", { report: "weekly-sales", ms: 300 }),
    toolCall("call_06", "fetchReport", { report: "full-audit", ms: 10_000 }),
    toolCall("call_07", "hostileOutput", { kind: "getter" }),
    toolCall("call_08", "hostileOutput", { kind: "proxy" }),
    toolCall("call_09", "hostileOutput", { kind: "huge" }),
    toolCall("call_10", "stubbornLoop", { ms: 60_000 }),
    toolCall("call_11", "getWeather", { city: "Hanoi" }),
    toolCall("call_12", "countPrimes", { below: "a lot" }),
    toolCall("call_13", "sha256", { bytes: 1024, seed: 1 }),
    toolCall("call_14", "countPrimes", { below: 300_000 }),
  ],
};

type State = "queued" | "running" | "done";
interface Row {
  readonly call: ToolCall;
  state: State;
  startedAt?: number;
  endedAt?: number;
  result?: ToolResultMessage;
  rejection?: unknown;
  abortedAt?: number;
}

const tty = process.stdout.isTTY === true;
const t0 = performance.now();
const elapsed = (): string => `${((performance.now() - t0) / 1000).toFixed(1).padStart(4)}s`;

function progressLine(rows: readonly Row[]): string {
  const count = (state: State) => rows.filter((row) => row.state === state).length;
  return `[${elapsed()}] done ${count("done")}/${rows.length} · running ${count("running")} · queued ${count("queued")}`;
}

async function main(): Promise<void> {
  console.log("toolgate demo: one model turn, tool calls run in a worker pool\n");
  console.log(`assistant: ${turn.text}`);
  console.log(`           (${turn.toolCalls.length} tool calls)\n`);

  const executor = await WorkerToolExecutor.create({
    modules: [TOOLS],
    minThreads: THREADS,
    maxThreads: THREADS,
    timeoutMs: TIMEOUT_MS,
    abortGraceMs: ABORT_GRACE_MS,
  });
  console.log(
    `pool: up to ${THREADS} threads · per-call timeout ${TIMEOUT_MS} ms · abortGraceMs ${ABORT_GRACE_MS} · ${ABORTED_CALL} is cancelled ${ABORT_AFTER_MS} ms after it starts\n`,
  );

  const rows: Row[] = turn.toolCalls.map((call) => ({ call, state: "queued" }));
  let printedDone = -1;
  const render = (): void => {
    if (tty) {
      process.stdout.write(`\r\x1b[2K${progressLine(rows)}`);
      return;
    }
    // Not a terminal (a pipe, a CI log): a plain line whenever a call finishes.
    const done = rows.filter((row) => row.state === "done").length;
    if (done === printedDone) return;
    printedDone = done;
    console.log(progressLine(rows));
  };
  const ticker = tty ? setInterval(render, 100) : undefined;

  // Calls start at most THREADS at a time (the executor would queue the rest itself; doing it
  // here lets the progress line tell "running" from "queued").
  let next = 0;
  await new Promise<void>((resolve) => {
    let settled = 0;
    const launch = (): void => {
      while (next < rows.length && rows.filter((row) => row.state === "running").length < THREADS) {
        const row = rows[next] as Row;
        next += 1;
        const controller = new AbortController();
        row.state = "running";
        row.startedAt = performance.now();
        if (row.call.id === ABORTED_CALL) {
          setTimeout(() => {
            row.abortedAt = performance.now();
            controller.abort(new DOMException("the user cancelled this call", "AbortError"));
          }, ABORT_AFTER_MS);
        }
        executor
          .executeToolCall(row.call, controller.signal)
          .then(
            (result) => {
              row.result = result;
            },
            (reason: unknown) => {
              row.rejection = reason;
            },
          )
          .finally(() => {
            row.state = "done";
            row.endedAt = performance.now();
            settled += 1;
            render();
            if (settled === rows.length) resolve();
            else launch();
          });
      }
      render();
    };
    launch();
  });
  if (ticker !== undefined) clearInterval(ticker);
  if (tty) process.stdout.write(`\r\x1b[2K${progressLine(rows)}\n`);

  console.log("");
  printTable(rows);

  // The pool survived the spinning tool: its thread was terminated after the grace period and replaced.
  const followUpStart = performance.now();
  const followUp = await executor.executeToolCall(toolCall("call_15", "sha256", { bytes: 4096, seed: 3 }), new AbortController().signal);
  const followUpMs = performance.now() - followUpStart;
  // close() waits for every accepted task: it returns quickly only because the spinning
  // tool's thread was terminated (otherwise it would spin for its full 60 s).
  const closeStart = performance.now();
  await executor.close();
  const closeMs = performance.now() - closeStart;

  const aborted = rows.find((row) => row.call.id === ABORTED_CALL) as Row;
  const messages = rows.flatMap((row) => (row.result === undefined ? [] : [row.result]));
  console.log("");
  console.log(
    `transcript: ${messages.length} tool-result messages, all frozen: ${messages.every((m) => Object.isFrozen(m))}, each linked to its call: ${messages.every((m) => m.id === `tool-result-${m.toolCallId}`)}`,
  );
  console.log(
    `            ${rows.length - messages.length} call(s) without a message: aborted calls reject with the abort reason and publish nothing`,
  );
  if (aborted.abortedAt !== undefined && aborted.endedAt !== undefined) {
    console.log(
      `abort:      ${ABORTED_CALL} (${aborted.call.name}) ignores its signal; its promise rejected ${(aborted.endedAt - aborted.abortedAt).toFixed(1)} ms after abort(), ` +
        `and the executor terminated its thread after abortGraceMs (${ABORT_GRACE_MS} ms) and started a fresh one`,
    );
  }
  console.log(
    `after:      the pool still serves: ${followUp.toolName} -> ${followUp.isError ? "error" : "ok"} in ${followUpMs.toFixed(1)} ms`,
  );
  console.log(`close:      drained in ${closeMs.toFixed(1)} ms: nothing is still spinning`);
}

function outcomeOf(row: Row): string {
  if (row.rejection !== undefined) {
    const name = (row.rejection as { name?: unknown } | null)?.name;
    return name === "AbortError" ? "aborted" : `rejected (${String(name ?? row.rejection)})`;
  }
  const result = row.result as ToolResultMessage;
  if (!result.isError) return result.content.endsWith(Limits.TRUNCATION_MARKER) ? "ok (truncated)" : "ok";
  try {
    return (JSON.parse(result.content) as { error: { code: string } }).error.code;
  } catch {
    return "error";
  }
}

function previewOf(row: Row, width: number): string {
  let text: string;
  if (row.rejection !== undefined) text = String((row.rejection as { message?: unknown } | null)?.message ?? row.rejection);
  else {
    const content = (row.result as ToolResultMessage).content;
    if (row.result?.isError === true) {
      try {
        text = (JSON.parse(content) as { error: { message: string } }).error.message;
      } catch {
        text = content;
      }
    } else {
      text = content;
    }
  }
  const points = [...text.replace(/\n/g, "⏎")];
  return points.length <= width ? points.join("") : `${points.slice(0, width - 1).join("")}…`;
}

function printTable(rows: readonly Row[]): void {
  const width = Math.max(40, Math.min(72, (process.stdout.columns ?? 140) - 69));
  const table = rows.map((row) => [
    row.call.id,
    row.call.name,
    outcomeOf(row),
    ((row.endedAt ?? 0) - (row.startedAt ?? 0)).toFixed(0).padStart(5),
    row.result === undefined ? "    -" : String([...row.result.content].length).padStart(5),
    previewOf(row, width),
  ]);
  const header = ["call", "tool", "outcome", "   ms", "chars", "content"];
  const widths = header.map((cell, column) => Math.max(cell.length, ...table.map((cells) => [...(cells[column] as string)].length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell + " ".repeat((widths[column] as number) - [...cell].length))
      .join("  ")
      .trimEnd();
  console.log(line(header));
  console.log(line(widths.map((w) => "-".repeat(w))));
  for (const cells of table) console.log(line(cells));
}

main().then(
  () => {
    process.exitCode = 0;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
