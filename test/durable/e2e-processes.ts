// The child processes of the cross-process durable tests (e2e-*.test.ts): a fixture started
// with its JSON config, its stdout read line by line, SIGKILLed by pid when the test says so,
// and every one still up ended when the test file ends.
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { redisUrl } from "./kit.js";

export interface FixtureProcess {
  readonly child: ChildProcess;
  /** The rest of the first line that starts with `prefix` (printed already or later); rejects if the process exits first. */
  line(prefix: string): Promise<string>;
  /** The JSON of the first line that starts with "{" (the fixture's report). */
  report<T>(): Promise<T>;
  /** Rejects when the process ends (never resolves): raced with a wait, a fixture that dies fails the test at once. */
  readonly alive: Promise<never>;
}

const running = new Set<ChildProcess>();

/** Starts `fixture` (a .mjs file) with `config` as its argument, the tests' Redis in its environment. */
export function startFixture(fixture: URL, config: unknown): FixtureProcess {
  const child = spawn(process.execPath, [fixture.pathname, JSON.stringify(config)], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, DURABLE_TEST_REDIS: redisUrl },
  });
  running.add(child);
  const lines: string[] = [];
  const waiters = new Set<{ prefix: string; resolve: (rest: string) => void; reject: (error: Error) => void }>();
  let exit: string | undefined;
  let ended: (error: Error) => void = () => {};
  const alive = new Promise<never>((_resolve, reject) => (ended = reject));
  alive.catch(() => {}); // awaited only while the test waits on something else
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on("line", (text) => {
    lines.push(text);
    for (const waiter of waiters) {
      if (!text.startsWith(waiter.prefix)) continue;
      waiters.delete(waiter);
      waiter.resolve(text.slice(waiter.prefix.length));
    }
  });
  // "close": the process is gone and its stdout read to the end, so every line it printed was seen.
  child.once("close", (code, signal) => {
    running.delete(child);
    exit = `${fixture.pathname.split("/").at(-1)} exited (${code ?? signal})`;
    for (const waiter of waiters) waiter.reject(new Error(`${exit} without a line starting with ${JSON.stringify(waiter.prefix)}`));
    waiters.clear();
    ended(new Error(exit));
  });
  const line = (prefix: string): Promise<string> => {
    const found = lines.find((text) => text.startsWith(prefix));
    if (found !== undefined) return Promise.resolve(found.slice(prefix.length));
    if (exit !== undefined) {
      return Promise.reject(new Error(`${exit} without a line starting with ${JSON.stringify(prefix)}`));
    }
    return new Promise((resolve, reject) => waiters.add({ prefix, resolve, reject }));
  };
  return { child, line, report: async <T>() => JSON.parse(`{${await line("{")}`) as T, alive };
}

/** SIGKILLs `child` by its pid and resolves once it is gone (at once if it already exited). */
export function killed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    process.kill(child.pid as number, "SIGKILL");
  });
}

/** Ends every fixture process still up (afterAll / afterEach). */
export async function killAll(): Promise<void> {
  await Promise.all([...running].map((child) => killed(child)));
}

/** `work`, failed at once if any of `processes` ends before it settles. */
export function whileUp<T>(work: Promise<T>, ...processes: readonly FixtureProcess[]): Promise<T> {
  return Promise.race([work, ...processes.map((each) => each.alive)]);
}
