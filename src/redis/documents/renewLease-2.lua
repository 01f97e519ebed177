--[[
  renewLease: gives a document's editing lease a new length from now, but only for its live token and its holder.

  KEYS[1] lease: string, "<user> <token> <depth> <fencing token>[+]", expiring with the lease
  KEYS[2] doc: hash, the document
  ARGV[1] user: who renews it
  ARGV[2] token: the lease's token
  ARGV[3] leaseMs: the lease's new length

  Returns {fencing token, depth}; else STATUS.NOT_FOUND (no such document), STATUS.LEASED (the token is not the
  live lease's: it expired or was released) or STATUS.NOT_OWNER (another user's lease); nothing is written then.
]]
--- @include lib/lease
local lease, doc = KEYS[1], KEYS[2]
local user, token, leaseMs = ARGV[1], ARGV[2], ARGV[3]
local held, refusal = leaseOfHolder(lease, doc, user, token)
if not held then
  return refusal
end
reentrantExtend(lease, token, leaseMs)
return { tonumber(held.fence), held.depth }
