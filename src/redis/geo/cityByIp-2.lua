--[[
  cityByIp: the city of an address: the range with the greatest start at or below it, if it also ends at or
  above it (an address in a gap between ranges finds nothing, where the book's lookup took the previous range).
  Members are "<first>|<last>|<lat>|<lon>|<id>"; '|' sorts below '}', so "[<hex>}" bounds every range starting
  at <hex>.

  KEYS[1] ranges: sorted set, every score 0, the ranges of the address's family (IPv4 or IPv6), members as above
  KEYS[2] cities: hash, city id -> city JSON
  ARGV[1] hex: the address as fixed-width lowercase hex

  Returns {city id, latitude, longitude, city JSON or false}, or false when no range holds the address.
]]
local ranges, cities = KEYS[1], KEYS[2]
local hex = ARGV[1]
local found = redis.call('ZRANGE', ranges, '[' .. hex .. '}', '-', 'BYLEX', 'REV', 'LIMIT', 0, 1)
if #found == 0 then
  return false
end
local last, lat, lon, id = string.match(found[1], '^%x+|(%x+)|([^|]*)|([^|]*)|(.*)$')
if not last or last < hex then
  return false
end
return { id, lat, lon, redis.call('HGET', cities, id) }
