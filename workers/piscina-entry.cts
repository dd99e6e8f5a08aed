// The file Piscina loads in each thread. Piscina require()s its entry first, and on Node ≥ 20.19
// require() loads an ES module synchronously: a thread terminated while that module graph is
// being linked aborts the whole process (a Node fatal error, "IsGraphAsync must be used on an
// instantiated module"). Threads are terminated while they boot (close(), a replaced thread),
// so the entry Piscina sees is CommonJS, and it imports the real entry the asynchronous way.
// It is also the thread's one door to Piscina: how a reply's attachment buffers are moved
// (Piscina's transferable protocol) is said here, and tool-worker.ts knows no pool.
// docs/contract.md: rule W5 — faults are results (a thread terminated while it boots kills only that thread).

import type { WorkerOutcome, WorkerReply } from "../src/worker/protocol.js";
import type { TransferSender } from "./tool-worker.js";

// Piscina's transferable protocol keys (registered symbols, so they need no import).
const TRANSFERABLE = Symbol.for("Piscina.transferable");
const VALUE = Symbol.for("Piscina.valueOf");

/** Piscina's transferable protocol: it posts the value with these buffers in the transfer list. */
class Transferred {
  // biome-ignore lint/suspicious/noThenProperty: Piscina awaits what a task returns: a planted `then` must not adopt it.
  readonly then = undefined;
  constructor(
    readonly reply: WorkerOutcome,
    readonly buffers: readonly ArrayBuffer[],
  ) {}
  get [TRANSFERABLE](): readonly ArrayBuffer[] {
    return this.buffers;
  }
  get [VALUE](): WorkerOutcome {
    return this.reply;
  }
}

/** Piscina's `move()`, once loaded: marks a value whose transfer list Piscina is to use. */
let markMovable: ((value: Transferred) => unknown) | undefined;

const sendWithTransfer: TransferSender = (reply, transfer) => {
  const transferred = new Transferred(reply, transfer);
  if (markMovable !== undefined) return markMovable(transferred) as WorkerReply;
  return moveOnceLoaded(transferred);
};

/**
 * Piscina is loaded on the first reply with attachments, not at thread start: its main module
 * costs every new thread tens of milliseconds, and most threads never send an attachment.
 * Awaited, not `.then`: awaiting a native promise looks up no `then` a tool may have planted.
 */
async function moveOnceLoaded(transferred: Transferred): Promise<WorkerReply> {
  const piscina = await import("piscina");
  const move = piscina.move as unknown as (value: Transferred) => unknown; // our keys are its registered symbols
  markMovable = move;
  return move(transferred) as WorkerReply;
}

export = import("./tool-worker.js").then((entry) => {
  entry.useTransfer(sendWithTransfer);
  return entry.default;
});
