--[[
  searchStats: what relevance needs from a shard: its number of documents, the sum of their lengths, and for each
  group of query words the number of documents having any of them; and the shard's change counter, which names the
  matches a search may share (searchDocuments).

  KEYS[1] updated: sorted set, id -> updated (ms); its size is the shard's number of documents
  KEYS[2] lengthSum: string, the sum of the documents' weighted lengths
  KEYS[3] df: hash, word -> the number of the shard's documents having it
  KEYS[4] version: string, the shard's change counter
  KEYS[5] scratch: sorted set, the union of a group's postings, deleted before the script returns
  KEYS[6..] postings: sorted sets, one per word of packed, in order (group 1's words, then group 2's, ...)
  ARGV[1] packed: cjson {{word, ...}, ...}: the groups of query words, each a list of words

  Returns {documents, length sum, version, df of group 1, ...}.
]]
--- @include lib/chunks
local updated, lengthSum, df, version, scratch = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local packed = cjson.decode(ARGV[1])
local postingsAt = 6

local out = { redis.call('ZCARD', updated), tonumber(redis.call('GET', lengthSum)) or 0, redis.call('GET', version) or '0' }
local k = postingsAt
for _, words in ipairs(packed) do
  local size = #words
  if size == 1 then
    out[#out + 1] = tonumber(redis.call('HGET', df, words[1])) or 0
  else
    redis.call('DEL', scratch)
    inChunks(size, function(first, last)
      redis.call('ZUNIONSTORE', scratch, last - first + 2, scratch, unpack(KEYS, k + first - 1, k + last - 1))
    end)
    out[#out + 1] = redis.call('ZCARD', scratch)
  end
  k = k + size
end
redis.call('DEL', scratch)
return out
