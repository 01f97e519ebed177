--[[
  learnAd: the book's update_cpms for one ad, reading the counters that views, clicks and actions write: its type's
  clicks (actions) per 1,000 views (over every shard: the caller sums the shards' counts), then, for CPC and CPA ads,
  the ad's eCPM once it has an event, and the bonus of each of its words that has one (the word's eCPM less the ad's),
  the range of its bonuses and its cards. The ad leaves the pending set. Refuses with STATUS.CHANGED when its version
  is not `expected` (the caller read its locations and words of that version). The fixed keys are bound in the table K
  by these names (lib/ads.lua takes K).

  KEYS[1] learnPending: set of the ads due to be learned again
  KEYS[2] meta: hash of the ad: locations, terms, ver
  KEYS[3] ecpm: sorted set, ad id → its learned eCPM
  KEYS[4] profiles: hash, ad id → "<type> <value>"
  KEYS[5] views: hash, ad id → its views
  KEYS[6] events: hash, ad id → what its eCPM learns from (clicks, actions for CPA)
  KEYS[7] typeStats: hash, "<TYPE>:views|clicks|actions" → counts of the shard's ads of a type, "<TYPE>:avg"
  KEYS[8] wordViews: hash, "<ad id> <word>" → views
  KEYS[9] wordClicks: hash, "<ad id> <word>" → clicks
  KEYS[10] wordActions: hash, "<ad id> <word>" → actions
  KEYS[11..] indexes: from `locationsAt` (11) the hashes of the ad's locations (ARGV[3] of them, each ad id → card),
    then from `wordsAt` one sorted set per word of ARGV[4..], in that order (ad id → the word's bonus)
  ARGV[1] id: the ad
  ARGV[2] expected: the version the caller read ('0': none)
  ARGV[3] nLocations: how many locations' hashes KEYS has
  ARGV[4] averages: cjson {<TYPE> = its clicks (actions) per 1,000 views over every shard}
  ARGV[5..] words: the ad's words, one each

  Returns the ad's type, or 0 when the ad is gone; STATUS.CHANGED (nothing is written).
]]
--- @include lib/ads
local K = {
  learnPending = KEYS[1], meta = KEYS[2], ecpm = KEYS[3], profiles = KEYS[4], views = KEYS[5], events = KEYS[6],
  typeStats = KEYS[7], wordViews = KEYS[8], wordClicks = KEYS[9], wordActions = KEYS[10],
}
local id, expected, nLocations, averages = ARGV[1], ARGV[2], tonumber(ARGV[3]), cjson.decode(ARGV[4])
local FIRST_WORD = 5 -- ARGV: the first word
local locationsAt = 11 -- KEYS: the first location's hash
local wordsAt = locationsAt + nLocations -- KEYS: the set of ARGV[FIRST_WORD]'s word, then the next word's ...

if (redis.call('HGET', K.meta, 'ver') or '0') ~= expected then
  return STATUS.CHANGED
end
redis.call('SREM', K.learnPending, id)
if expected == '0' then
  return 0
end
local adType, value = readProfile(K, id)
local which = eventsOf(adType)
redis.call('HSET', K.typeStats, adType .. ':avg', num(averages[adType]))
if adType == 'CPM' then
  return adType
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
for i = FIRST_WORD, #ARGV do
  local field = id .. ' ' .. ARGV[i]
  local clicks = tonumber(redis.call('HGET', wordEvents, field)) or 0
  if clicks >= 1 then
    local views = tonumber(redis.call('HGET', K.wordViews, field)) or 0
    redis.call('ZADD', KEYS[wordsAt + i - FIRST_WORD], num(1000 * value * clicks / math.max(views, 1) - ecpm), id)
  end
end
writeProfile(K, id, adType, value, ecpm, { wordsAt, #KEYS }, { locationsAt, wordsAt - 1 })
return adType
