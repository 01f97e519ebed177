-- inChunks: calls fn(first, last) over 1..n in slices of at most 1000 (Lua's unpack has a small stack).
local function inChunks(n, fn)
  for first = 1, n, 1000 do
    fn(first, math.min(first + 999, n))
  end
end
