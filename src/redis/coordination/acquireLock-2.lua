--[[
  acquireLock: takes a lock if it is free, with a lease, and hands out the next fencing token; a caller that will
  wait registers as a waiter in the same step (it marks the holder's value), so the release rings for it.

  KEYS[1] owner: string, the holder's token (+ WAITED once someone waits), expiring with the lease
  KEYS[2] fence: string, the lock's fencing counter
  ARGV[1] token: the caller's random token
  ARGV[2] leaseMs: the lease's length
  ARGV[3] waits: '1' when the caller waits for a release if the lock is held, else '0'
  ARGV[4] others: '1' when other waiters of the caller's process wait for the lock: it is taken marked

  Returns {fence} when taken (> 0, one more than the previous holder's), else {0, ms left on the holder's lease}.
]]
--- @include lib/lock
local owner, fence = KEYS[1], KEYS[2]
local token, leaseMs, waits, others = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local value = token
if others == '1' then
  value = token .. WAITED
end
-- Redis 7: with GET, a refused SET NX answers the holder's value (nil when it took the lock).
local held = redis.call('SET', owner, value, 'NX', 'PX', leaseMs, 'GET')
if not held then
  return { redis.call('INCR', fence) }
end
if waits == '1' and not waitedFor(held) then
  redis.call('APPEND', owner, WAITED) -- keeps the lease's expiry
end
return { 0, math.max(redis.call('PTTL', owner), 1) }
