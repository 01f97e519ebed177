-- deleteDocument: removes a document from its shard, everywhere: hash, voters, postings, sort keys, vocabulary.
-- Returns 1, or 0 when there was none (and `expected` is '0'); STATUS.CHANGED when its version is not `expected`
-- (the caller read its words of that version; it reads again), STATUS.NOT_OWNER as indexDocument.
--- @include lib/postings
local doc, voters, updated, votes, titleScores, titles, lengths, lengthSum, vocabulary, df =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10]
local id, expected, user, isAdmin = ARGV[1], ARGV[2], ARGV[3], ARGV[4] == '1'
-- The document's words are ARGV[5 ..], their postings KEYS[11 ..].

local state = redis.call('HMGET', doc, 'ver', 'author')
if (state[1] or '0') ~= expected then
  return STATUS.CHANGED
end
if not state[1] then
  return 0
end
if state[2] ~= user and not isAdmin then
  return STATUS.NOT_OWNER
end
dropPostings(df, vocabulary, id, 11, -6)
redis.call('DECRBY', lengthSum, tonumber(redis.call('HGET', lengths, id)) or 0)
redis.call('HDEL', lengths, id)
redis.call('HDEL', titles, id)
redis.call('ZREM', titleScores, id)
redis.call('ZREM', updated, id)
redis.call('ZREM', votes, id)
redis.call('DEL', doc, voters)
return 1
