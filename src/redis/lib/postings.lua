-- Document frequencies of the documents index: how many of the shard's documents have each word (the `df` hash),
-- and the shard's vocabulary (a word is in it exactly while some document has it).
--- @include lib/chunks
-- countDocuments: the frequencies of `words` move by `delta` (1: a document gained them, -1: one lost them).
local function countDocuments(df, vocabulary, words, delta)
  inChunks(#words, function(first, last)
    local counts = redis.call('HMGET', df, unpack(words, first, last))
    local set, entered, left = {}, {}, {}
    for j = first, last do
      local count = (tonumber(counts[j - first + 1]) or 0) + delta
      if count > 0 then
        set[#set + 1] = words[j]
        set[#set + 1] = count
        if count == 1 then
          entered[#entered + 1] = 0
          entered[#entered + 1] = words[j]
        end
      else
        left[#left + 1] = words[j]
      end
    end
    if #set > 0 then
      redis.call('HSET', df, unpack(set))
    end
    if #entered > 0 then
      redis.call('ZADD', vocabulary, unpack(entered))
    end
    if #left > 0 then
      redis.call('HDEL', df, unpack(left))
      redis.call('ZREM', vocabulary, unpack(left))
    end
  end)
end

-- dropPostings: the document leaves the postings of `words`, which are KEYS[first ..], one per word in order.
local function dropPostings(df, vocabulary, id, words, first)
  local gone = {}
  for j = 1, #words do
    if redis.call('ZREM', KEYS[first + j - 1], id) == 1 then
      gone[#gone + 1] = words[j]
    end
  end
  countDocuments(df, vocabulary, gone, -1)
end
