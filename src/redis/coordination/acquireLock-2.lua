-- acquireLock: take a lock if it is free, with a lease, and hand out the next fencing token.
-- Returns the fencing token (> 0, one more than the previous holder's) when taken; otherwise minus the
-- milliseconds left on the current holder's lease (at most -1).
local owner, fence = KEYS[1], KEYS[2]
local token, leaseMs = ARGV[1], ARGV[2]
if redis.call('SET', owner, token, 'NX', 'PX', leaseMs) then
  return redis.call('INCR', fence)
end
return -math.max(redis.call('PTTL', owner), 1)
