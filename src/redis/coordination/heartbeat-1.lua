-- heartbeat: a worker says it is alive, and learns which workers have gone quiet.
-- Returns the ids of workers whose last heartbeat is older than the timeout.
--- @include lib/now
local workers = KEYS[1] -- worker id → last heartbeat (ms)
local workerId, timeoutMs = ARGV[1], tonumber(ARGV[2]) -- a worker quiet this long counts as dead
local now = nowMs()
redis.call('ZADD', workers, now, workerId)
return redis.call('ZRANGEBYSCORE', workers, '-inf', '(' .. (now - timeoutMs))
