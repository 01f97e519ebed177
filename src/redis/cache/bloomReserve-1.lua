--[[
  bloomReserve: creates a Bloom filter for `capacity` items at `errorRate`, ready (it knows every item: none yet),
  unless it exists (then nothing changes).

  KEYS[1] meta: hash, the filter's layout (lib/bloom.lua)
  ARGV[1] capacity: items of the first sub-filter
  ARGV[2] errorRate: its false-positive rate when full

  Returns 1 when created, 0 when it existed.
]]
--- @include lib/bloom
local meta = KEYS[1]
local capacity, errorRate = ARGV[1], ARGV[2]
if bloomReserve(meta, capacity, errorRate, 1) then
  return 1
end
return 0
