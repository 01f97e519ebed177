--[[
  trustPersistedQuery: registers a trusted document (PERSISTED_ONLY: an admin sent it) under its hash, unless the
  store of trusted documents holds `max` already. A hash's document never changes, so one already there is kept.
  Trusted documents are never evicted: an admin registered each.

  KEYS[1] trusted: hash, SHA-256 → document
  ARGV[1] sha256: the document's hash
  ARGV[2] document: the GraphQL document
  ARGV[3] max: the most documents the store holds

  Returns 1 when stored, 0 when it was there already, STATUS.FULL when the store is full.
]]
local trusted = KEYS[1]
local sha256, document, max = ARGV[1], ARGV[2], tonumber(ARGV[3])
if redis.call('HEXISTS', trusted, sha256) == 1 then
  return 0
end
if redis.call('HLEN', trusted) >= max then
  return STATUS.FULL
end
redis.call('HSET', trusted, sha256, document)
return 1
