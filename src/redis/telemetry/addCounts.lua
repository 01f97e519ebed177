--[[
  addCounts: add counts to a counter at every precision (the book's update_counter, for many samples at once).

  KEYS[1..] hashes: the counter's hashes, slot start (s) → count, one per precision of ARGV[1], in its order
  ARGV[1] precisions: cjson array of the precisions (s), one per key
  ARGV[2..] samples: pairs of second (s) and count

  Returns 1.
]]
local precisions = cjson.decode(ARGV[1])
local FIRST_SAMPLE = 2 -- ARGV: the first sample's second, then its count, then the next sample's second ...
local second
for i = FIRST_SAMPLE, #ARGV do
  if (i - FIRST_SAMPLE) % 2 == 0 then
    second = tonumber(ARGV[i])
  else
    local count = tonumber(ARGV[i])
    for p, precision in ipairs(precisions) do
      redis.call('HINCRBY', KEYS[p], math.floor(second / precision) * precision, count)
    end
  end
end
return 1
