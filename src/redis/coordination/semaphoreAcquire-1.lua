-- semaphore-acquire: a counting semaphore that fails fast. Holders whose time ran out are dropped first; the
-- clock is Redis's, so no client clock can jump the queue, and checking and taking a place are one step.
-- KEYS[1] holders (holder id → expiry ms)
-- ARGV[1] limit  ARGV[2] timeout (ms) after which a holder that does not refresh is dropped  ARGV[3] holder id
-- Returns 1 when the holder has a place (a holder that already had one is refreshed), 0 when all are taken.
--- @include lib/now
local now = nowMs()
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local expires = now + tonumber(ARGV[2])
if not redis.call('ZSCORE', KEYS[1], ARGV[3]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('ZADD', KEYS[1], expires, ARGV[3])
-- The set goes away with its last holder.
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', KEYS[1], last[2])
return 1
