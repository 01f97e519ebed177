-- targetAd: the book's target_ads and record_targeting_result in one step. The ads of any of the locations are
-- the candidates; each scores its eCPM plus, for the page's words it has, half its smallest and half its largest
-- word bonus (the book's ZUNIONSTORE of base, MIN and MAX with weights 1, .5, .5). With exploration, each CPC and
-- CPA candidate's click (action) rate is drawn from its Beta posterior instead (Thompson sampling). The best
-- candidate that the viewer has not seen `cap` times today and whose budgets are not spent is picked; its view is
-- recorded (per word of the page it has, per viewer, per type; a CPM ad is charged), with the targeting, which
-- lives 15 minutes; every 100th view of an ad makes it due to be learned again.
-- Returns {ad id, eCPM on this page, 1 when exploring changed the pick (else 0), matched words...}, {} when no ad
-- serves; STATUS.WRONG_DAY when ARGV[1] is not today.
--- @include lib/ads
--- @include lib/chunks
local K = {
  ecpm = KEYS[1], types = KEYS[2], values = KEYS[3], views = KEYS[4], clicks = KEYS[5], actions = KEYS[6],
  spent = KEYS[7], budgets = KEYS[8], dailyBudgets = KEYS[9], daily = KEYS[10], typeStats = KEYS[11],
  seen = KEYS[12], targetings = KEYS[13], vocabulary = KEYS[14], wordViews = KEYS[15], learnPending = KEYS[16],
  queueReady = KEYS[17], queueDelayed = KEYS[18],
}
local FIXED = 18 -- then the locations' sets, then the sets of the page's words (which are ARGV[8 ..])
local day, nonce, cap, explore, seed, task, nLocations =
  tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]), ARGV[4] == '1', tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7])
local TARGETINGS_TTL = 1020 -- seconds: a minute's targetings live 15 minutes after its end, and a margin

local now = nowMs()
if dayOf(now) ~= day then
  return STATUS.WRONG_DAY
end

local candidates = redis.call('SUNION', unpack(KEYS, FIXED + 1, FIXED + nLocations))
local score, isCandidate = {}, {}
inChunks(#candidates, function(first, last)
  local ecpms = redis.call('ZMSCORE', K.ecpm, unpack(candidates, first, last))
  for j = first, last do
    score[candidates[j]] = tonumber(ecpms[j - first + 1])
    isCandidate[candidates[j]] = true
  end
end)

-- Word bonuses: the smallest and the largest of each candidate's, over the page's words it has.
local low, high, pageWords = {}, {}, {}
local nWords = #ARGV - 7
local function bonus(id, b)
  b = tonumber(b)
  if low[id] == nil or b < low[id] then
    low[id] = b
  end
  if high[id] == nil or b > high[id] then
    high[id] = b
  end
end
inChunks(nWords, function(first, last)
  local known = redis.call('SMISMEMBER', K.vocabulary, unpack(ARGV, 7 + first, 7 + last))
  for i = first, last do
    if known[i - first + 1] == 1 then
      local wordKey = KEYS[FIXED + nLocations + i]
      pageWords[#pageWords + 1] = i
      if redis.call('ZCARD', wordKey) <= #candidates then
        local entries = redis.call('ZRANGE', wordKey, 0, -1, 'WITHSCORES')
        for j = 1, #entries, 2 do
          if isCandidate[entries[j]] then
            bonus(entries[j], entries[j + 1])
          end
        end
      else
        inChunks(#candidates, function(a, b)
          local found = redis.call('ZMSCORE', wordKey, unpack(candidates, a, b))
          for j = a, b do
            if found[j - a + 1] then
              bonus(candidates[j], found[j - a + 1])
            end
          end
        end)
      end
    end
  end
end)
local ranked = {}
for _, id in ipairs(candidates) do
  if score[id] then
    if low[id] then
      score[id] = score[id] + 0.5 * low[id] + 0.5 * high[id]
    end
    ranked[#ranked + 1] = id
  end
end

-- Whether the viewer may see an ad (its cap) and the ad may serve (its budgets), asked once per ad.
local allowed = {}
local function servable(id)
  if allowed[id] == nil then
    allowed[id] = (cap == 0 or (tonumber(redis.call('HGET', K.seen, id)) or 0) < cap) and withinBudget(K, id)
  end
  return allowed[id]
end
-- The first servable ad by `by`, highest first; ties go to the greater id (the book's ZREVRANGE).
local function best(by)
  table.sort(ranked, function(a, b)
    if by[a] ~= by[b] then
      return by[a] > by[b]
    end
    return a > b
  end)
  for _, id in ipairs(ranked) do
    if servable(id) then
      return id
    end
  end
end

local picked = best(score)
if not picked then
  return {}
end
local column = {}
local function read(name)
  column[name] = {}
  inChunks(#ranked, function(first, last)
    local values = redis.call('HMGET', K[name], unpack(ranked, first, last))
    for j = first, last do
      column[name][ranked[j]] = values[j - first + 1]
    end
  end)
end
local explored = 0
if explore then
  -- Thompson sampling: a CPC (CPA) ad's clicks (actions) per view drawn from Beta(1 + events, b + misses), where
  -- b makes a new ad's expected rate its type's average; a CPM ad's price is certain.
  local function uniform() -- Park and Miller's minimal standard generator, seeded by the caller
    seed = (seed * 16807) % 2147483647
    return seed / 2147483647
  end
  local function normal()
    return math.sqrt(-2 * math.log(uniform())) * math.cos(2 * math.pi * uniform())
  end
  local function gamma(shape) -- Marsaglia and Tsang, for a shape of at least 1
    local d = shape - 1 / 3
    local c = 1 / math.sqrt(9 * d)
    while true do
      local x, v
      repeat
        x = normal()
        v = 1 + c * x
      until v > 0
      v = v * v * v
      local u = uniform()
      if u < 1 - 0.0331 * x ^ 4 or math.log(u) < 0.5 * x * x + d * (1 - v + math.log(v)) then
        return d * v
      end
    end
  end
  for _, name in ipairs({ 'types', 'values', 'views', 'clicks', 'actions' }) do
    read(name)
  end
  local prior = {}
  local sampled = {}
  for _, id in ipairs(ranked) do
    local adType = column.types[id]
    if adType == 'CPM' then
      sampled[id] = score[id]
    else
      prior[adType] = prior[adType] or math.max(1000 / typeAverage(K, adType) - 1, 1)
      local events = tonumber(column[eventsOf(adType)][id]) or 0
      local misses = math.max((tonumber(column.views[id]) or 0) - events, 0)
      local x = gamma(1 + events)
      local rate = x / (x + gamma(prior[adType] + misses))
      sampled[id] = 1000 * tonumber(column.values[id]) * rate
      if low[id] then
        sampled[id] = sampled[id] + 0.5 * low[id] + 0.5 * high[id]
      end
    end
  end
  local choice = best(sampled)
  if choice ~= picked then
    picked, explored = choice, 1
  end
end

-- The view, as the book's record_targeting_result counts it, and the targeting that a click names.
local adType = redis.call('HGET', K.types, picked)
local views = redis.call('HINCRBY', K.views, picked, 1)
redis.call('HINCRBY', K.typeStats, adType .. ':views', 1)
local matched = {}
for _, i in ipairs(pageWords) do
  if redis.call('ZSCORE', KEYS[FIXED + nLocations + i], picked) then
    matched[#matched + 1] = ARGV[7 + i]
    redis.call('HINCRBY', K.wordViews, picked .. ' ' .. ARGV[7 + i], 1)
  end
end
if cap > 0 then
  redis.call('HINCRBY', K.seen, picked, 1)
  redis.call('EXPIRE', K.seen, secondsAfterDay(day, now))
end
if adType == 'CPM' then
  charge(K, picked, tonumber(redis.call('HGET', K.values, picked)) / 1000, now)
end
redis.call('HSET', K.targetings, nonce, picked .. ' ' .. now .. ' ' .. table.concat(matched, ' '))
redis.call('EXPIRE', K.targetings, TARGETINGS_TTL)
if views % 100 == 0 then
  dueToLearn(K, picked, task, now)
end
return { picked, num(score[picked]), explored, unpack(matched) }
