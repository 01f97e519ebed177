--[[
  swapCities: put a finished import in place of the previous data, all at once. The old data is freed in the
  background (UNLINK), and a kind the import did not load (say, no IPv6 file) ends up empty.

  KEYS[1] ranges4: sorted set, the live IPv4 ranges
  KEYS[2] ranges6: sorted set, the live IPv6 ranges
  KEYS[3] cities: hash, the live cities
  KEYS[4] loading4: sorted set, the IPv4 ranges as the import filled them (renamed to ranges4)
  KEYS[5] loading6: sorted set, the IPv6 ranges as the import filled them (renamed to ranges6)
  KEYS[6] loadingCities: hash, the cities as the import filled them (renamed to cities)
  KEYS[7] generation: string counter, bumped

  Returns 1.
]]
local ranges4, ranges6, cities = KEYS[1], KEYS[2], KEYS[3]
local loading4, loading6, loadingCities = KEYS[4], KEYS[5], KEYS[6]
local generation = KEYS[7]
local live, loading = { ranges4, ranges6, cities }, { loading4, loading6, loadingCities }
for i = 1, 3 do
  redis.call('UNLINK', live[i])
  if redis.call('EXISTS', loading[i]) == 1 then
    redis.call('RENAME', loading[i], live[i])
  end
end
redis.call('INCR', generation)
return 1
