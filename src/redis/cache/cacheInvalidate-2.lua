--[[
  cacheInvalidate: a write changed what the entry holds: the entry becomes a short tombstone (a miss, which a
  negative entry written without the lock cannot replace: SET NX), and a computation under way loses its lock, so
  that what it computed before the write is not stored; its waiters are woken to compute again.

  KEYS[1] value: string, 'v' + JSON, '-' (absent) or '~' (invalidated)
  KEYS[2] lock: string, the computing process's token, expiring with its lease
  ARGV[1] tombstoneMs: how long the tombstone lives (longer than any lookup's read and write)
  ARGV[2] bell: the entry's sharded pub/sub channel

  Returns 1 when a computation was under way, else 0.
]]
local value, lock = KEYS[1], KEYS[2]
local tombstoneMs, bell = ARGV[1], ARGV[2]
redis.call('SET', value, '~', 'PX', tombstoneMs)
if redis.call('DEL', lock) == 0 then
  return 0
end
redis.call('SPUBLISH', bell, lock .. ' invalidated')
return 1
