-- counter-add: add counts to a counter at every precision (the book's update_counter, for many samples at once).
-- KEYS[1..n] the counter's hashes, one per precision  ARGV[1..n] those precisions (s)
-- ARGV[n+1], ARGV[n+2], ...: pairs of time (s) and count
-- Returns 1.
local n = #KEYS
for i = n + 1, #ARGV, 2 do
  local t, count = tonumber(ARGV[i]), tonumber(ARGV[i + 1])
  for p = 1, n do
    local precision = tonumber(ARGV[p])
    redis.call('HINCRBY', KEYS[p], math.floor(t / precision) * precision, count)
  end
end
return 1
