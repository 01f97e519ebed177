--[[
  extendLock: gives a holder's lease a new length from now, but only while it still holds the lock.

  KEYS[1] owner: string, the holder's token, expiring with the lease
  ARGV[1] token: the caller's token
  ARGV[2] leaseMs: the new lease's length

  Returns 1 when extended, 0 when the lease had already ended.
]]
local owner = KEYS[1]
local token, leaseMs = ARGV[1], ARGV[2]
if redis.call('GET', owner) ~= token then
  return 0
end
redis.call('PEXPIRE', owner, leaseMs)
return 1
