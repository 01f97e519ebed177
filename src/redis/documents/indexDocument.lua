-- indexDocument: creates or replaces a document in its shard, all at once: its hash, its postings (dropping the
-- words it no longer has), its sort keys, the shard's vocabulary and document frequencies.
-- Refuses with STATUS.CHANGED when the document's version is not `expected` (the caller read the old words of
-- that version; it reads again) and STATUS.NOT_OWNER when another user wrote it and the caller is no admin.
-- Returns {version, updated ms, votes, whether the user voted}.
--- @include lib/now
--- @include lib/postings
local doc, voters, version, updated, votes, titleScores, titles, lengths, lengthSum, vocabulary, df =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11]
local id, expected, user, isAdmin = ARGV[1], ARGV[2], ARGV[3], ARGV[4] == '1'
local title, titleKey, titleScore, content, length = ARGV[5], ARGV[6], ARGV[7], ARGV[8], tonumber(ARGV[9])
-- The n new words are ARGV[11 .. 10+n], their frequencies ARGV[11+n .. 10+2n], then the words dropped;
-- their postings are KEYS[12 .. 11+n], then the dropped words' postings.
local n = tonumber(ARGV[10])

local state = redis.call('HMGET', doc, 'ver', 'author')
if (state[1] or '0') ~= expected then
  return STATUS.CHANGED
end
if state[2] and state[2] ~= user and not isAdmin then
  return STATUS.NOT_OWNER
end

dropPostings(df, vocabulary, id, 12 + n, n - 1)
local words, gained = {}, {}
for i = 1, n do
  words[i] = ARGV[10 + i]
  if redis.call('ZADD', KEYS[11 + i], ARGV[10 + n + i], id) == 1 then
    gained[#gained + 1] = words[i]
  end
end
countDocuments(df, vocabulary, gained, 1)

local now = nowMs()
local ver = redis.call('INCR', version) -- shard-wide, so a version never comes back after a delete
redis.call('INCRBY', lengthSum, length - (tonumber(redis.call('HGET', lengths, id)) or 0))
redis.call('HSET', lengths, id, length)
redis.call('HSET', titles, id, titleKey)
redis.call('ZADD', titleScores, titleScore, id)
redis.call('ZADD', updated, now, id)
redis.call('ZADD', votes, 'NX', 0, id)
redis.call('HSET', doc, 'title', title, 'content', content, 'updated', now, 'ver', ver, 'words', table.concat(words, ' '))
if not state[2] then
  redis.call('HSET', doc, 'author', user, 'votes', 0)
end
return { ver, now, tonumber(redis.call('HGET', doc, 'votes')), redis.call('SISMEMBER', voters, user) }
