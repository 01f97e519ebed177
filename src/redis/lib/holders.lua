-- Semaphore holders: a sorted set of holder id -> expiry (ms, Redis's clock).
-- dropExpired: holders whose time ran out leave.
local function dropExpired(holders, now)
  redis.call('ZREMRANGEBYSCORE', holders, '-inf', now)
end

-- expireWithLastHolder: the set goes away with its last holder.
local function expireWithLastHolder(holders)
  local last = redis.call('ZRANGE', holders, -1, -1, 'WITHSCORES')
  redis.call('PEXPIREAT', holders, last[2])
end
