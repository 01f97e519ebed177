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

-- bloomAppend: a new newest sub-filter for `capacity` items at `errorRate` (m = -n ln p / ln2^2, k = -log2 p).
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
  redis.call('HSET', meta, 'filters', i, 'm' .. i, m, 'k' .. i, k, 'o' .. i, o, 'c' .. i, capacity, 'n' .. i, 0, 'p' .. i, p)
  filters[i] = { m = m, k = k, o = o, c = capacity, n = 0, p = errorRate }
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

-- bloomArgs: BITFIELD arguments reading (op 'GET') or setting (op 'SET') the item's bits in sub-filter i.
local function bloomArgs(op, f, i, h1, h2, h3)
  local a = (h1 + i * h3) % f.m
  local b = h2 % (f.m - 1) + 1
  local args = {}
  for j = 0, f.k - 1 do
    args[#args + 1] = op
    args[#args + 1] = 'u1'
    args[#args + 1] = f.o + (a + j * b) % f.m
    if op == 'SET' then
      args[#args + 1] = 1
    end
  end
  return args
end

-- bloomHas: whether some sub-filter has every bit of the item set.
local function bloomHas(bits, filters, h1, h2, h3)
  for i = #filters, 1, -1 do
    local got = redis.call('BITFIELD_RO', bits, unpack(bloomArgs('GET', filters[i], i, h1, h2, h3)))
    local all = true
    for j = 1, #got do
      if got[j] == 0 then
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
  redis.call('BITFIELD', bits, unpack(bloomArgs('SET', f, i, h1, h2, h3)))
  f.n = redis.call('HINCRBY', meta, 'n' .. i, 1)
  if f.n >= f.c then
    bloomAppend(meta, filters, f.c * 2, f.p * 0.5)
  end
  return 1
end
