// The least-privilege ACL rules of one queue, as docs/operations.md gives them ("Running Redis
// for toolgate"): the queue's keys and cancel channel, and the commands the agent, its hosts and
// BullMQ's scripts run (scripts run with their caller's permissions). The TLS/ACL suite proves
// them sufficient on a real server; keep the two in step.

/** Commands toolgate and BullMQ send, and those BullMQ's Lua scripts call. */
export const QUEUE_COMMANDS: readonly string[] = [
  // connections, pub/sub, scripts
  "ping",
  "info",
  "client|setname",
  "subscribe",
  "unsubscribe",
  "publish",
  "eval",
  "evalsha",
  "time",
  // sent by the agent and hosts, and called inside BullMQ's scripts
  "bzpopmin",
  "del",
  "exists",
  "get",
  "hdel",
  "hexists",
  "hget",
  "hgetall",
  "hincrby",
  "hlen",
  "hmget",
  "hmset",
  "hset",
  "incr",
  "incrby",
  "lindex",
  "llen",
  "lpop",
  "lpos",
  "lpush",
  "lrange",
  "lrem",
  "lset",
  "ltrim",
  "mget",
  "pexpire",
  "pexpireat",
  "pttl",
  "rename",
  "rpop",
  "rpoplpush",
  "rpush",
  "sadd",
  "scard",
  "set",
  "sismember",
  "smembers",
  "srem",
  "type",
  "unlink",
  "xadd",
  "xdel",
  "xlen",
  "xrange",
  "xread",
  "xrevrange",
  "xtrim",
  "zadd",
  "zcard",
  "zcount",
  "zlexcount",
  "zpopmin",
  "zrange",
  "zrangebylex",
  "zrangebyscore",
  "zrem",
  "zremrangebyrank",
  "zremrangebyscore",
  "zrevrange",
  "zrevrangebyscore",
  "zscore",
];

/** On a Redis Cluster, ioredis also reads the slot map. */
export const CLUSTER_COMMANDS: readonly string[] = ["cluster|slots", "cluster|info"];

/** The rules of a user of queue `queue` under `prefix`: its keys, its cancel channel, the commands; nothing else. */
export function queueAclRules(prefix: string, queue: string, { cluster = false } = {}): string[] {
  return [
    `~${prefix}:${queue}:*`,
    `&${prefix}:${queue}:toolgate:cancel`,
    ...[...QUEUE_COMMANDS, ...(cluster ? CLUSTER_COMMANDS : [])].map((command) => `+${command}`),
  ];
}
