--[[
  handOffLock: the holder passes the lock straight to a waiter of its own process (one round trip where a release
  and the waiter's acquire would take two), with a new lease; the waiters' mark goes with it, so the waiters
  registered on the holder are rung when the lock is at last released.

  KEYS[1] owner: string, the holder's token (+ WAITED once someone waits), expiring with the lease
  ARGV[1] token: the holder's token
  ARGV[2] waiterToken: the waiter's token
  ARGV[3] leaseMs: the waiter's lease

  Returns 1 when handed over, or 0 when the holder's lease had already ended (nothing is written).
]]
--- @include lib/lock
local owner = KEYS[1]
local token, waiterToken, leaseMs = ARGV[1], ARGV[2], ARGV[3]
local held = heldBy(owner, token)
if not held then
  return 0
end
if waitedFor(held) then
  waiterToken = waiterToken .. WAITED
end
redis.call('SET', owner, waiterToken, 'PX', leaseMs)
return 1
