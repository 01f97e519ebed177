-- trackResult: a user's live result sets, by last use (Redis's clock). `resultId` is added (or, when `touch`,
-- only refreshed if present); past `max`, the least recently used leave the list and are returned for deletion.
-- Entries older than the result TTL have expired on their own and are dropped. Returns the evicted result ids.
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
