--[[
  expandPrefixes: the shard's words starting with each prefix (the first `scanMax` of each, in byte order) and how
  many of the shard's documents have each.

  KEYS[1] vocabulary: sorted set, every score 0, the words indexed in the shard
  KEYS[2] df: hash, word -> the number of the shard's documents having it
  ARGV[1] scanMax: the most words read per prefix
  ARGV[2..] prefixes: one prefix each

  Returns one {word, df, word, df, ...} per prefix, in the order of the prefixes.
]]
--- @include lib/chunks
local vocabulary, df = KEYS[1], KEYS[2]
local scanMax = tonumber(ARGV[1])
local out = {}
for i = 2, #ARGV do
  local prefix = ARGV[i]
  -- byte 255 never occurs in UTF-8, so '(' .. prefix .. '\255' bounds every word that starts with the prefix
  local words = redis.call('ZRANGE', vocabulary, '[' .. prefix, '(' .. prefix .. '\255', 'BYLEX', 'LIMIT', 0, scanMax)
  local found = {}
  inChunks(#words, function(first, last)
    local counts = redis.call('HMGET', df, unpack(words, first, last))
    for j = first, last do
      found[#found + 1] = words[j]
      found[#found + 1] = counts[j - first + 1]
    end
  end)
  out[#out + 1] = found
end
return out
