--[[
  fenceLock: the next fencing token of a lock, for its holder only: higher than any a holder of the lock got before
  (each holder asks while it holds, so a later holder's is always higher), none once the lease has ended.

  KEYS[1] owner: string, the holder's token (+ once someone waits), expiring with the lease
  KEYS[2] fence: string, the lock's fencing counter
  ARGV[1] token: the caller's token

  Returns the fencing token (> 0), or 0 when the caller's lease had ended (nothing is written).
]]
--- @include lib/lock
local owner, fence = KEYS[1], KEYS[2]
if not heldBy(owner, ARGV[1]) then
  return 0
end
return redis.call('INCR', fence)
