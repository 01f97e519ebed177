--[[
  acquireWriteLock: takes the write lease when nobody holds the lock, with the next fencing token; refused, a caller
  that waits is recorded as a waiting writer (new readers queue behind it until its wait ends) and registered.

  KEYS[1] writer: string, the writer's token, expiring with its lease
  KEYS[2] readers: sorted set, reader token -> end of its lease (ms)
  KEYS[3] writers: sorted set, waiting writer token -> end of its wait (ms)
  KEYS[4] waited: string, exists while a waiter may wait (its PX: the longest wait registered)
  KEYS[5] fence: string, the lock's fencing counter
  ARGV[1] token: the writer's random token
  ARGV[2] leaseMs: the lease's length
  ARGV[3] waitMs: how long the caller waits if refused (0: it does not)

  Returns {fence} when taken, else {0, ms until what refused it ends (lib/rwlock rwHeldFor)}.
]]
--- @include lib/now
--- @include lib/rwlock
local writer, readers, writers, waited, fence = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local token, leaseMs, waitMs = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local now = nowMs()
if rwFree(writer, readers, writers, now) then
  redis.call('SET', writer, token, 'PX', leaseMs)
  redis.call('ZREM', writers, token)
  return { redis.call('INCR', fence) }
end
if waitMs > 0 then
  redis.call('ZADD', writers, now + waitMs, token)
  redis.call('PEXPIRE', writers, waitMs, 'GT')
  redis.call('PEXPIRE', writers, waitMs, 'NX')
  rwRegister(waited, waitMs)
end
return { 0, rwHeldFor(writer, readers, writers, now, false) }
