--[[
  endSearch: a search of one user ends: its place among the user's running searches is given back and, for a new
  result still among the user's live results, its description is kept (a result evicted meanwhile by the user's
  other searches is not: its merged copy, if the search made one, is deleted here, and the caller deletes the
  matches it made); the merged copies of the results its begin evicted are deleted.

  KEYS[1] searching: sorted set, holder id -> expiry (ms), the user's searches running now
  KEYS[2] results: sorted set, the user's live result ids by last use (ms)
  KEYS[3] descriptions: hash, result id -> JSON of its description, expiring with `results`
  KEYS[4] own: list, the merged copy of the search's new result (deleted when the result is not kept)
  KEYS[5..] merged: lists, the merged copies of the results the search's begin evicted
  ARGV[1] holder: the search's holder id
  ARGV[2] resultId: the new result ('' when the search made none)
  ARGV[3] description: its description, JSON
  ARGV[4] ttlMs: the results' TTL, ms

  Returns 1 when the description was kept, else 0.
]]
local searching, results, descriptions, own = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local holder, resultId, description, ttlMs = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
redis.call('ZREM', searching, holder)
if #KEYS > 4 then
  redis.call('DEL', unpack(KEYS, 5, #KEYS))
end
if resultId == '' then
  return 0
end
if not redis.call('ZSCORE', results, resultId) then
  redis.call('DEL', own)
  return 0
end
redis.call('HSET', descriptions, resultId, description)
redis.call('PEXPIRE', descriptions, ttlMs)
return 1
