-- searchStats: what relevance needs from a shard: its number of documents, the sum of their lengths, and for each
-- group of query words the number of documents having any of them.
-- Returns {documents, length sum, df of group 1, ...}.
--- @include lib/chunks
local updated, lengthSum, df, scratch = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
-- ARGV: the number of groups, then per group its size and its words; KEYS[5 ..]: the words' postings, in order.
local out = { redis.call('ZCARD', updated), tonumber(redis.call('GET', lengthSum)) or 0 }
local a, k = 2, 5
for _ = 1, tonumber(ARGV[1]) do
  local size = tonumber(ARGV[a])
  if size == 1 then
    out[#out + 1] = tonumber(redis.call('HGET', df, ARGV[a + 1])) or 0
  else
    redis.call('DEL', scratch)
    inChunks(size, function(first, last)
      redis.call('ZUNIONSTORE', scratch, last - first + 2, scratch, unpack(KEYS, k + first - 1, k + last - 1))
    end)
    out[#out + 1] = redis.call('ZCARD', scratch)
  end
  a = a + 1 + size
  k = k + size
end
redis.call('DEL', scratch)
return out
