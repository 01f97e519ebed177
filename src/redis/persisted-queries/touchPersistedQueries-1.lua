--[[
  touchPersistedQueries: marks stored persisted queries used now (those evicted meanwhile stay out).

  KEYS[1] lastUse: sorted set, SHA-256 → last use (ms)
  ARGV[1..] sha256s: one hash each

  Returns how many were still stored.
]]
--- @include lib/now
local lastUse = KEYS[1]
local now = nowMs()
local touched = 0
for i = 1, #ARGV do
  if redis.call('ZSCORE', lastUse, ARGV[i]) then
    redis.call('ZADD', lastUse, now, ARGV[i])
    touched = touched + 1
  end
end
return touched
