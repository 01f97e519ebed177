--[[
  extendReentrant: gives a reentrant lock's lease a new length from now, but only while the token holds it.

  KEYS[1] lock: string, "<owner> <token> <depth> <fence>[+]", expiring with the lease
  ARGV[1] token: the holder's token
  ARGV[2] leaseMs: the new lease's length

  Returns 1 when extended, 0 when the lease had already ended.
]]
--- @include lib/reentrant
local lock = KEYS[1]
local token, leaseMs = ARGV[1], ARGV[2]
if reentrantExtend(lock, token, leaseMs) then
  return 1
end
return 0
