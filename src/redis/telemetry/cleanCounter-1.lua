--[[
  cleanCounter: drop a counter hash's samples older than `cutoff` (numerically: the slots are numbers).

  KEYS[1] hash: one precision of a counter, slot start (s) → count
  ARGV[1] cutoff: s, slots that start before it go

  Returns the number of samples left.
]]
local hash = KEYS[1]
local cutoff = tonumber(ARGV[1])
local old = {}
for _, slot in ipairs(redis.call('HKEYS', hash)) do
  if tonumber(slot) < cutoff then
    old[#old + 1] = slot
  end
end
for i = 1, #old, 1000 do
  redis.call('HDEL', hash, unpack(old, i, math.min(i + 999, #old)))
end
return redis.call('HLEN', hash)
