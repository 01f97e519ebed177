--[[
  heartbeat: a worker says it is alive, and learns which workers have gone quiet.

  KEYS[1] workers: sorted set, worker id → last heartbeat (ms)
  ARGV[1] workerId: the worker beating
  ARGV[2] timeoutMs: a worker quiet this long counts as dead

  Returns the ids of workers whose last heartbeat is older than the timeout.
]]
--- @include lib/now
local workers = KEYS[1]
local workerId, timeoutMs = ARGV[1], tonumber(ARGV[2])
local now = nowMs()
redis.call('ZADD', workers, now, workerId)
return redis.call('ZRANGEBYSCORE', workers, '-inf', '(' .. (now - timeoutMs))
