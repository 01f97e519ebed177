--[[
  registerPersistedQuery: stores a persisted query's document under its hash (a hash's document never changes, so
  one already stored is kept) and marks it used now; past `max` documents, the least recently used go, in this
  same script, so the store never holds more than `max` however many clients register at once.

  KEYS[1] documents: hash, SHA-256 → document
  KEYS[2] lastUse: sorted set, SHA-256 → last use (ms)
  ARGV[1] sha256: the document's hash
  ARGV[2] document: the GraphQL document
  ARGV[3] max: the most documents the store holds

  Returns how many documents were evicted.
]]
--- @include lib/now
local documents, lastUse = KEYS[1], KEYS[2]
local sha256, document, max = ARGV[1], ARGV[2], tonumber(ARGV[3])
redis.call('HSETNX', documents, sha256, document)
redis.call('ZADD', lastUse, nowMs(), sha256)
local over = redis.call('ZCARD', lastUse) - max
if over <= 0 then
  return 0
end
local popped = redis.call('ZPOPMIN', lastUse, over)
for i = 1, #popped, 2 do
  redis.call('HDEL', documents, popped[i])
end
return over
