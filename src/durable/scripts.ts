// The Lua scripts of durable records, shared by redisDurableStore and the queue (which keeps
// its calls' records in its own Redis, under its prefix): one record format, one state
// machine. Each script is atomic and reads the time from Redis' own clock (TIME), so no
// process's clock decides a lease or a retention.
// docs/durable.md — The record's states, On the queue.
import type { QueueScript } from "../queue/scripts.js";

/** The field of a durable job's hash that HOST_FINISH sets to the job id when its outcome is the one recorded. */
export const HOST_RECORDED_FIELD = "toolgateRecorded";

// Shared by every script: the record's fields, read. A key that is not a hash (not toolgate's)
// answers "damaged" rather than failing the script.
const FIELDS = `
local function fields()
  local r = redis.pcall("HMGET", KEYS[1], "state", "fp", "tool", "attempt", "max", "outcome", "token", "lease", "cancel")
  if type(r) ~= "table" or r.err then return nil end
  return r
end
local function held(r) return r[1] == "running" or r[1] == "claimed" end
local function record(r) return {"record", r[1], r[2], r[3], r[4], r[5], r[6]} end
`;

// Shared by the scripts that read or write a lease: Redis' clock in ms, and the lease rule (a
// running record whose lease ran out is lost: its holder stopped renewing, and the tool may
// have run). A terminal write (SETTLE, STOP, HOST_FINISH) asks only who holds the record, not
// the time: its holder's write wins until another step found the lease expired and wrote so.
const PRELUDE = `${FIELDS}
local time = redis.call("TIME")
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local function ms(value) return string.format("%.0f", value) end
local function expire_lease(r)
  if held(r) and (tonumber(r[8]) or 0) < now then
    local state = "released"
    if r[1] == "running" then state = "lost" end
    redis.call("HSET", KEYS[1], "state", state)
    redis.call("HDEL", KEYS[1], "token", "lease", "cancel")
    r[1] = state
  end
end
`;

// KEYS: the record. ARGV: fingerprint, tool name, max attempts, token, lease ms, retention ms, state ("claimed" or "running").
// A claim of an existing record (released, or lost with attempts left) deletes it first, so no
// field of the earlier execution survives; a fresh key has nothing to delete.
export const CLAIM = `${PRELUDE}
local function claim(attempt, max, fresh)
  if not fresh then redis.call("DEL", KEYS[1]) end
  redis.call("HSET", KEYS[1], "v", "1", "state", ARGV[7], "fp", ARGV[1], "tool", ARGV[2], "attempt", tostring(attempt),
    "max", tostring(max), "token", ARGV[4], "lease", ms(now + tonumber(ARGV[5])), "cancel", "0")
  redis.call("PEXPIRE", KEYS[1], ARGV[6])
  return {"claimed", tostring(attempt)}
end
if redis.call("EXISTS", KEYS[1]) == 0 then return claim(1, ARGV[3], true) end
local r = fields()
if r == nil then return {"damaged"} end
if r[2] ~= ARGV[1] then return record(r) end
expire_lease(r)
if r[1] == "released" then return claim(tonumber(r[4]) or 1, ARGV[3]) end
if r[1] == "lost" then
  local attempt, max = tonumber(r[4]), tonumber(r[5])
  if attempt and max and attempt < max and max <= 100 then return claim(attempt + 1, max) end
end
return record(r)
`;

// KEYS: the record.
export const READ = `${PRELUDE}
if redis.call("EXISTS", KEYS[1]) == 0 then return {} end
local r = fields()
if r == nil then return {"damaged"} end
expire_lease(r)
return record(r)
`;

// KEYS: the record. ARGV: token, lease ms, retention ms.
export const RENEW = `${PRELUDE}
local r = fields()
if r == nil or not held(r) or r[7] ~= ARGV[1] then return "gone" end
if r[9] == "1" then return "cancelled" end
redis.call("HSET", KEYS[1], "lease", ms(now + tonumber(ARGV[2])))
redis.call("PEXPIRE", KEYS[1], ARGV[3])
return "held"
`;

// KEYS: the record. ARGV: token. A claim whose tool starts now; not if its lease lapsed or a stop was asked.
export const START = `${PRELUDE}
local r = fields()
if r == nil then return 0 end
expire_lease(r)
if r[1] ~= "claimed" or r[7] ~= ARGV[1] or r[9] == "1" then return 0 end
redis.call("HSET", KEYS[1], "state", "running")
return 1
`;

// KEYS: the record. ARGV: token, the state to write ("done", "released", "lost", or "forgotten": no record),
// outcome ("" unless done), retention ms, and "1" on the queue: there a claimed record is one no
// host has started yet, so whatever ends it (a time limit, an abort, a lost job) releases it.
// First terminal write wins: only the holder of a held record writes it.
export const SETTLE = `${FIELDS}
local r = fields()
if r == nil or not held(r) or r[7] ~= ARGV[1] then return 0 end
if ARGV[2] == "forgotten" then
  redis.call("DEL", KEYS[1])
  return 1
end
local state = ARGV[2]
if ARGV[5] == "1" and r[1] == "claimed" then state = "released" end
if state == "done" then
  redis.call("HDEL", KEYS[1], "token", "lease", "cancel")
  redis.call("HSET", KEYS[1], "state", state, "outcome", ARGV[3])
else
  redis.call("HDEL", KEYS[1], "token", "lease", "cancel", "outcome")
  redis.call("HSET", KEYS[1], "state", state)
end
redis.call("PEXPIRE", KEYS[1], ARGV[4])
return 1
`;

// KEYS: the record. ARGV: attempt, outcome ("" asks the holder to stop), retention ms.
export const STOP = `${FIELDS}
local r = fields()
if r == nil or not held(r) or r[4] ~= ARGV[1] then return 0 end
if ARGV[2] == "" then
  redis.call("HSET", KEYS[1], "cancel", "1")
else
  redis.call("HDEL", KEYS[1], "token", "lease", "cancel")
  redis.call("HSET", KEYS[1], "state", "done", "outcome", ARGV[2])
  redis.call("PEXPIRE", KEYS[1], ARGV[3])
end
return 1
`;

// The queue's agent renews a claim until a host starts it (KEYS: the record; ARGV: token, lease
// ms, retention ms). Once running, the lease is the host's: the agent only watches it (a host
// that died stops renewing, and the agent's next look finds the record lost: "gone").
export const WATCH = `${PRELUDE}
local r = fields()
if r == nil then return "gone" end
expire_lease(r)
if not held(r) or r[7] ~= ARGV[1] then return "gone" end
if r[9] == "1" then return "cancelled" end
if r[1] == "claimed" then
  redis.call("HSET", KEYS[1], "lease", ms(now + tonumber(ARGV[2])))
  redis.call("PEXPIRE", KEYS[1], ARGV[3])
end
return "held"
`;

// A queue host starts a durable job's tool (KEYS: the record; ARGV: the job id, which is the
// claim's token, the fingerprint of the call as the host read it, lease ms, retention ms): only
// a record claimed by this very job, its claim unexpired and not asked to stop, with the same
// fingerprint, becomes running (the host's lease from now on). Anything else is not started.
export const HOST_START = `${PRELUDE}
local r = fields()
if r == nil then return "damaged" end
expire_lease(r)
if r[1] ~= "claimed" or r[7] ~= ARGV[1] or r[9] == "1" then return "not-claimed" end
if r[2] ~= ARGV[2] then return "other-call" end
redis.call("HSET", KEYS[1], "state", "running", "lease", ms(now + tonumber(ARGV[3])))
redis.call("PEXPIRE", KEYS[1], ARGV[4])
return tonumber(r[4]) or 0
`;

// A queue host records its job's outcome (KEYS: the record, the job's hash; ARGV: the job id,
// which is the claim's token, the outcome, retention ms), sent on the connection BullMQ then
// completes the job on, without waiting for its answer: Redis runs it first. First terminal
// write wins, as SETTLE's "done" on the queue; the winner also marks the job's hash (when it is
// there) with the job id, so the agent that reads the job's result reads in the same HMGET
// whether that outcome is the recorded one. A job whose mark is absent is answered from the
// record. BullMQ ignores the extra field, and drops it with the hash.
export const HOST_FINISH = `${FIELDS}
local r = fields()
if r == nil or not held(r) or r[7] ~= ARGV[1] then return 0 end
if r[1] == "claimed" then
  redis.call("HDEL", KEYS[1], "token", "lease", "cancel", "outcome")
  redis.call("HSET", KEYS[1], "state", "released")
else
  redis.call("HDEL", KEYS[1], "token", "lease", "cancel")
  redis.call("HSET", KEYS[1], "state", "done", "outcome", ARGV[2])
  if redis.call("EXISTS", KEYS[2]) == 1 then redis.call("HSET", KEYS[2], "${HOST_RECORDED_FIELD}", ARGV[1]) end
end
redis.call("PEXPIRE", KEYS[1], ARGV[3])
return 1
`;

/**
 * Every script under the name ioredis defines it by on a client: sent by EVALSHA (runScript),
 * its text once per server, not with every step (a claim's text is about 1 kB).
 */
export const DURABLE_SCRIPTS = {
  claim: { name: "toolgateDurableClaim", lua: CLAIM },
  read: { name: "toolgateDurableRead", lua: READ },
  renew: { name: "toolgateDurableRenew", lua: RENEW },
  watch: { name: "toolgateDurableWatch", lua: WATCH },
  start: { name: "toolgateDurableStart", lua: START },
  hostStart: { name: "toolgateDurableHostStart", lua: HOST_START },
  hostFinish: { name: "toolgateDurableHostFinish", lua: HOST_FINISH },
  settle: { name: "toolgateDurableSettle", lua: SETTLE },
  stop: { name: "toolgateDurableStop", lua: STOP },
} as const satisfies Record<string, QueueScript>;
