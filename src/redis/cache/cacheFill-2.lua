--[[
  cacheFill: stores what the lock's holder computed and lets the lock go, ringing its doorbell for the waiters;
  nothing is stored when the lock is no longer the caller's (its lease ran out, or a write invalidated the entry
  while it computed: the value may be older than the write).

  KEYS[1] value: string, 'v' + JSON, '-' (absent) or '~' (invalidated)
  KEYS[2] lock: string, the computing process's token, expiring with its lease
  ARGV[1] token: the caller's token
  ARGV[2] stored: what to store ('v' + JSON or '-')
  ARGV[3] ttlMs: how long it lives; 0: store nothing, only let the lock go (the computation failed)
  ARGV[4] bell: the entry's sharded pub/sub channel

  Returns 1 when stored (or let go), 0 when the lock was not the caller's (nothing written).
]]
local value, lock = KEYS[1], KEYS[2]
local token, stored, ttlMs, bell = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
if redis.call('GET', lock) ~= token then
  return 0
end
if ttlMs > 0 then
  redis.call('SET', value, stored, 'PX', ttlMs)
end
redis.call('DEL', lock)
-- A value no GET of the lock returns: every ring wakes the waiters' pollers.
redis.call('SPUBLISH', bell, lock .. ' filled:' .. token)
return 1
