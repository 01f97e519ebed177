--[[
  releaseLock: frees a lock, but only for its holder, and rings the lock's doorbell when someone waits for it.

  KEYS[1] owner: string, the holder's token (+ WAITED once someone waits), expiring with the lease
  ARGV[1] token: the caller's token
  ARGV[2] bell: the lock's sharded pub/sub channel

  Returns 1 when released, 0 when the lease had already ended (expired, or taken by another holder).
]]
--- @include lib/lock
local owner = KEYS[1]
local token, bell = ARGV[1], ARGV[2]
local held = heldBy(owner, token)
if not held then
  return 0
end
redis.call('DEL', owner)
if waitedFor(held) then
  -- A value no GET can return and no other release repeats: every release wakes the waiters' pollers.
  redis.call('SPUBLISH', bell, owner .. ' free:' .. token)
end
return 1
