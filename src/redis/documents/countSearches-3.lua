--[[
  countSearches: a process's searches of one minute since its last flush, counted where the dashboard reads them:
  searches per kind and second, and the queries among the hour's busiest, kept to `kept` queries with the
  Space-Saving algorithm (a query not kept, when the set is full, takes the place of the least searched one with
  that one's count plus its own: every query searched more than 1/kept of the hour's searches is kept, and no count
  is below its true one). Every key expires.

  KEYS[1] rate: hash, "<kind> <second>" -> searches, of one minute
  KEYS[2] queries: sorted set, query text -> searches this hour (at most `kept` members)
  KEYS[3] results: hash, query text -> how many documents its last search found (the members of `queries` only)
  ARGV[1] kept: the most queries `queries` keeps
  ARGV[2] rateTtl: seconds `rate` lives after its last write
  ARGV[3] hourTtl: seconds `queries` and `results` live after their last write
  ARGV[4] packed: cjson {rates = {{"<kind> <second>", searches}, ...}, queries = {{query, searches, found}, ...}}

  Returns the number of queries kept.
]]
local rate, queries, results = KEYS[1], KEYS[2], KEYS[3]
local kept, rateTtl, hourTtl = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local packed = cjson.decode(ARGV[4])
if #packed.rates > 0 then
  for _, r in ipairs(packed.rates) do
    redis.call('HINCRBY', rate, r[1], r[2])
  end
  redis.call('EXPIRE', rate, rateTtl)
end
if #packed.queries > 0 then
  for _, q in ipairs(packed.queries) do
    local query, searches, found = q[1], q[2], q[3]
    if redis.call('ZSCORE', queries, query) or redis.call('ZCARD', queries) < kept then
      redis.call('ZINCRBY', queries, searches, query)
    else
      local least = redis.call('ZRANGE', queries, 0, 0, 'WITHSCORES')
      redis.call('ZREM', queries, least[1])
      redis.call('HDEL', results, least[1])
      redis.call('ZADD', queries, tonumber(least[2]) + searches, query)
    end
    redis.call('HSET', results, query, found)
  end
  redis.call('EXPIRE', queries, hourTtl)
  redis.call('EXPIRE', results, hourTtl)
end
return redis.call('ZCARD', queries)
