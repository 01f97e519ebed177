--[[
  releaseRwLock: ends a read or write lease, but only its holder's; rings the lock's doorbell when a waiter may be
  let in by it (a writer's release; a reader's when it was the last) and one is registered.

  KEYS[1] writer: string, the writer's token, expiring with its lease
  KEYS[2] readers: sorted set, reader token -> end of its lease (ms)
  KEYS[3] waited: string, exists while a waiter may wait
  ARGV[1] mode: 'read' or 'write'
  ARGV[2] token: the holder's token
  ARGV[3] bell: the lock's sharded pub/sub channel

  Returns 1 when released, 0 when the lease had already ended.
]]
--- @include lib/now
local writer, readers, waited = KEYS[1], KEYS[2], KEYS[3]
local mode, token, bell = ARGV[1], ARGV[2], ARGV[3]
if mode == 'write' then
  if redis.call('GET', writer) ~= token then
    return 0
  end
  redis.call('DEL', writer)
else
  local now = nowMs()
  local ends = redis.call('ZSCORE', readers, token)
  if not ends or tonumber(ends) <= now then
    return 0
  end
  redis.call('ZREM', readers, token)
  redis.call('ZREMRANGEBYSCORE', readers, '-inf', now)
  if redis.call('ZCARD', readers) > 0 then
    return 1 -- other readers still hold it: nobody waiting can get in yet
  end
end
if redis.call('EXISTS', waited) == 1 then
  -- A value no GET of the writer key can return: the waiters' pollers see it move.
  redis.call('SPUBLISH', bell, writer .. ' free:' .. token)
end
return 1
