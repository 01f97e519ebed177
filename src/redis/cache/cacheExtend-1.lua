--[[
  cacheExtend: gives the holder of a lease (a cache entry's lock, a Bloom filter's fill) `leaseMs` from now.

  KEYS[1] lease: string, the holder's token
  ARGV[1] token: the caller's token
  ARGV[2] leaseMs: the new lease's length

  Returns 1 when extended, 0 when the lease was no longer the caller's.
]]
local lease = KEYS[1]
local token, leaseMs = ARGV[1], ARGV[2]
if redis.call('GET', lease) ~= token then
  return 0
end
redis.call('PEXPIRE', lease, leaseMs)
return 1
