--[[
  releaseLock: frees a lock, but only for its holder, and rings the lock's doorbell when someone waits for it. Also
  the last release of a reentrant lock at depth 1 by the process that holds it, given the lock's whole value
  ("<owner> <token> 1 <fence>", lib/reentrant.lua) as its token: it compares, deletes and rings as releaseReentrant
  would there.

  KEYS[1] owner: string, the holder's token (+ once someone waits, lib/lock's WAITED), expiring with the lease; also
          the name of the lock's doorbell, a sharded pub/sub channel (keys.ts: lockOwner, reentrantLock)
  ARGV[1] token: the caller's token (or a reentrant lock's whole value at depth 1, without the mark)

  Returns 1 when released, 2 when released and rung (someone waited), 0 when the lease had already ended (expired,
  or taken by another holder) or, for a reentrant lock, when its value is not the one given (another depth or
  fence, or another holder).
]]
-- No lib/lock: each function a script includes is a closure made on every call, and this is every holder's last
-- step. Its checks inline, no string is made unless it rings, and the doorbell is the key's own name, so it takes
-- one argument, as redis-semaphore's release (its Redis CPU per call: docs/benchmarks.md).
local owner = KEYS[1]
local token = ARGV[1]
local held = redis.call('GET', owner)
if held == token then
  redis.call('DEL', owner)
  return 1
end
-- Marked (someone waits): the token and WAITED ('+', byte 43) after it.
if not held or #held ~= #token + 1 or string.byte(held, -1) ~= 43 or string.find(held, token, 1, true) ~= 1 then
  return 0
end
redis.call('DEL', owner)
-- A value no GET can return and no other release repeats, in one word (a reentrant value's spaces made '_'):
-- every release wakes the waiters' pollers.
redis.call('SPUBLISH', owner, owner .. ' free:' .. string.gsub(token, ' ', '_'))
return 2
