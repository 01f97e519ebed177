--[[
  countSearch: one search, counted where the dashboard reads it: a search per kind in its second, and its query
  among the hour's busiest, kept to `kept` queries with the Space-Saving algorithm (a query not kept, when the set
  is full, takes the place of the least searched one with that one's count plus one: every query searched more than
  1/kept of the hour's searches is kept, and no count is below its true one). Every key expires.

  KEYS[1] rate: hash, "<kind> <second>" -> searches, of the minute of `second`
  KEYS[2] queries: sorted set, query text -> searches this hour (at most `kept` members)
  KEYS[3] results: hash, query text -> how many documents its last search found (the members of `queries` only)
  ARGV[1] second: the search's second (s since the epoch)
  ARGV[2] query: the query text (bounded by the caller)
  ARGV[3] found: how many documents it found
  ARGV[4] kept: the most queries `queries` keeps
  ARGV[5] rateTtl: seconds `rate` lives after its last write
  ARGV[6] hourTtl: seconds `queries` and `results` live after their last write
  ARGV[7..] kinds: the search's kinds

  Returns the number of queries kept.
]]
local rate, queries, results = KEYS[1], KEYS[2], KEYS[3]
local second, query, found, kept, rateTtl, hourTtl = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5], ARGV[6]
for i = 7, #ARGV do
  redis.call('HINCRBY', rate, ARGV[i] .. ' ' .. second, 1)
end
redis.call('EXPIRE', rate, rateTtl)
if redis.call('ZSCORE', queries, query) or redis.call('ZCARD', queries) < kept then
  redis.call('ZINCRBY', queries, 1, query)
else
  local least = redis.call('ZRANGE', queries, 0, 0, 'WITHSCORES')
  redis.call('ZREM', queries, least[1])
  redis.call('HDEL', results, least[1])
  redis.call('ZADD', queries, tonumber(least[2]) + 1, query)
end
redis.call('HSET', results, query, found)
redis.call('EXPIRE', queries, hourTtl)
redis.call('EXPIRE', results, hourTtl)
return redis.call('ZCARD', queries)
