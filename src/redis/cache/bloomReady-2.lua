--[[
  bloomReady: marks a Bloom filter filled (ready: it now says no), but only for the holder of the fill's lease.

  KEYS[1] meta: hash, the filter's layout (lib/bloom.lua)
  KEYS[2] filling: string, the filler's token, expiring with its lease
  ARGV[1] token: the caller's token

  Returns 1 when marked, 0 when the lease had ended (another process fills it again).
]]
local meta, filling = KEYS[1], KEYS[2]
local token = ARGV[1]
if redis.call('GET', filling) ~= token then
  return 0
end
redis.call('HSET', meta, 'ready', 1)
redis.call('DEL', filling)
return 1
