--[[
  extendLock: gives a holder's lease a new length from now, but only while it still holds the lock.

  KEYS[1] owner: string, the holder's token (+ WAITED once someone waits), expiring with the lease
  ARGV[1] token: the caller's token
  ARGV[2] leaseMs: the new lease's length

  Returns 1 when extended, 0 when the lease had already ended.
]]
--- @include lib/lock
local owner = KEYS[1]
local token, leaseMs = ARGV[1], ARGV[2]
if not heldBy(owner, token) then
  return 0
end
redis.call('PEXPIRE', owner, leaseMs)
return 1
