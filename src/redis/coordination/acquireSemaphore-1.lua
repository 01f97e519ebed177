--[[
  acquireSemaphore: a counting semaphore that fails fast. Holders whose time ran out are dropped first; the clock
  is Redis's, so no client clock can jump the queue, and checking and taking a place are one step.

  KEYS[1] holders: sorted set, holder id → expiry (ms)
  ARGV[1] limit: places in all
  ARGV[2] timeoutMs: a holder that does not refresh is dropped after this long
  ARGV[3] holder: the caller's holder id

  Returns 1 when the holder has a place (a holder that already had one is refreshed), 0 when all are taken.
]]
--- @include lib/now
--- @include lib/holders
local holders = KEYS[1]
local limit, timeoutMs, holder = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
local now = nowMs()
dropExpired(holders, now)
if not redis.call('ZSCORE', holders, holder) and redis.call('ZCARD', holders) >= limit then
  return 0
end
redis.call('ZADD', holders, now + timeoutMs, holder)
expireWithLastHolder(holders)
return 1
