-- extendLock: give a holder's lease a new length from now, but only while it still holds the lock.
-- Returns 1 when extended, 0 when the lease had already ended.
local owner = KEYS[1]
local token, leaseMs = ARGV[1], ARGV[2]
if redis.call('GET', owner) ~= token then
  return 0
end
redis.call('PEXPIRE', owner, leaseMs)
return 1
