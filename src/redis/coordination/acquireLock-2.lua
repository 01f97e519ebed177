--[[
  acquireLock: takes a lock if it is free, with a lease, and hands out the next fencing token.

  KEYS[1] owner: string, the holder's token, expiring with the lease
  KEYS[2] fence: string, the lock's fencing counter
  ARGV[1] token: the caller's random token
  ARGV[2] leaseMs: the lease's length

  Returns {fence} when taken (> 0, one more than the previous holder's), else {0, ms left on the holder's lease}.
]]
local owner, fence = KEYS[1], KEYS[2]
local token, leaseMs = ARGV[1], ARGV[2]
if redis.call('SET', owner, token, 'NX', 'PX', leaseMs) then
  return { redis.call('INCR', fence) }
end
return { 0, math.max(redis.call('PTTL', owner), 1) }
