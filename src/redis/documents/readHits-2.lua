--[[
  readHits: the first `top` entries of one shard's matches of a search, with their scores, renewing their TTL.

  KEYS[1] hits: sorted set, the shard's matches of a search, scored so that ascending (score, id) is its order
  KEYS[2] total: string, how many matched; it expires with `hits`
  ARGV[1] ttl: the matches' TTL, seconds
  ARGV[2] top: how many entries to read (0: none)

  Returns {id, score, ...}, or false when they have expired.
]]
local hits, total = KEYS[1], KEYS[2]
local ttl, top = ARGV[1], tonumber(ARGV[2])
if redis.call('EXPIRE', total, ttl) == 0 or redis.call('EXPIRE', hits, ttl) == 0 then
  return false
end
if top == 0 then
  return {}
end
return redis.call('ZRANGE', hits, 0, top - 1, 'WITHSCORES')
