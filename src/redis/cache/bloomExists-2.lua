--[[
  bloomExists: whether a Bloom filter may have each item (false: it surely does not).

  KEYS[1] meta: hash, the filter's layout (lib/bloom.lua)
  KEYS[2] bits: string, the sub-filters' bits
  ARGV[1..] items: the items, one each

  Returns {1, one 1 or 0 per item} when the filter is ready; {0} when it does not exist or is still being filled
  (then it cannot say no).
]]
--- @include lib/bloom
local meta, bits = KEYS[1], KEYS[2]
local layout = bloomLayout(meta)
if not layout or not layout.ready then
  return { 0 }
end
local reply = { 1 }
for i = 1, #ARGV do
  local h1, h2, h3 = bloomHashes(ARGV[i])
  reply[#reply + 1] = bloomHas(bits, layout.filters, h1, h2, h3) and 1 or 0
end
return reply
