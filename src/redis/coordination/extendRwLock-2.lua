--[[
  extendRwLock: gives a read or write lease a new length from now, but only while its holder still has it.

  KEYS[1] writer: string, the writer's token, expiring with its lease
  KEYS[2] readers: sorted set, reader token -> end of its lease (ms)
  ARGV[1] mode: 'read' or 'write'
  ARGV[2] token: the holder's token
  ARGV[3] leaseMs: the new lease's length

  Returns 1 when extended, 0 when the lease had already ended.
]]
--- @include lib/now
--- @include lib/rwlock
local writer, readers = KEYS[1], KEYS[2]
local mode, token, leaseMs = ARGV[1], ARGV[2], tonumber(ARGV[3])
if mode == 'write' then
  if redis.call('GET', writer) ~= token then
    return 0
  end
  redis.call('PEXPIRE', writer, leaseMs)
  return 1
end
local now = nowMs()
local ends = redis.call('ZSCORE', readers, token)
if not ends or tonumber(ends) <= now then
  return 0
end
redis.call('ZADD', readers, now + leaseMs, token)
rwExpireReaders(readers)
return 1
