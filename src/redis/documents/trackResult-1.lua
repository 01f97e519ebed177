--[[
  trackResult: a user's live result sets, by last use (Redis's clock). `resultId` is added (or, when `touch`,
  only refreshed if present); past `max`, the least recently used leave the list and are returned for deletion.
  Entries older than the result TTL have expired on their own and are dropped.

  KEYS[1] results: sorted set, the user's live result ids by last use (ms), expiring with the newest
  ARGV[1] resultId: the result added or touched
  ARGV[2] max: how many results the user keeps
  ARGV[3] ttlMs: the results' TTL, ms
  ARGV[4] touch: '1' to only refresh `resultId` if present, '0' to add it

  Returns the evicted result ids (none when touching).
]]
--- @include lib/now
local results = KEYS[1]
local resultId, max, ttlMs, touch = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4] == '1'
local now = nowMs()
redis.call('ZREMRANGEBYSCORE', results, '-inf', now - ttlMs)
if touch then
  redis.call('ZADD', results, 'XX', now, resultId)
  return {}
end
redis.call('ZADD', results, now, resultId)
redis.call('PEXPIRE', results, ttlMs)
local evicted = {}
local over = redis.call('ZCARD', results) - max
if over > 0 then
  local popped = redis.call('ZPOPMIN', results, over)
  for i = 1, #popped, 2 do
    evicted[#evicted + 1] = popped[i]
  end
end
return evicted
