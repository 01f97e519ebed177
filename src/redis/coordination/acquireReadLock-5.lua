--[[
  acquireReadLock: takes a read lease when no writer holds the lock and none waits for it (so a stream of readers
  cannot starve a writer), with the next fencing token; refused, a caller that waits is registered in the same step.

  KEYS[1] writer: string, the writer's token, expiring with its lease
  KEYS[2] readers: sorted set, reader token -> end of its lease (ms)
  KEYS[3] writers: sorted set, waiting writer token -> end of its wait (ms)
  KEYS[4] waited: string, exists while a waiter may wait (its PX: the longest wait registered)
  KEYS[5] fence: string, the lock's fencing counter
  ARGV[1] token: the reader's random token
  ARGV[2] leaseMs: the lease's length
  ARGV[3] waitMs: how long the caller waits if refused (0: it does not)

  Returns {fence} when taken, else {0, ms until what refused it ends (lib/rwlock rwHeldFor)}.
]]
--- @include lib/now
--- @include lib/rwlock
local writer, readers, writers, waited, fence = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local token, leaseMs, waitMs = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local now = nowMs()
rwFree(writer, readers, writers, now)
if redis.call('EXISTS', writer) == 0 and redis.call('ZCARD', writers) == 0 then
  redis.call('ZADD', readers, now + leaseMs, token)
  rwExpireReaders(readers)
  return { redis.call('INCR', fence) }
end
rwRegister(waited, waitMs)
return { 0, rwHeldFor(writer, readers, writers, now, true) }
