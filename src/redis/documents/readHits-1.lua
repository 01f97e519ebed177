-- readHits: the first `top` entries of one shard's result set, with their scores, renewing its TTL.
-- Returns {id, score, ...}, or false when the set has expired.
local hits = KEYS[1]
local ttl, top = ARGV[1], tonumber(ARGV[2])
if redis.call('EXPIRE', hits, ttl) == 0 then
  return false
end
if top == 0 then
  return {}
end
return redis.call('ZRANGE', hits, 0, top - 1, 'WITHSCORES')
