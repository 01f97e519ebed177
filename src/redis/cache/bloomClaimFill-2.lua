--[[
  bloomClaimFill: takes the lease to fill a Bloom filter from what existed before it, unless it is ready; reserves
  the filter (not ready) first, so that items created during the fill are added to it by their creators.

  KEYS[1] meta: hash, the filter's layout (lib/bloom.lua)
  KEYS[2] filling: string, the filler's token, expiring with its lease
  ARGV[1] token: the caller's random token
  ARGV[2] leaseMs: the lease's length
  ARGV[3] capacity: items of the first sub-filter, if the filter is created
  ARGV[4] errorRate: its false-positive rate when full

  Returns {1} when the filter is ready (nothing to do), {2} when the caller fills it, else {0, ms left on the
  filler's lease}.
]]
--- @include lib/bloom
local meta, filling = KEYS[1], KEYS[2]
local token, leaseMs, capacity, errorRate = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
bloomReserve(meta, capacity, errorRate, 0)
if redis.call('HGET', meta, 'ready') == '1' then
  return { 1 }
end
if redis.call('SET', filling, token, 'NX', 'PX', leaseMs) then
  return { 2 }
end
return { 0, math.max(redis.call('PTTL', filling), 1) }
