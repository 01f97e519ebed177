--[[
  acquireLease: takes a document's editing lease for a user (its author, or an admin), or enters it once more when
  the user holds it already (lib/reentrant.lua); a refused caller that will wait marks the lease, so that its
  release rings the doorbell.

  KEYS[1] lease: string, "<user> <token> <depth> <fencing token>[+]", expiring with the lease
  KEYS[2] fences: string, the shard's counter of fencing tokens
  KEYS[3] doc: hash, the document (its author)
  ARGV[1] user: who takes it
  ARGV[2] isAdmin: '1' when the user is an admin (and may lease another's document), else '0'
  ARGV[3] token: the caller's random token, the lease's when it is free
  ARGV[4] leaseMs: the lease's length (a re-entry never shortens the lease)
  ARGV[5] waits: '1' when the caller waits for a release if the lease is held, else '0'
  ARGV[6] others: '1' when other waiters of the caller's process wait for the lease: it is taken marked

  Returns {1, fencing token, token, depth, ms left on the lease} when held, {0, ms left on the holder's lease,
  holder} when another user holds it; else STATUS.NOT_FOUND (no such document) or STATUS.NOT_OWNER (nothing is
  written).
]]
--- @include lib/reentrant
local lease, fences, doc = KEYS[1], KEYS[2], KEYS[3]
local user, isAdmin, token, leaseMs, waits, others = ARGV[1], ARGV[2] == '1', ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local author = redis.call('HGET', doc, 'author')
if not author then
  return STATUS.NOT_FOUND
end
if author ~= user and not isAdmin then
  return STATUS.NOT_OWNER
end
return reentrantAcquire(lease, fences, user, token, leaseMs, waits, others)
