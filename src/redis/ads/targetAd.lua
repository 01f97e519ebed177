--[[
  targetAd: the book's target_ads and record_targeting_result in one step, in one shard (docs/ads.md "Keys"). The
  shard's ads of any of the locations are the candidates; each scores its eCPM plus, for the page's words it has, half
  its smallest and half its largest word bonus (the book's ZUNIONSTORE of base, MIN and MAX with weights 1, .5, .5).
  With exploration, each CPC and CPA candidate's click (action) rate is drawn from its Beta posterior instead
  (Thompson sampling). The best candidate that the viewer has not seen `cap` times today and whose budgets are not
  spent is picked; its view is recorded (per word of the page it has, per viewer, per type; a CPM ad is charged), with
  the targeting, which lives 15 minutes; every 100th view of an ad makes it due to be learned again. What the page's
  words add to an ad lies between the lowest and the highest of 0 and its bonuses (on its card), so candidates are
  taken by their highest possible score and an ad's words are looked up only while it could still win: an ad that
  learned no bonus costs no lookup at all. Refuses with STATUS.WRONG_DAY when `day` is not Redis's day. Over several
  shards, a targeting is a `pick` in each shard (nothing written), then a `commit` of the best pick in its shard,
  which serves it only if the viewer's cap and its budgets still allow (else the caller picks again in that shard);
  one shard alone is `serve`: the pick and its view at once. The fixed keys are bound in the table K by these names
  (lib/ads.lua takes K).

  KEYS[1] views: hash, ad id → its views
  KEYS[2] spent: hash, ad id → the price of every event charged to it
  KEYS[3] budgets: hash, ad id → its total budget
  KEYS[4] dailyBudgets: hash, ad id → its daily budget
  KEYS[5] daily: hash, ad id → spent on the UTC day `day`
  KEYS[6] typeStats: hash, "<TYPE>:views|clicks|actions" → counts of the shard's ads of a type, "<TYPE>:avg",
    "<TYPE>:explored" → the views exploration picked (another ad than the learned eCPMs would have)
  KEYS[7] seen: hash, ad id → the viewer's views on the UTC day `day`
  KEYS[8] targetings: hash, the targetings of the minute, "<nonce>" → "<ad id> <ms> <matched words>"
  KEYS[9] vocabulary: set of the words some ad has
  KEYS[10] wordViews: hash, "<ad id> <word>" → views
  KEYS[11] learnPending: set of the ads due to be learned again
  KEYS[12] queueReady: list, the learning queue's ready tasks
  KEYS[13] queueDelayed: sorted set, the learning queue's delayed tasks
  KEYS[14..] indexes: from `locationsAt` (14) the hashes of the page's locations (ARGV[7] of them, ad id → card),
    then from `wordsAt` one sorted set per word of ARGV[10..], in that order (ad id → the word's bonus)
  ARGV[1] day: the UTC day (days since 1970) of KEYS[5] and KEYS[7]
  ARGV[2] nonce: the targeting's, which a click names
  ARGV[3] cap: the most views of one ad by the viewer a day, 0 for no cap
  ARGV[4] explore: '1' to sample the candidates' posteriors, '0' not
  ARGV[5] seed: of exploration's generator, 1 .. 2^31 - 2
  ARGV[6] task: the learning task queued when the ad becomes due
  ARGV[7] nLocations: how many locations' hashes KEYS has
  ARGV[8] mode: 'serve' (pick and record the view), 'pick' (pick, write nothing) or 'commit' (record a view of
    the ad `committed` if the viewer's cap and its budgets allow it, without picking)
  ARGV[9] committed: the ad a commit serves ('' otherwise)
  ARGV[10] exploredCommit: a commit, '1' when exploration picked `committed` over all shards (else '0')
  ARGV[11..] words: the page's distinct words, one each

  Returns, serving or committing: {ad id, eCPM on this page, 1 when exploring changed the pick (else 0; a commit
  returns exploredCommit), matched words...}, {} when no ad serves (a commit: the ad is gone, capped or out of budget); picking:
  {the book's pick, its eCPM on this page, the pick (differs with exploration), its sampled score, its eCPM on this
  page}, {} when no ad serves; STATUS.WRONG_DAY (nothing is written).
]]
--- @include lib/ads
local K = {
  views = KEYS[1], spent = KEYS[2], budgets = KEYS[3], dailyBudgets = KEYS[4], daily = KEYS[5], typeStats = KEYS[6],
  seen = KEYS[7], targetings = KEYS[8], vocabulary = KEYS[9], wordViews = KEYS[10], learnPending = KEYS[11],
  queueReady = KEYS[12], queueDelayed = KEYS[13],
}
local day, nonce, cap, explore, seed, task, nLocations, mode, committed =
  tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]), ARGV[4] == '1', tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7]),
  ARGV[8], ARGV[9]
local FIRST_WORD = 11 -- ARGV: the page's first word
local locationsAt = 14 -- KEYS: the first location's hash
local wordsAt = locationsAt + nLocations -- KEYS: the set of ARGV[FIRST_WORD]'s word, then the next word's ...
local TARGETINGS_TTL = 1020 -- seconds: a minute's targetings live 15 minutes after its end, and a margin

local now = nowMs()
if dayOf(now) ~= day then
  return STATUS.WRONG_DAY
end

-- The candidates, numbered 1 .. n, with the location's hash they were found in (`home`) and their cards: their
-- type, value, eCPM, bonus range, and events and views as learned (arrays by number: Lua's array part costs a
-- fraction of tables keyed by id). A commit's only candidate is its ad.
local ids, home, adType, value, ecpm, low, high, events, views = {}, {}, {}, {}, {}, {}, {}, {}, {}
local n = 0
-- an ad in two of the locations is one candidate; `alsoIn` lists the other locations' hashes it is in
local listed, alsoIn = nLocations > 1 and {} or nil, {}
local function found(l, id, card)
  local c = listed and listed[id]
  if c then
    alsoIn[c] = alsoIn[c] or {}
    table.insert(alsoIn[c], l)
  else
    n = n + 1
    if listed then
      listed[id] = n
    end
    ids[n], home[n] = id, l
    adType[n], value[n], ecpm[n], low[n], high[n], events[n], views[n] = struct.unpack(CARD, card)
  end
end
for l = locationsAt, wordsAt - 1 do
  if mode == 'commit' then
    local card = redis.call('HGET', KEYS[l], committed)
    if card then
      found(l, committed, card)
    end
  else
    local cards = redis.call('HGETALL', KEYS[l])
    for j = 1, #cards, 2 do
      found(l, cards[j], cards[j + 1])
    end
  end
end
if n == 0 then
  return {}
end

-- The page's words that some ad has (`pageWords`, numbered w = 1 ..) with their sets (`pageSets`), and what they
-- add to one ad: its smallest and largest bonus among them.
local pageWords, pageSets = {}, {}
local CHUNK = 1000 -- words asked at once (Lua's unpack has a small stack)
for first = FIRST_WORD, #ARGV, CHUNK do
  local last = math.min(first + CHUNK - 1, #ARGV)
  local known = redis.call('SMISMEMBER', K.vocabulary, unpack(ARGV, first, last))
  for i = first, last do
    if known[i - first + 1] == 1 then
      local w = #pageWords + 1
      pageWords[w], pageSets[w] = ARGV[i], KEYS[wordsAt + i - FIRST_WORD]
    end
  end
end
local matchedOf, lowOf, highOf = {}, {}, {} -- matchedOf[c]: the numbers w of candidate c's words on the page
local function lookUp(c)
  if matchedOf[c] == nil then
    matchedOf[c] = {}
    for w, set in ipairs(pageSets) do
      local bonus = redis.call('ZSCORE', set, ids[c])
      if bonus then
        bonus = tonumber(bonus)
        table.insert(matchedOf[c], w)
        lowOf[c], highOf[c] = math.min(lowOf[c] or bonus, bonus), math.max(highOf[c] or bonus, bonus)
      end
    end
  end
end
-- Candidate c's score on this page from `base` (the book's base * 1 + min * .5 + max * .5).
local function onPage(c, base)
  if low[c] == 0 and high[c] == 0 then
    return base -- every bonus it has is 0
  end
  lookUp(c)
  if lowOf[c] == nil then
    return base
  end
  return base + 0.5 * lowOf[c] + 0.5 * highOf[c]
end

-- Whether the viewer may see candidate c (its cap) and it may serve (its budgets), asked once per candidate.
local allowed = {}
local function servable(c)
  if allowed[c] == nil then
    allowed[c] = (cap == 0 or (tonumber(redis.call('HGET', K.seen, ids[c])) or 0) < cap) and withinBudget(K, ids[c])
  end
  return allowed[c]
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
local FIRST = 4 -- candidates taken by one pass before the rest is sorted
-- The servable candidate of the highest score from `base` (by number), ties to the greater id (the book's
-- ZREVRANGE), and its score. Candidates come by their highest possible score (base + .5 * high + .5 * high rounds
-- as the score does, so it is never below it): the first FIRST from one pass (the first is usually the answer),
-- the rest, when needed, sorted once; the walk stops at the first that could not beat the best found.
local function best(base)
  local bound = {}
  local function precedes(a, b)
    if bound[a] ~= bound[b] then
      return bound[a] > bound[b]
    end
    return after(ids[a], ids[b])
  end
  local first, floor = {}, -math.huge -- the FIRST candidates of the highest bounds, in order; the last one's bound
  for c = 1, n do
    local h = high[c]
    local b = base[c] + 0.5 * h + 0.5 * h
    bound[c] = b
    local k = #first
    if b >= floor and (k < FIRST or precedes(c, first[k])) then
      if k == FIRST then
        first[k] = nil
        k = k - 1
      end
      while k > 0 and precedes(c, first[k]) do
        first[k + 1] = first[k]
        k = k - 1
      end
      first[k + 1] = c
      if #first == FIRST then
        floor = bound[first[FIRST]]
      end
    end
  end
  local top, topScore
  local function consider(c) -- false when neither it nor any after it could win
    if top and (bound[c] < topScore or (bound[c] == topScore and after(ids[top], ids[c]))) then
      return false
    end
    local s = onPage(c, base[c])
    if (top == nil or s > topScore or (s == topScore and after(ids[c], ids[top]))) and servable(c) then
      top, topScore = c, s
    end
    return true
  end
  local taken = {}
  for _, c in ipairs(first) do
    if not consider(c) then
      return top, topScore
    end
    taken[c] = true
  end
  local rest = {}
  for c = 1, n do
    if not taken[c] then
      rest[#rest + 1] = c
    end
  end
  table.sort(rest, precedes)
  for _, c in ipairs(rest) do
    if not consider(c) then
      break
    end
  end
  return top, topScore
end

local picked, score, explored = nil, nil, 0
if mode == 'commit' then
  if not servable(1) then
    return {}
  end
  picked, score, explored = 1, onPage(1, ecpm[1]), tonumber(ARGV[10])
else
  picked, score = best(ecpm)
end
if not picked then
  return {}
end
local choice, rank = picked, score -- the pick, and what it was ranked by (its sampled score with exploration)
if explore and mode ~= 'commit' then
  -- Thompson sampling: a CPC (CPA) ad's clicks (actions) per view drawn from its Beta(1 + events, b + misses)
  -- posterior, from its card's counts (views as of its last view in the location or its last learning, events as
  -- of its last learning, which follows each event), where b makes a new ad's expected rate its type's average,
  -- sharpened: both parameters are doubled, which keeps its mean and divides its variance by about four (Chapelle
  -- and Li's posterior reshaping with alpha = 1/2: less exploration of ads already known to be worse; bench:ads
  -- measures it). A CPM ad's price is certain.
  local SHARPEN = 2
  local log, sqrt, sin, cos, TAU = math.log, math.sqrt, math.sin, math.cos, 2 * math.pi
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
    local r, t = sqrt(-2 * log(uniform())), TAU * uniform()
    spare = r * sin(t)
    return r * cos(t)
  end
  local function gamma(shape) -- Marsaglia and Tsang, for a shape of at least 1
    local d = shape - 1 / 3
    local c = 1 / sqrt(9 * d)
    while true do
      local x, v
      repeat
        x = normal()
        v = 1 + c * x
      until v > 0
      v = v * v * v
      local u = uniform()
      local xx = x * x
      if u < 1 - 0.0331 * xx * xx or log(u) < 0.5 * xx + d * (1 - v + log(v)) then
        return d * v
      end
    end
  end
  local prior, sampled = {}, {}
  for c = 1, n do
    local t = adType[c]
    if t == 'CPM' then
      sampled[c] = ecpm[c]
    else
      prior[t] = prior[t] or math.max(1000 / typeAverage(K, t) - 1, 1)
      local hits = events[c]
      local x = gamma(SHARPEN * (1 + hits))
      sampled[c] = 1000 * value[c] * x / (x + gamma(SHARPEN * (prior[t] + math.max(views[c] - hits, 0))))
    end
  end
  choice, rank = best(sampled)
end
if mode == 'pick' then
  return { ids[picked], num(score), ids[choice], num(rank), num(onPage(choice, ecpm[choice])) }
end
if choice ~= picked then
  picked, score, explored = choice, onPage(choice, ecpm[choice]), 1
end

-- The view, as the book's record_targeting_result counts it, and the targeting that a click names.
local id = ids[picked]
local viewsNow = redis.call('HINCRBY', K.views, id, 1)
redis.call('HINCRBY', K.typeStats, adType[picked] .. ':views', 1)
if explored == 1 then
  redis.call('HINCRBY', K.typeStats, adType[picked] .. ':explored', 1)
end
lookUp(picked)
local matched = {}
for _, w in ipairs(matchedOf[picked]) do
  matched[#matched + 1] = pageWords[w]
  redis.call('HINCRBY', K.wordViews, id .. ' ' .. pageWords[w], 1)
end
if cap > 0 then
  redis.call('HINCRBY', K.seen, id, 1)
  redis.call('EXPIRE', K.seen, secondsAfterDay(day, now))
end
if adType[picked] == 'CPM' then
  charge(K, id, value[picked] / 1000, now)
else
  -- its cards in the page's locations count this view (the next targetings there sample its posterior up to date)
  local card =
    struct.pack(CARD, adType[picked], value[picked], ecpm[picked], low[picked], high[picked], events[picked], viewsNow)
  redis.call('HSET', KEYS[home[picked]], id, card)
  for _, l in ipairs(alsoIn[picked] or {}) do
    redis.call('HSET', KEYS[l], id, card)
  end
end
redis.call('HSET', K.targetings, nonce, id .. ' ' .. now .. ' ' .. table.concat(matched, ' '))
redis.call('EXPIRE', K.targetings, TARGETINGS_TTL)
if viewsNow % 100 == 0 then
  dueToLearn(K, id, task, now)
end
return { id, num(score), explored, unpack(matched) }
