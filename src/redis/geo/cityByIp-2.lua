-- cityByIp: the city of an address: the range with the greatest start at or below it, if it also ends at or
-- above it (an address in a gap between ranges finds nothing, where the book's lookup took the previous range).
-- Returns {city id, latitude, longitude, city JSON or false}, or false when no range holds the address.
-- Members are "<first>|<last>|<lat>|<lon>|<id>"; '|' sorts below '}', so "[<hex>}" bounds every range starting at <hex>.
local ranges, cities = KEYS[1], KEYS[2] -- the ranges of the address's family
local hex = ARGV[1] -- the address as fixed-width lowercase hex
local found = redis.call('ZRANGE', ranges, '[' .. hex .. '}', '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)
if #found == 0 then
  return false
end
local last, lat, lon, id = string.match(found[1], '^%x+|(%x+)|([^|]*)|([^|]*)|(.*)$')
if not last or last < hex then
  return false
end
return { id, lat, lon, redis.call('HGET', cities, id) }
