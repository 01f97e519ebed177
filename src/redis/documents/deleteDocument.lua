--[[
  deleteDocument: removes a document from its shard, everywhere: hash, voters, postings, sort keys, vocabulary; moves
  the shard's change counter.
  Refuses with STATUS.CHANGED when its version is not `expected` (the caller read its words of that version; it
  reads again), STATUS.NOT_OWNER when another user wrote it and the caller is no admin, and STATUS.LEASED when the
  lease token shown is not the document's live editing lease's (as indexDocument). A leased document's lease goes
  with it (its waiters are rung, and find no document).

  KEYS[1] doc: hash, the document: title, content, author, updated (ms), votes, ver, words (space-separated)
  KEYS[2] voters: set, who voted for the document
  KEYS[3] updated: sorted set, id -> updated (ms)
  KEYS[4] votes: sorted set, id -> votes
  KEYS[5] titleScores: sorted set, id -> string_to_score of the lower-cased title
  KEYS[6] titles: hash, id -> the lower-cased title
  KEYS[7] lengths: hash, id -> the document's weighted length
  KEYS[8] lengthSum: string, the sum of the lengths
  KEYS[9] vocabulary: sorted set, every score 0, the words indexed in the shard
  KEYS[10] df: hash, word -> the number of the shard's documents having it
  KEYS[11] lease: string, the document's editing lease (lib/reentrant.lua), expiring with it
  KEYS[12] liveSeq: string, the shard's change log's sequence (lib/live-search)
  KEYS[13] liveLog: sorted set, the shard's change log
  KEYS[14] version: string, the shard's change counter
  KEYS[15..] postings: sorted sets, id -> weighted frequency: one per word of ARGV[9..], in their order
  ARGV[1] id: the document's id
  ARGV[2] expected: the version the caller read ('0': none)
  ARGV[3] user: who deletes it
  ARGV[4] isAdmin: '1' when the user is an admin (and may delete another's document), else '0'
  ARGV[5] leaseToken: the editing lease's token the caller shows ('': none)
  ARGV[6] bell: the lease's sharded pub/sub channel
  ARGV[7] docBell: the document's doorbell (sharded pub/sub channel), rung once it is gone
  ARGV[8] liveBell: the change log's doorbell (sharded pub/sub channel)
  ARGV[9..] words: the document's words at version `expected`, one each

  Returns 1, or 0 when there was none (and `expected` is '0'); else STATUS.CHANGED, STATUS.NOT_OWNER or
  STATUS.LEASED (nothing is written).
]]
--- @include lib/postings
--- @include lib/reentrant
--- @include lib/live-document
--- @include lib/live-search
local doc, voters, updated, votes, titleScores, titles, lengths, lengthSum, vocabulary, df =
  KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10]
local lease, liveSeq, liveLog, version = KEYS[11], KEYS[12], KEYS[13], KEYS[14]
local id, expected, user, isAdmin = ARGV[1], ARGV[2], ARGV[3], ARGV[4] == '1'
local leaseToken, bell, docBell, liveBell = ARGV[5], ARGV[6], ARGV[7], ARGV[8]
local postingsAt, wordsAt = 15, 9

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
if not reentrantAdmits(lease, leaseToken) then
  return STATUS.LEASED
end
local words = {}
for i = wordsAt, #ARGV do
  words[#words + 1] = ARGV[i]
end
dropPostings(df, vocabulary, id, words, postingsAt)
redis.call('DECRBY', lengthSum, tonumber(redis.call('HGET', lengths, id)) or 0)
redis.call('HDEL', lengths, id)
redis.call('HDEL', titles, id)
redis.call('ZREM', titleScores, id)
redis.call('ZREM', updated, id)
redis.call('ZREM', votes, id)
redis.call('DEL', doc, voters)
documentGone(doc, docBell)
-- Moved as by every change: a search after the deletion makes its matches anew (the document's place refilled), so
-- every search of one state of the index answers the same, and a live search converges to that answer.
redis.call('INCR', version)
searchChanged(liveSeq, liveLog, liveBell, { k = 'd', id = id, w = '', b = table.concat(words, ' ') })
local held = reentrantRead(lease)
if held then
  reentrantFree(lease, held, bell)
end
return 1
