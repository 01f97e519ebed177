-- addCounts: add counts to a counter at every precision (the book's update_counter, for many samples at once).
-- KEYS: the counter's hashes, one per precision; ARGV: those precisions (s), then pairs of time (s) and count.
-- Returns 1.
local hashes = KEYS
local n = #hashes
for i = n + 1, #ARGV, 2 do
  local t, count = tonumber(ARGV[i]), tonumber(ARGV[i + 1])
  for p = 1, n do
    local precision = tonumber(ARGV[p])
    redis.call('HINCRBY', hashes[p], math.floor(t / precision) * precision, count)
  end
end
return 1
