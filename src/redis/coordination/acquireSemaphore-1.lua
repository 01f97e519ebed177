-- acquireSemaphore: a counting semaphore that fails fast. Holders whose time ran out are dropped first; the
-- clock is Redis's, so no client clock can jump the queue, and checking and taking a place are one step.
-- Returns 1 when the holder has a place (a holder that already had one is refreshed), 0 when all are taken.
--- @include lib/now
--- @include lib/holders
local holders = KEYS[1] -- holder id → expiry (ms)
local limit, timeoutMs, holder = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3] -- a holder that does not refresh is dropped after timeoutMs
local now = nowMs()
dropExpired(holders, now)
if not redis.call('ZSCORE', holders, holder) and redis.call('ZCARD', holders) >= limit then
  return 0
end
redis.call('ZADD', holders, now + timeoutMs, holder)
expireWithLastHolder(holders)
return 1
