--[[
  readHits: the first `top` entries of one shard's result set, with their scores, renewing its TTL.

  KEYS[1] hits: sorted set, the shard's matches of a search, scored so that ascending (score, id) is its order
  ARGV[1] ttl: the result's TTL, seconds
  ARGV[2] top: how many entries to read (0: none)

  Returns {id, score, ...}, or false when the set has expired.
]]
local hits = KEYS[1]
local ttl, top = ARGV[1], tonumber(ARGV[2])
if redis.call('EXPIRE', hits, ttl) == 0 then
  return false
end
if top == 0 then
  return {}
end
return redis.call('ZRANGE', hits, 0, top - 1, 'WITHSCORES')
