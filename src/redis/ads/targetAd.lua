-- targetAd: the book's target_ads and record_targeting_result in one step. The ads of any of the locations are
-- the candidates; each scores its eCPM plus, for the page's words it has, half its smallest and half its largest
-- word bonus (the book's ZUNIONSTORE of base, MIN and MAX with weights 1, .5, .5). With exploration, each CPC and
-- CPA candidate's click (action) rate is drawn from its Beta posterior instead (Thompson sampling). The best
-- candidate that the viewer has not seen `cap` times today and whose budgets are not spent is picked; its view is
-- recorded (per word of the page it has, per viewer, per type; a CPM ad is charged), with the targeting, which
-- lives 15 minutes; every 100th view of an ad makes it due to be learned again.
-- What the page's words add to an ad lies between the lowest and the highest of 0 and its bonuses (on its card),
-- so candidates are taken by their highest possible score and an ad's words are looked up only while it could
-- still win: an ad that learned no bonus costs no lookup at all.
-- Returns {ad id, eCPM on this page, 1 when exploring changed the pick (else 0), matched words...}, {} when no ad
-- serves; STATUS.WRONG_DAY when ARGV[1] is not today.
--- @include lib/ads
--- @include lib/chunks
local K = {
  views = KEYS[1], events = KEYS[2], spent = KEYS[3], budgets = KEYS[4], dailyBudgets = KEYS[5], daily = KEYS[6],
  typeStats = KEYS[7], seen = KEYS[8], targetings = KEYS[9], vocabulary = KEYS[10], wordViews = KEYS[11],
  learnPending = KEYS[12], queueReady = KEYS[13], queueDelayed = KEYS[14],
}
local FIXED = 14 -- then the locations' hashes, then the sets of the page's words (which are ARGV[8 ..])
local day, nonce, cap, explore, seed, task, nLocations =
  tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]), ARGV[4] == '1', tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7])
local TARGETINGS_TTL = 1020 -- seconds: a minute's targetings live 15 minutes after its end, and a margin

local now = nowMs()
if dayOf(now) ~= day then
  return STATUS.WRONG_DAY
end

-- The candidates, with their cards: their type, value, eCPM and bonus range.
local ranked, adType, value, ecpm, low, high = {}, {}, {}, {}, {}, {}
for i = FIXED + 1, FIXED + nLocations do
  local cards = redis.call('HGETALL', KEYS[i])
  for j = 1, #cards, 2 do
    local id = cards[j]
    if adType[id] == nil then
      ranked[#ranked + 1] = id
      adType[id], value[id], ecpm[id], low[id], high[id] = struct.unpack(CARD, cards[j + 1])
    end
  end
end
if #ranked == 0 then
  return {}
end
local function column(name)
  local values = {}
  inChunks(#ranked, function(first, last)
    local reply = redis.call('HMGET', K[name], unpack(ranked, first, last))
    for j = first, last do
      values[ranked[j]] = reply[j - first + 1]
    end
  end)
  return values
end

-- The page's words that some ad has, and what they add to one ad: its smallest and largest bonus among them.
local pageWords = {}
inChunks(#ARGV - 7, function(first, last)
  local known = redis.call('SMISMEMBER', K.vocabulary, unpack(ARGV, 7 + first, 7 + last))
  for i = first, last do
    if known[i - first + 1] == 1 then
      pageWords[#pageWords + 1] = i
    end
  end
end)
local matchedOf, lowOf, highOf = {}, {}, {}
local function lookUp(id)
  if matchedOf[id] == nil then
    matchedOf[id] = {}
    for _, i in ipairs(pageWords) do
      local bonus = redis.call('ZSCORE', KEYS[FIXED + nLocations + i], id)
      if bonus then
        bonus = tonumber(bonus)
        table.insert(matchedOf[id], i)
        lowOf[id], highOf[id] = math.min(lowOf[id] or bonus, bonus), math.max(highOf[id] or bonus, bonus)
      end
    end
  end
end
-- An ad's score on this page from `base` (the book's base * 1 + min * .5 + max * .5).
local function onPage(id, base)
  if low[id] == 0 and high[id] == 0 then
    return base -- every bonus it has is 0
  end
  lookUp(id)
  if lowOf[id] == nil then
    return base
  end
  return base + 0.5 * lowOf[id] + 0.5 * highOf[id]
end

-- Whether the viewer may see an ad (its cap) and the ad may serve (its budgets), asked once per ad.
local allowed = {}
local function servable(id)
  if allowed[id] == nil then
    allowed[id] = (cap == 0 or (tonumber(redis.call('HGET', K.seen, id)) or 0) < cap) and withinBudget(K, id)
  end
  return allowed[id]
end
-- Whether id `a` follows id `b` in byte order (Lua's own comparison follows the server's locale).
local function after(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then
      return x > y
    end
  end
  return #a > #b
end
-- The servable ad of the highest score from `base`, ties to the greater id (the book's ZREVRANGE), and its score.
-- Candidates come by their highest possible score (base + .5 * high + .5 * high rounds as the score does, so it
-- is never below it): the first few by scans (the first is usually the answer), the rest, when needed, sorted
-- once; the walk stops at the first that could not beat the best found.
local function best(base)
  local bound = {}
  for _, id in ipairs(ranked) do
    bound[id] = base[id] + 0.5 * high[id] + 0.5 * high[id]
  end
  local function precedes(a, b)
    if bound[a] ~= bound[b] then
      return bound[a] > bound[b]
    end
    return after(a, b)
  end
  local top, topScore
  local function consider(id) -- false when neither it nor any after it could win
    if top and (bound[id] < topScore or (bound[id] == topScore and after(top, id))) then
      return false
    end
    local s = onPage(id, base[id])
    if (top == nil or s > topScore or (s == topScore and after(id, top))) and servable(id) then
      top, topScore = id, s
    end
    return true
  end
  local done = {}
  for _ = 1, 4 do
    local first, firstBound
    for _, id in ipairs(ranked) do
      local b = bound[id]
      if not done[id] and (first == nil or b > firstBound or (b == firstBound and after(id, first))) then
        first, firstBound = id, b
      end
    end
    if first == nil or not consider(first) then
      return top, topScore
    end
    done[first] = true
  end
  local rest = {}
  for _, id in ipairs(ranked) do
    if not done[id] then
      rest[#rest + 1] = id
    end
  end
  table.sort(rest, precedes)
  for _, id in ipairs(rest) do
    if not consider(id) then
      break
    end
  end
  return top, topScore
end

local picked, score = best(ecpm)
if not picked then
  return {}
end
local explored = 0
if explore then
  -- Thompson sampling: a CPC (CPA) ad's clicks (actions) per view drawn from its Beta(1 + events, b + misses)
  -- posterior, where b makes a new ad's expected rate its type's average, sharpened: both parameters are doubled,
  -- which keeps its mean and divides its variance by about four (Chapelle and Li's posterior reshaping with
  -- alpha = 1/2: less exploration of ads already known to be worse; bench:ads measures it). A CPM ad's price is
  -- certain.
  local SHARPEN = 2
  local function uniform() -- Park and Miller's minimal standard generator, seeded by the caller
    seed = (seed * 16807) % 2147483647
    return seed / 2147483647
  end
  local spare
  local function normal() -- Box and Muller's pair, the second kept for the next call
    if spare then
      local z = spare
      spare = nil
      return z
    end
    local r, t = math.sqrt(-2 * math.log(uniform())), 2 * math.pi * uniform()
    spare = r * math.sin(t)
    return r * math.cos(t)
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
  local views, events = column('views'), column('events')
  local prior, sampled = {}, {}
  for _, id in ipairs(ranked) do
    local t = adType[id]
    if t == 'CPM' then
      sampled[id] = ecpm[id]
    else
      prior[t] = prior[t] or math.max(1000 / typeAverage(K, t) - 1, 1)
      local hits = tonumber(events[id]) or 0
      local misses = math.max((tonumber(views[id]) or 0) - hits, 0)
      local x = gamma(SHARPEN * (1 + hits))
      sampled[id] = 1000 * value[id] * x / (x + gamma(SHARPEN * (prior[t] + misses)))
    end
  end
  local choice = best(sampled)
  if choice ~= picked then
    picked, score, explored = choice, onPage(choice, ecpm[choice]), 1
  end
end

-- The view, as the book's record_targeting_result counts it, and the targeting that a click names.
local viewsNow = redis.call('HINCRBY', K.views, picked, 1)
redis.call('HINCRBY', K.typeStats, adType[picked] .. ':views', 1)
lookUp(picked)
local matched = {}
for _, i in ipairs(matchedOf[picked]) do
  matched[#matched + 1] = ARGV[7 + i]
  redis.call('HINCRBY', K.wordViews, picked .. ' ' .. ARGV[7 + i], 1)
end
if cap > 0 then
  redis.call('HINCRBY', K.seen, picked, 1)
  redis.call('EXPIRE', K.seen, secondsAfterDay(day, now))
end
if adType[picked] == 'CPM' then
  charge(K, picked, value[picked] / 1000, now)
end
redis.call('HSET', K.targetings, nonce, picked .. ' ' .. now .. ' ' .. table.concat(matched, ' '))
redis.call('EXPIRE', K.targetings, TARGETINGS_TTL)
if viewsNow % 100 == 0 then
  dueToLearn(K, picked, task, now)
end
return { picked, num(score), explored, unpack(matched) }
