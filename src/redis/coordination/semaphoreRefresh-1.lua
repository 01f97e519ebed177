-- semaphore-refresh: give a holder a new timeout from now, but only while it still has its place.
-- KEYS[1] holders (holder id → expiry ms)
-- ARGV[1] timeout (ms)  ARGV[2] holder id
-- Returns 1 when refreshed, 0 when the holder had already been dropped.
--- @include lib/now
local now = nowMs()
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], last[2])
return 1
