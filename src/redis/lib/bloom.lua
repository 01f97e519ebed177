-- Scalable Bloom filters in a bitmap (RedisBloom's BF.RESERVE/ADD/EXISTS without the module). A filter is a list
-- of sub-filters side by side in one string: sub-filter i has m<i> bits from offset o<i>, k<i> hashes, holds
-- c<i> items at error rate p<i>; when the newest is full, a new one of twice the capacity at half the rate is
-- appended. An item's positions come from redis.sha1hex by double hashing: three 32-bit words h1, h2, h3 give
-- a = h1 + i*h3 and b in [1, m-1], and positions a + j*b mod m for j = 0..k-1 (Kirsch and Mitzenmacher).

-- bloomMeta: the filter's layout as stored in its meta hash, or nil when it was never reserved.
local function bloomMeta(meta)
  local flat = redis.call('HGETALL', meta)
  if #flat == 0 then
    return nil
  end
  local h = {}
  for i = 1, #flat, 2 do
    h[flat[i]] = flat[i + 1]
  end
  local filters = {}
  for i = 1, tonumber(h.filters) do
    filters[i] = {
      m = tonumber(h['m' .. i]),
      k = tonumber(h['k' .. i]),
      o = tonumber(h['o' .. i]),
      c = tonumber(h['c' .. i]),
      n = tonumber(h['n' .. i]),
      p = tonumber(h['p' .. i]),
    }
  end
  return { ready = h.ready == '1', filters = filters }
end

-- bloomAppend: a new newest sub-filter for `capacity` items at `errorRate` (m = -n ln p / ln2^2, k = -log2 p). The
-- field `layout` repeats every sub-filter's "m,k,o;" so that a check reads one field.
local function bloomAppend(meta, filters, capacity, errorRate)
  local i = #filters + 1
  local ln2 = math.log(2)
  local m = math.ceil(capacity * -math.log(errorRate) / (ln2 * ln2))
  local k = math.ceil(-math.log(errorRate) / ln2)
  local o = 0
  if i > 1 then
    o = filters[i - 1].o + filters[i - 1].m
  end
  local p = string.format('%.17g', errorRate)
  filters[i] = { m = m, k = k, o = o, c = capacity, n = 0, p = errorRate }
  local layout = {}
  for j = 1, i do
    layout[j] = string.format('%d,%d,%d;', filters[j].m, filters[j].k, filters[j].o)
  end
  redis.call('HSET', meta, 'filters', i, 'm' .. i, m, 'k' .. i, k, 'o' .. i, o, 'c' .. i, capacity, 'n' .. i, 0, 'p' .. i, p,
    'layout', table.concat(layout))
end

-- bloomLayout: what a check needs, from one read: whether the filter is ready, and each sub-filter's m, k and o;
-- nil when it was never reserved.
local function bloomLayout(meta)
  local got = redis.call('HMGET', meta, 'ready', 'layout')
  if not got[2] then
    return nil
  end
  local filters = {}
  for m, k, o in string.gmatch(got[2], '(%d+),(%d+),(%d+);') do
    filters[#filters + 1] = { m = tonumber(m), k = tonumber(k), o = tonumber(o) }
  end
  return { ready = got[1] == '1', filters = filters }
end

-- bloomReserve: creates the filter (`ready` '1': it knows every item there is) unless it exists; whether it did.
local function bloomReserve(meta, capacity, errorRate, ready)
  if redis.call('EXISTS', meta) == 1 then
    return false
  end
  redis.call('HSET', meta, 'ready', ready)
  bloomAppend(meta, {}, tonumber(capacity), tonumber(errorRate))
  return true
end

-- bloomHashes: the item's three 32-bit words.
local function bloomHashes(item)
  local hex = redis.sha1hex(item)
  return tonumber(string.sub(hex, 1, 8), 16), tonumber(string.sub(hex, 9, 16), 16), tonumber(string.sub(hex, 17, 24), 16)
end

-- bloomStart: the first position of the item in sub-filter i (of m bits), and the step between them.
local function bloomStart(f, i, h1, h2, h3)
  return (h1 + i * h3) % f.m, h2 % (f.m - 1) + 1
end

-- bloomHas: whether some sub-filter has every bit of the item set; a sub-filter is left at its first clear bit (for
-- an item it lacks, after two reads on average).
local function bloomHas(bits, filters, h1, h2, h3)
  for i = #filters, 1, -1 do
    local f = filters[i]
    local a, b = bloomStart(f, i, h1, h2, h3)
    local all = true
    for j = 0, f.k - 1 do
      if redis.call('GETBIT', bits, f.o + (a + j * b) % f.m) == 0 then
        all = false
        break
      end
    end
    if all then
      return true
    end
  end
  return false
end

-- bloomAdd: adds the item to the newest sub-filter unless some sub-filter has it (then 0), growing when it is full.
local function bloomAdd(meta, bits, filters, item)
  local h1, h2, h3 = bloomHashes(item)
  if bloomHas(bits, filters, h1, h2, h3) then
    return 0
  end
  local i = #filters
  local f = filters[i]
  local a, b = bloomStart(f, i, h1, h2, h3)
  local args = {}
  for j = 0, f.k - 1 do
    args[#args + 1] = 'SET'
    args[#args + 1] = 'u1'
    args[#args + 1] = f.o + (a + j * b) % f.m
    args[#args + 1] = 1
  end
  redis.call('BITFIELD', bits, unpack(args))
  f.n = redis.call('HINCRBY', meta, 'n' .. i, 1)
  if f.n >= f.c then
    bloomAppend(meta, filters, f.c * 2, f.p * 0.5)
  end
  return 1
end
