--[[
  voteDocument: one vote per user per document (a second vote changes nothing). A vote moves the shard's change
  counter, as every change does: searches made before it no longer share their matches with new ones; and the
  document's head, ringing its doorbell (lib/live-document).

  KEYS[1] doc: hash, the document (its `votes` field counts them)
  KEYS[2] voters: set, who voted for the document
  KEYS[3] votes: sorted set, the shard's documents by votes
  KEYS[4] version: string, the shard's change counter
  ARGV[1] id: the document's id
  ARGV[2] user: the voter
  ARGV[3] bell: the document's doorbell (sharded pub/sub channel), rung with its new head

  Returns the document's votes; STATUS.NOT_FOUND when there is no such document (nothing is written).
]]
--- @include lib/live-document
local doc, voters, votes, version = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, user, bell = ARGV[1], ARGV[2], ARGV[3]
if redis.call('EXISTS', doc) == 0 then
  return STATUS.NOT_FOUND
end
if redis.call('SADD', voters, user) == 1 then
  redis.call('ZINCRBY', votes, 1, id)
  documentMoved(doc, bell, redis.call('INCR', version))
  return redis.call('HINCRBY', doc, 'votes', 1)
end
return tonumber(redis.call('HGET', doc, 'votes'))
