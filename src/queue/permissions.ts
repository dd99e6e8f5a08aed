// What the connection's Redis user may do, checked once at startup: an ACL user without a
// command the queue runs, or without the queue's keys or cancel channel, would otherwise fail
// later and elsewhere (a job failing inside a BullMQ script, a host that never takes a job).
// One script asks Redis (`redis.acl_check_cmd`, Redis 7) about a command of each kind the
// queue runs, on the queue's own names, and answers the ones refused; nothing is written.
// docs/operations.md — Running Redis for toolgate (least-privilege ACL rules).
import type { Redis } from "ioredis";
import { ContractErrorCode } from "../contract/constants.js";
import { ToolContractError } from "../contract/errors.js";
import { ArrayIsArray, ArrayPrototypeJoin } from "../contract/primordials.js";
import { describeFailure } from "../contract/untrusted.js";
import { closeRedis, describeServer, refusalOf } from "./connection.js";
import type { QueueKeys } from "./keys.js";
import type { QueueConnection } from "./options.js";

// KEYS: one name of the queue (routes the script to the queue's slot on a Cluster).
// ARGV: commands, each as its word count then its words. Answers the refused ones, words joined
// by spaces. A server without acl_check_cmd (before Redis 7) answers nothing: it is not checked.
const PROBE_SCRIPT = `
if redis.acl_check_cmd == nil then return {} end
local refused = {}
local index = 1
while index <= #ARGV do
  local count = tonumber(ARGV[index])
  local words = {}
  for word = 1, count do words[word] = ARGV[index + word] end
  if not redis.acl_check_cmd(unpack(words)) then refused[#refused + 1] = table.concat(words, " ") end
  index = index + count + 1
end
return refused
`;

/** A command of each kind the agent, its hosts and BullMQ's scripts run, on the queue's names. */
function probedCommands(keys: QueueKeys): string[][] {
  const job = keys.job("tg-probe");
  const mark = keys.mark("tg-probe");
  return [
    ["evalsha", "0000000000000000000000000000000000000000", "1", keys.wait],
    ["info"],
    ["client", "setname", "toolgate"],
    ["publish", keys.cancelChannel, "probe"],
    ["subscribe", keys.cancelChannel],
    ["time"],
    ["hset", job, "field", "value"],
    ["hgetall", job],
    ["hincrby", job, "field", "1"],
    ["del", job],
    ["exists", job],
    ["pexpire", keys.lock("tg-probe"), "1"],
    ["lpush", keys.wait, "tg-probe"],
    ["lrem", keys.wait, "0", "tg-probe"],
    ["rpoplpush", keys.wait, keys.paused],
    ["lrange", keys.paused, "0", "-1"],
    ["zadd", keys.wait, "0", "tg-probe"],
    ["zrangebyscore", keys.wait, "0", "1"],
    ["bzpopmin", keys.wait, "1"],
    ["sadd", keys.wait, "tg-probe"],
    ["smembers", keys.wait],
    ["xadd", keys.events, "*", "event", "probe"],
    ["xread", "COUNT", "1", "STREAMS", keys.events, "0"],
    ["xrevrange", keys.events, "+", "-"],
    ["xtrim", keys.events, "MAXLEN", "1"],
    ["set", mark, "x"],
    ["get", mark],
    ["mget", mark, keys.lease("tg-probe")],
  ];
}

/**
 * Asks Redis whether the connection's user may run what the queue runs, on the queue's names,
 * within `timeoutMs`. On a refusal (or a NOPERM for the probe itself) disconnects `client` and
 * throws ToolContractError(INVALID_ARGUMENT) naming the user, the refused commands and keys.
 * A probe that Redis does not answer in time is left to the calls (a slow server is not a refusal).
 */
export async function checkPermissions(client: Redis, keys: QueueKeys, connection: QueueConnection, timeoutMs: number): Promise<void> {
  const args: string[] = [];
  for (const words of probedCommands(keys)) args.push(String(words.length), ...words);
  let timer: NodeJS.Timeout | undefined;
  let refused: string[];
  try {
    const reply: unknown = await Promise.race([
      client.eval(PROBE_SCRIPT, 1, keys.wait, ...args),
      new Promise((resolve) => {
        timer = setTimeout(() => resolve([]), timeoutMs);
      }),
    ]);
    refused = ArrayIsArray(reply) ? reply.filter((line): line is string => typeof line === "string") : [];
  } catch (error) {
    if (refusalOf(error) === undefined) return; // not a permission: the calls meet it, and say so
    await closeRedis(client);
    throw new ToolContractError(
      ContractErrorCode.INVALID_ARGUMENT,
      `the Redis at ${describeServer(connection)} refused ${userOf(connection)} the queue's scripts (EVAL on ${keys.wait}): ${describeFailure(error).text}; docs/operations.md lists the ACL rules a queue needs`,
      { cause: error },
    );
  } finally {
    clearTimeout(timer);
  }
  if (refused.length === 0) return;
  await closeRedis(client);
  throw new ToolContractError(
    ContractErrorCode.INVALID_ARGUMENT,
    `the Redis at ${describeServer(connection)} forbids ${userOf(connection)} commands or names the queue ${keys.queue} needs (its ACL refuses: ${ArrayPrototypeJoin(
      refused.slice(0, 5),
      "; ",
    )}${refused.length > 5 ? `; and ${refused.length - 5} more` : ""}); docs/operations.md lists the ACL rules a queue needs`,
  );
}

/** "the user "name"" as the connection names it (never its password), or "the default user". */
function userOf(connection: QueueConnection): string {
  let name: unknown;
  if (typeof connection === "string" || connection.url !== undefined) {
    try {
      name = decodeURIComponent(new URL(typeof connection === "string" ? connection : String(connection.url)).username);
    } catch {
      name = "";
    }
  }
  if (typeof connection === "object" && connection.username !== undefined) name = connection.username;
  return typeof name === "string" && name !== "" ? `the user ${JSON.stringify(name)}` : "the default user";
}
