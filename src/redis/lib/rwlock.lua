-- Read-write locks: a writer key (string with the writer's lease), readers (sorted set: token -> lease end, ms on
-- Redis's clock; each lease ends on its own), waiting writers (sorted set: token -> end of its wait; while one waits,
-- new readers queue behind it) and `waited` (string, expiring with the longest wait registered: a release rings
-- while it exists).

-- Drops the readers and waiting writers whose time ran out; whether the lock is free of holders then.
local function rwFree(writer, readers, writers, now)
  redis.call('ZREMRANGEBYSCORE', readers, '-inf', now)
  redis.call('ZREMRANGEBYSCORE', writers, '-inf', now)
  return redis.call('EXISTS', writer) == 0 and redis.call('ZCARD', readers) == 0
end

-- Registers a waiter for `waitMs`: releases ring until then.
local function rwRegister(waited, waitMs)
  if waitMs > 0 and redis.call('PTTL', waited) < waitMs then
    redis.call('SET', waited, '1', 'PX', waitMs)
  end
end

-- The readers set expires with its last lease.
local function rwExpireReaders(readers)
  local last = redis.call('ZRANGE', readers, -1, -1, 'WITHSCORES')
  if #last > 0 then
    redis.call('PEXPIREAT', readers, last[2])
  end
end

-- Ms until what refuses the caller ends, at least 1: the holders' leases, and for a reader (`andWriters`) the waits
-- of the waiting writers too (a dead one blocks readers until its wait ends).
local function rwHeldFor(writer, readers, writers, now, andWriters)
  local ms = redis.call('PTTL', writer)
  local sets = { readers }
  if andWriters then
    sets[2] = writers
  end
  for _, set in ipairs(sets) do
    local last = redis.call('ZRANGE', set, -1, -1, 'WITHSCORES')
    if #last > 0 then
      ms = math.max(ms, tonumber(last[2]) - now)
    end
  end
  return math.max(ms, 1)
end
