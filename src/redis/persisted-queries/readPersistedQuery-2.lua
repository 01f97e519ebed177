--[[
  readPersistedQuery: the document stored under a hash, marked used now when there is one.

  KEYS[1] documents: hash, SHA-256 → document
  KEYS[2] lastUse: sorted set, SHA-256 → last use (ms)
  ARGV[1] sha256: the hash asked for

  Returns the document, or nil when none is stored under the hash.
]]
--- @include lib/now
local documents, lastUse = KEYS[1], KEYS[2]
local sha256 = ARGV[1]
local document = redis.call('HGET', documents, sha256)
if document then
  redis.call('ZADD', lastUse, 'XX', nowMs(), sha256)
end
return document
