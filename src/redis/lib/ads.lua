-- Ad targeting's arithmetic (the book's chapter 7.3) and what its scripts share. Keys are passed in a table
-- `K` named as in src/redis/ads/keys.ts.
--- @include lib/now
--- @include lib/queue

-- A number as Redis should store it: all 17 digits (Lua's own conversion keeps 14).
local function num(x)
  return string.format('%.17g', x)
end

-- The UTC day of a time in ms (days since 1970), and the seconds from `now` until a while after it ends.
local function dayOf(now)
  return math.floor(now / 86400000)
end
local function secondsAfterDay(day, now)
  return (day + 1) * 86400 - math.floor(now / 1000) + 3600
end

-- What learns an ad's eCPM: clicks for CPC (and CPM, which never learns), actions for CPA.
local function eventsOf(adType)
  if adType == 'CPA' then
    return 'actions'
  end
  return 'clicks'
end

-- An ad's profile (`profiles` column): its type and value; nil for an ad that does not exist.
local function readProfile(K, id)
  local profile = redis.call('HGET', K.profiles, id)
  if profile then
    local adType, value = string.match(profile, '^(%u+) (%S+)$')
    return adType, tonumber(value)
  end
end
-- An ad's card, what targetAd reads of each candidate from its locations' hashes: its type, value, eCPM, bonus
-- range, and its events (clicks, or actions for CPA) and views as of its last learning (targetAd also writes the
-- views it counts), packed as binary (struct.unpack is five times faster than parsing text, and every candidate is
-- read).
local CARD = '<c3dddddd'
-- Writes an ad's eCPM, its profile and its card in its locations' hashes KEYS[locations[1] .. locations[2]], with
-- the lowest and the highest of 0 and its word bonuses (from its words' sets KEYS[words[1] .. words[2]]), which
-- bound what a page's words can add to its eCPM (see targetAd), and its counts for exploration's posterior.
local function writeProfile(K, id, adType, value, ecpm, words, locations)
  local low, high = 0, 0
  for i = words[1], words[2] do
    local bonus = tonumber(redis.call('ZSCORE', KEYS[i], id))
    low, high = math.min(low, bonus), math.max(high, bonus)
  end
  redis.call('ZADD', K.ecpm, num(ecpm), id)
  redis.call('HSET', K.profiles, id, adType .. ' ' .. num(value))
  local events = tonumber(redis.call('HGET', K.events, id)) or 0
  local views = tonumber(redis.call('HGET', K.views, id)) or 0
  local card = struct.pack(CARD, adType, value, ecpm, low, high, events, views)
  for i = locations[1], locations[2] do
    redis.call('HSET', KEYS[i], id, card)
  end
end

-- The book's AVERAGE_PER_1K of a type: its clicks (actions) per 1,000 views, 1 until it was learned.
local function typeAverage(K, adType)
  return tonumber(redis.call('HGET', K.typeStats, adType .. ':avg')) or 1
end

-- The book's eCPM of an ad (to_ecpm): a CPM ad's value; a CPC or CPA ad's 1000 * value * events / views once it
-- has an event (`events`: its clicks, or actions for CPA), else its value at the type's average (index_ad's
-- 1000 * value * average / 1000).
local function adEcpm(K, id, adType, value)
  if adType == 'CPM' then
    return value
  end
  local events = tonumber(redis.call('HGET', K.events, id)) or 0
  if events < 1 then
    return value * typeAverage(K, adType)
  end
  local views = tonumber(redis.call('HGET', K.views, id)) or 0
  return 1000 * value * events / math.max(views, 1)
end

-- An ad's eCPMs are due to be learned again: it joins the pending set, and a learning task is queued when it was
-- not pending yet (each task learns every pending ad).
local function dueToLearn(K, id, task, now)
  if redis.call('SADD', K.learnPending, id) == 1 then
    enqueueTask(K.queueReady, K.queueDelayed, task, now, now)
  end
end

-- Whether an ad may serve: its total and daily budgets (when set) are not spent. `daily` is today's spending.
local function withinBudget(K, id)
  local budget, spent = tonumber(redis.call('HGET', K.budgets, id)), nil
  if budget then
    spent = tonumber(redis.call('HGET', K.spent, id)) or 0
    if spent >= budget then
      return false
    end
  end
  local dailyBudget = tonumber(redis.call('HGET', K.dailyBudgets, id))
  return not dailyBudget or (tonumber(redis.call('HGET', K.daily, id)) or 0) < dailyBudget
end

-- Charges an event's price to an ad that is within its budgets (an ad past one is not charged again, so it never
-- overspends by more than one event's price).
local function charge(K, id, price, now)
  if price <= 0 or not withinBudget(K, id) then
    return
  end
  redis.call('HINCRBYFLOAT', K.spent, id, num(price))
  redis.call('HINCRBYFLOAT', K.daily, id, num(price))
  redis.call('EXPIRE', K.daily, secondsAfterDay(dayOf(now), now) + 86400)
end

-- An ad leaves a word's set, and forgets what it learned of the word; a word no ad has leaves the vocabulary.
local function dropWord(K, id, wordKey, word)
  redis.call('ZREM', wordKey, id)
  if redis.call('EXISTS', wordKey) == 0 then
    redis.call('SREM', K.vocabulary, word)
  end
  local field = id .. ' ' .. word
  redis.call('HDEL', K.wordViews, field)
  redis.call('HDEL', K.wordClicks, field)
  redis.call('HDEL', K.wordActions, field)
end
