--[[
  handOffRedlock: on one of RedLock's independent servers, the holder passes its key straight to a waiter of its own
  process, with the waiter's lease (one round trip where a release and the waiter's next attempt would take two).

  KEYS[1] owner: string, the holder's token, expiring with the lease
  ARGV[1] token: the holder's token
  ARGV[2] waiterToken: the waiter's token
  ARGV[3] leaseMs: the waiter's lease

  Returns 1 when handed over, 0 when the key held another token or none (nothing is written).
]]
local owner = KEYS[1]
local token, waiterToken, leaseMs = ARGV[1], ARGV[2], ARGV[3]
if redis.call('GET', owner) ~= token then
  return 0
end
redis.call('SET', owner, waiterToken, 'PX', leaseMs)
return 1
