--[[
  refreshSemaphore: gives a holder a new timeout from now, but only while it still has its place.

  KEYS[1] holders: sorted set, holder id → expiry (ms)
  ARGV[1] timeoutMs: the holder is dropped after this long unless refreshed again
  ARGV[2] holder: the holder id

  Returns 1 when refreshed, 0 when the holder had already been dropped.
]]
--- @include lib/now
--- @include lib/holders
local holders = KEYS[1]
local timeoutMs, holder = tonumber(ARGV[1]), ARGV[2]
local now = nowMs()
dropExpired(holders, now)
if not redis.call('ZSCORE', holders, holder) then
  return 0
end
redis.call('ZADD', holders, now + timeoutMs, holder)
expireWithLastHolder(holders)
return 1
