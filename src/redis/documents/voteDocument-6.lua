--[[
  voteDocument: one vote per user per document (a second vote changes nothing). A vote moves the shard's change
  counter, as every change does: searches made before it no longer share their matches with new ones; and the
  document's head, ringing its doorbell (lib/live-document), and the shard's change log (lib/live-search).

  KEYS[1] doc: hash, the document (its `votes` field counts them)
  KEYS[2] voters: set, who voted for the document
  KEYS[3] votes: sorted set, the shard's documents by votes
  KEYS[4] version: string, the shard's change counter
  KEYS[5] liveSeq: string, the shard's change log's sequence (lib/live-search)
  KEYS[6] liveLog: sorted set, the shard's change log
  ARGV[1] id: the document's id
  ARGV[2] user: the voter
  ARGV[3] bell: the document's doorbell (sharded pub/sub channel), rung with its new head
  ARGV[4] liveBell: the change log's doorbell (sharded pub/sub channel)

  Returns the document's votes; STATUS.NOT_FOUND when there is no such document (nothing is written).
]]
--- @include lib/live-document
--- @include lib/live-search
local doc, voters, votes, version, liveSeq, liveLog = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local id, user, bell, liveBell = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
if redis.call('EXISTS', doc) == 0 then
  return STATUS.NOT_FOUND
end
if redis.call('SADD', voters, user) == 1 then
  redis.call('ZINCRBY', votes, 1, id)
  documentMoved(doc, bell, redis.call('INCR', version))
  local n = redis.call('HINCRBY', doc, 'votes', 1)
  local state = redis.call('HMGET', doc, 'words', 'updated')
  searchChanged(liveSeq, liveLog, liveBell, { k = 'v', id = id, w = state[1] or '', b = '', u = tonumber(state[2]), n = n })
  return n
end
return tonumber(redis.call('HGET', doc, 'votes'))
