--[[
  releaseLease: leaves a document's editing lease once, but only for its live token and its holder; at depth 0 it
  is free and its doorbell rings if someone waits for it.

  KEYS[1] lease: string, "<user> <token> <depth> <fencing token>[+]", expiring with the lease
  KEYS[2] doc: hash, the document
  ARGV[1] user: who releases it
  ARGV[2] token: the lease's token
  ARGV[3] bell: the lease's sharded pub/sub channel

  Returns the depth left (0: free); else STATUS.NOT_FOUND (no such document), STATUS.LEASED (the token is not the
  live lease's: it expired or was released) or STATUS.NOT_OWNER (another user's lease); nothing is written then.
]]
--- @include lib/lease
local lease, doc = KEYS[1], KEYS[2]
local user, token, bell = ARGV[1], ARGV[2], ARGV[3]
local held, refusal = leaseOfHolder(lease, doc, user, token)
if not held then
  return refusal
end
return reentrantRelease(lease, token, bell)
