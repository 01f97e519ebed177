--[[
  indexDocument: creates or replaces a document in its shard, all at once: its hash, its postings (dropping the
  words it no longer has), its sort keys, the shard's vocabulary and document frequencies.
  Refuses with STATUS.CHANGED when the document's version is not `expected` (the caller read the old words of
  that version; it reads again), STATUS.NOT_OWNER when another user wrote it and the caller is no admin, and
  STATUS.LEASED when the lease token shown is not the document's live editing lease's (none shown while it is
  leased, or one of a lease that expired or was released: a paused writer cannot overwrite the next holder's work).

  KEYS[1] doc: hash, the document: title, content, author, updated (ms), votes, ver, words (space-separated)
  KEYS[2] voters: set, who voted for the document
  KEYS[3] version: string, the shard's change counter (a changed document's new `ver`)
  KEYS[4] updated: sorted set, id -> updated (ms)
  KEYS[5] votes: sorted set, id -> votes
  KEYS[6] titleScores: sorted set, id -> string_to_score of the lower-cased title
  KEYS[7] titles: hash, id -> the lower-cased title
  KEYS[8] lengths: hash, id -> the document's weighted length
  KEYS[9] lengthSum: string, the sum of the lengths
  KEYS[10] vocabulary: sorted set, every score 0, the words indexed in the shard
  KEYS[11] df: hash, word -> the number of the shard's documents having it
  KEYS[12] lease: string, the document's editing lease (lib/reentrant.lua), expiring with it
  KEYS[13] liveSeq: string, the shard's change log's sequence (lib/live-search)
  KEYS[14] liveLog: sorted set, the shard's change log
  KEYS[15..] postings: sorted sets, id -> weighted frequency: one per word of packed.words, then one per word of
    packed.dropped, in their order
  ARGV[1] id: the document's id
  ARGV[2] expected: the version the caller read ('0': none)
  ARGV[3] user: who writes it (the author of a new document)
  ARGV[4] isAdmin: '1' when the user is an admin (and may replace another's document), else '0'
  ARGV[5] title: the title as shown
  ARGV[6] titleKey: the lower-cased title
  ARGV[7] titleScore: string_to_score of titleKey
  ARGV[8] content: the content as shown
  ARGV[9] length: the document's weighted length
  ARGV[10] packed: cjson {words = {...}, frequencies = {...}, dropped = {...}}: the document's words, their weighted
    frequencies in the same order (as strings, given to ZADD as they are), and the words it had at version
    `expected` and no longer has
  ARGV[11] leaseToken: the editing lease's token the caller shows ('': none)
  ARGV[12] bell: the document's doorbell (sharded pub/sub channel), rung with its new head
  ARGV[13] liveBell: the change log's doorbell (sharded pub/sub channel)

  Returns {version, updated ms, votes, whether the user voted (1 or 0)}; else STATUS.CHANGED, STATUS.NOT_OWNER or
  STATUS.LEASED (nothing is written).
]]
--- @include lib/now
--- @include lib/postings
--- @include lib/reentrant
--- @include lib/live-document
--- @include lib/live-search
local doc, voters, version, updated, votes, titleScores, titles, lengths, lengthSum, vocabulary, df =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11]
local lease, liveSeq, liveLog = KEYS[12], KEYS[13], KEYS[14]
local id, expected, user, isAdmin = ARGV[1], ARGV[2], ARGV[3], ARGV[4] == '1'
local title, titleKey, titleScore, content, length = ARGV[5], ARGV[6], ARGV[7], ARGV[8], tonumber(ARGV[9])
local packed = cjson.decode(ARGV[10])
local words, frequencies, dropped = packed.words, packed.frequencies, packed.dropped
local leaseToken, bell, liveBell = ARGV[11], ARGV[12], ARGV[13]
local wordsAt = 15 -- the postings of words, then those of dropped
local droppedAt = wordsAt + #words

local state = redis.call('HMGET', doc, 'ver', 'author')
if (state[1] or '0') ~= expected then
  return STATUS.CHANGED
end
if state[2] and state[2] ~= user and not isAdmin then
  return STATUS.NOT_OWNER
end
if not reentrantAdmits(lease, leaseToken) then
  return STATUS.LEASED
end

dropPostings(df, vocabulary, id, dropped, droppedAt)
local gained = {}
for i = 1, #words do
  if redis.call('ZADD', KEYS[wordsAt + i - 1], frequencies[i], id) == 1 then
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
documentMoved(doc, bell, ver)
searchChanged(liveSeq, liveLog, liveBell, {
  k = 'i',
  id = id,
  w = table.concat(words, ' '),
  f = table.concat(frequencies, ' '),
  l = ARGV[9],
  b = table.concat(dropped, ' '),
  u = now,
  n = tonumber(redis.call('HGET', doc, 'votes')),
  t = titleKey,
})
return { ver, now, tonumber(redis.call('HGET', doc, 'votes')), redis.call('SISMEMBER', voters, user) }
