// The queue's own Lua scripts (the heartbeat's job states, the cancels and the lease), sent by
// their SHA1: ioredis's defineCommand sends EVALSHA, and the script's text only once per
// server (after a NOSCRIPT: a server that restarted or flushed its scripts), as BullMQ sends
// its own. The text of a script is 400 to 700 bytes: with EVAL it travelled with every run.
// docs/queue.md — Redis commands per call.
import type { Redis } from "ioredis";
import { ObjectHasOwn, ReflectApply } from "../contract/primordials.js";

/** A script of ours: the name it is defined under on a client (prefixed: BullMQ defines its own on its clients) and its text. */
export interface QueueScript {
  readonly name: string;
  readonly lua: string;
}

/** Runs `script` on `client` with `keys` and `args` (EVALSHA; the text once per server). */
export function runScript(
  client: Redis,
  script: QueueScript,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  // Defined once per client; the number of keys comes first in each call, as EVAL takes it.
  if (!ObjectHasOwn(client, script.name)) client.defineCommand(script.name, { lua: script.lua });
  const command = (client as unknown as Record<string, (...values: unknown[]) => Promise<unknown>>)[script.name] as (
    ...values: unknown[]
  ) => Promise<unknown>;
  return ReflectApply(command, client, [keys.length, ...keys, ...args]) as Promise<unknown>;
}
