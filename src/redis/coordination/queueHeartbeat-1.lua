-- queue-heartbeat: a worker says it is alive, and learns which workers have gone quiet.
-- KEYS[1] workers (worker id → last heartbeat ms)
-- ARGV[1] worker id  ARGV[2] timeout (ms) after which a quiet worker counts as dead
-- Returns the ids of workers whose last heartbeat is older than the timeout.
--- @include lib/now
local now = nowMs()
redis.call('ZADD', KEYS[1], now, ARGV[1])
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - tonumber(ARGV[2])))
