-- refreshSemaphore: give a holder a new timeout from now, but only while it still has its place.
-- Returns 1 when refreshed, 0 when the holder had already been dropped.
--- @include lib/now
--- @include lib/holders
local holders = KEYS[1] -- holder id → expiry (ms)
local timeoutMs, holder = tonumber(ARGV[1]), ARGV[2]
local now = nowMs()
dropExpired(holders, now)
if not redis.call('ZSCORE', holders, holder) then
  return 0
end
redis.call('ZADD', holders, now + timeoutMs, holder)
expireWithLastHolder(holders)
return 1
