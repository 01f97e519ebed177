--[[
  releaseRedlock: frees a RedLock's key on one of its independent servers, but only for its holder. Unlike
  releaseLock it rings no doorbell: nobody listens on these servers (RedLock's waiters try again after a pause).

  KEYS[1] owner: string, the holder's token, expiring with the lease
  ARGV[1] token: the caller's token

  Returns 1 when released, 0 when the key held another token or none.
]]
local owner = KEYS[1]
local token = ARGV[1]
if redis.call('GET', owner) ~= token then
  return 0
end
redis.call('DEL', owner)
return 1
