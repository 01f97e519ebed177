-- counter-clean: drop a counter hash's samples older than `cutoff` (numerically: the slots are numbers).
-- KEYS[1] the counter's hash at one precision
-- ARGV[1] cutoff (s): slots that start before it go
-- Returns the number of samples left.
local cutoff = tonumber(ARGV[1])
local old = {}
for _, slot in ipairs(redis.call('HKEYS', KEYS[1])) do
  if tonumber(slot) < cutoff then
    old[#old + 1] = slot
  end
end
for i = 1, #old, 1000 do
  redis.call('HDEL', KEYS[1], unpack(old, i, math.min(i + 999, #old)))
end
return redis.call('HLEN', KEYS[1])
