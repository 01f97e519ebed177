--[[
  bloomAdd: adds items to a Bloom filter (reserving it, not ready, with `capacity` and `errorRate` if it does not
  exist: what existed before it must then be filled in); a full newest sub-filter is followed by a larger one.

  KEYS[1] meta: hash, the filter's layout (lib/bloom.lua)
  KEYS[2] bits: string, the sub-filters' bits
  ARGV[1] capacity: items of the first sub-filter, if the filter is created
  ARGV[2] errorRate: its false-positive rate when full
  ARGV[3..] items: the items, one each

  Returns per item 1 when added, 0 when the filter had it (or a false positive said so).
]]
--- @include lib/bloom
local meta, bits = KEYS[1], KEYS[2]
local capacity, errorRate = ARGV[1], ARGV[2]
bloomReserve(meta, capacity, errorRate, 0)
local filters = bloomMeta(meta).filters
local added = {}
for i = 3, #ARGV do
  added[#added + 1] = bloomAdd(meta, bits, filters, ARGV[i])
end
return added
