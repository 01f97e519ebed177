-- indexAd: creates or replaces an ad (the book's index_ad, whole): its locations, its words (an ad without any
-- still serves), its attributes and its eCPM. The counts it learned are kept, and a replaced ad that has been
-- seen is due to be learned again (its word bonuses follow its new value; a new type starts them again from 0).
-- Refuses with STATUS.CHANGED when its
-- version is not `expected` (the caller read its old locations and words of that version; it reads again).
-- Returns the new version.
--- @include lib/ads
local K = {
  ids = KEYS[1], meta = KEYS[2], ecpm = KEYS[3], profiles = KEYS[4], budgets = KEYS[5], dailyBudgets = KEYS[6],
  views = KEYS[7], events = KEYS[8], typeStats = KEYS[9], vocabulary = KEYS[10], wordViews = KEYS[11],
  wordClicks = KEYS[12], wordActions = KEYS[13], learnPending = KEYS[14], queueReady = KEYS[15],
  queueDelayed = KEYS[16], version = KEYS[17], clicks = KEYS[18], actions = KEYS[19],
}
local FIXED = 19
local id, expected, adType, value, budget, dailyBudget, locations, task =
  ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5], ARGV[6], ARGV[7], ARGV[8]
-- KEYS after FIXED: the new locations' hashes, the new words' sets, the dropped locations' hashes, the dropped
-- words' sets;
-- ARGV after 12: the new words, then the dropped words.
local nLocations, nWords, nDroppedLocations, nDroppedWords =
  tonumber(ARGV[9]), tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12])

local ver = redis.call('HGET', K.meta, 'ver') or '0'
if ver ~= expected then
  return STATUS.CHANGED
end

local key = FIXED + nLocations -- the new locations get the ad's card below
local words = {}
for i = 1, nWords do
  key = key + 1
  words[i] = ARGV[12 + i]
  redis.call('ZADD', KEYS[key], 'NX', 0, id)
  redis.call('SADD', K.vocabulary, words[i])
end
for _ = 1, nDroppedLocations do
  key = key + 1
  redis.call('HDEL', KEYS[key], id)
end
for i = 1, nDroppedWords do
  key = key + 1
  dropWord(K, id, KEYS[key], ARGV[12 + nWords + i])
end

local oldType = readProfile(K, id)
if oldType and oldType ~= adType then
  -- learned from other events: it counts its new type's events, and its words start again from no bonus
  redis.call('HSET', K.events, id, redis.call('HGET', K[eventsOf(adType)], id) or 0)
  for i = FIXED + nLocations + 1, FIXED + nLocations + nWords do
    redis.call('ZADD', KEYS[i], 0, id)
  end
end
writeProfile(K, id, adType, value, adEcpm(K, id, adType, value), { FIXED + nLocations + 1, FIXED + nLocations + nWords },
  { FIXED + 1, FIXED + nLocations })
for _, limit in ipairs({ { K.budgets, budget }, { K.dailyBudgets, dailyBudget } }) do
  if limit[2] == '' then
    redis.call('HDEL', limit[1], id)
  else
    redis.call('HSET', limit[1], id, limit[2])
  end
end
local newVer = redis.call('INCR', K.version) -- one counter, so a version never comes back after a delete
redis.call('HSET', K.meta, 'locations', locations, 'terms', table.concat(words, ' '), 'ver', newVer)
redis.call('ZADD', K.ids, 0, id)
if ver ~= '0' and (tonumber(redis.call('HGET', K.views, id)) or 0) > 0 then
  dueToLearn(K, id, task, nowMs())
end
return newVer
