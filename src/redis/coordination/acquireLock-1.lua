--[[
  acquireLock: the take of a caller that will wait (a caller that will not, and finds no waiter of its own process,
  sends a plain SET NX PX instead): takes the lock if it is free, with a lease; refused, registers the caller as a
  waiter in the same step (it marks the holder's value), so that the release rings for it.

  KEYS[1] owner: string, the holder's token (+ once someone waits), expiring with the lease
  ARGV[1] token: the caller's random token
  ARGV[2] leaseMs: the lease's length
  ARGV[3] others: '1' when other waiters of the caller's process wait: the lock is taken marked for them

  Returns {1} when taken, else {0, ms left on the holder's lease}.
]]
--- @include lib/lock
local owner = KEYS[1]
local token, leaseMs, others = ARGV[1], ARGV[2], ARGV[3]
local value = token
if others == '1' then
  value = token .. WAITED
end
-- Redis 7: with GET, a refused SET NX answers the holder's value (nil when it took the lock).
local held = redis.call('SET', owner, value, 'NX', 'PX', leaseMs, 'GET')
if not held then
  return { 1 }
end
if not waitedFor(held) then
  redis.call('APPEND', owner, WAITED) -- keeps the lease's expiry
end
return { 0, math.max(redis.call('PTTL', owner), 1) }
