-- learnAd: the book's update_cpms for one ad, reading the counters that views, clicks and actions write: its
-- type's clicks (actions) per 1,000 views, then, for CPC and CPA ads, the ad's eCPM once it has an event, and the
-- bonus of each of its words that has one (the word's eCPM less the ad's), the range of its bonuses and its cards.
-- The ad leaves the pending set.
-- Refuses with STATUS.CHANGED when its version is not `expected` (the caller read its locations and words of
-- that version).
-- Returns 1, or 0 when the ad is gone.
--- @include lib/ads
local K = {
  learnPending = KEYS[1], meta = KEYS[2], ecpm = KEYS[3], profiles = KEYS[4], views = KEYS[5], events = KEYS[6],
  typeStats = KEYS[7], wordViews = KEYS[8], wordClicks = KEYS[9], wordActions = KEYS[10],
}
local FIXED = 10 -- then the hashes of the ad's locations, then the sets of its words, which are ARGV[4 ..]
local id, expected, nLocations = ARGV[1], ARGV[2], tonumber(ARGV[3])
local WORDS = FIXED + nLocations

if (redis.call('HGET', K.meta, 'ver') or '0') ~= expected then
  return STATUS.CHANGED
end
redis.call('SREM', K.learnPending, id)
if expected == '0' then
  return 0
end
local adType, value = readProfile(K, id)
local which = eventsOf(adType)
local typeViews = tonumber(redis.call('HGET', K.typeStats, adType .. ':views'))
local typeEvents = tonumber(redis.call('HGET', K.typeStats, adType .. ':' .. which))
-- as the book: a count never written counts as 1
redis.call('HSET', K.typeStats, adType .. ':avg', num(1000 * (typeEvents or 1) / (typeViews or 1)))
if adType == 'CPM' then
  return 1
end
local events = tonumber(redis.call('HGET', K.events, id)) or 0
local ecpm = tonumber(redis.call('ZSCORE', K.ecpm, id))
if events >= 1 then
  ecpm = adEcpm(K, id, adType, value)
end
local wordEvents = K.wordClicks
if which == 'actions' then
  wordEvents = K.wordActions
end
for i = WORDS + 1, #KEYS do
  local field = id .. ' ' .. ARGV[3 + i - WORDS]
  local clicks = tonumber(redis.call('HGET', wordEvents, field)) or 0
  if clicks >= 1 then
    local views = tonumber(redis.call('HGET', K.wordViews, field)) or 0
    redis.call('ZADD', KEYS[i], num(1000 * value * clicks / math.max(views, 1) - ecpm), id)
  end
end
writeProfile(K, id, adType, value, ecpm, { WORDS + 1, #KEYS }, { FIXED + 1, WORDS })
return 1
