-- swapCities: put a finished import in place of the previous data, all at once. The old data is freed in the
-- background (UNLINK), and a kind the import did not load (say, no IPv6 file) ends up empty.
-- Returns 1.
local live = { KEYS[1], KEYS[2], KEYS[3] } -- ranges4, ranges6, cities
local loading = { KEYS[4], KEYS[5], KEYS[6] } -- the same, as the import filled them
local generation = KEYS[7] -- bumped
for i = 1, 3 do
  redis.call('UNLINK', live[i])
  if redis.call('EXISTS', loading[i]) == 1 then
    redis.call('RENAME', loading[i], live[i])
  end
end
redis.call('INCR', generation)
return 1
