--[[
  indexAd: creates or replaces an ad (the book's index_ad, whole): its locations, its words (an ad without any still
  serves), its attributes and its eCPM. The counts it learned are kept, and a replaced ad that has been seen is due
  to be learned again (its word bonuses follow its new value; a new type starts them again from 0). Refuses with
  STATUS.CHANGED when its version is not `expected` (the caller read its old locations and words of that version;
  it reads again). The fixed keys are bound in the table K by these names (lib/ads.lua takes K).

  KEYS[1] ids: sorted set of the ad ids, every score 0
  KEYS[2] meta: hash of the ad: locations, terms, ver
  KEYS[3] ecpm: sorted set, ad id → its learned eCPM
  KEYS[4] profiles: hash, ad id → "<type> <value>"
  KEYS[5] budgets: hash, ad id → its total budget
  KEYS[6] dailyBudgets: hash, ad id → its daily budget
  KEYS[7] views: hash, ad id → its views
  KEYS[8] events: hash, ad id → what its eCPM learns from (clicks, actions for CPA)
  KEYS[9] typeStats: hash, "<TYPE>:views|clicks|actions" → counts of the shard's ads of a type, "<TYPE>:avg"
  KEYS[10] vocabulary: set of the words some ad has
  KEYS[11] wordViews: hash, "<ad id> <word>" → views
  KEYS[12] wordClicks: hash, "<ad id> <word>" → clicks
  KEYS[13] wordActions: hash, "<ad id> <word>" → actions
  KEYS[14] learnPending: set of the ads due to be learned again
  KEYS[15] queueReady: list, the learning queue's ready tasks
  KEYS[16] queueDelayed: sorted set, the learning queue's delayed tasks
  KEYS[17] version: string, the change counter of every ad
  KEYS[18] clicks: hash, ad id → its clicks
  KEYS[19] actions: hash, ad id → its actions
  KEYS[20..] indexes: from `locationsAt` (20) the hashes of the new locations (packed.nLocations of them, ad id →
    card), from `wordsAt` one sorted set per word of packed.words (ad id → the word's bonus), from
    `droppedLocationsAt` the hashes of the locations it leaves (packed.nDroppedLocations of them), from
    `droppedWordsAt` one sorted set per word of packed.droppedWords, in that order
  ARGV[1] id: the ad
  ARGV[2] expected: the version the caller read ('0': none)
  ARGV[3] adType: CPC, CPA or CPM
  ARGV[4] value: the price of a click, an action, or 1,000 views
  ARGV[5] budget: its total budget, '' for none
  ARGV[6] dailyBudget: its daily budget, '' for none
  ARGV[7] locations: JSON array of its locations, stored as is in `meta`
  ARGV[8] task: the learning task queued when the ad becomes due
  ARGV[9] packed: cjson {nLocations = n, words = {...}, nDroppedLocations = n, droppedWords = {...}}: how many
    locations it has, its words, how many locations it leaves, the words it leaves

  Returns the new version (> 0); STATUS.CHANGED (nothing is written).
]]
--- @include lib/ads
local K = {
  ids = KEYS[1], meta = KEYS[2], ecpm = KEYS[3], profiles = KEYS[4], budgets = KEYS[5], dailyBudgets = KEYS[6],
  views = KEYS[7], events = KEYS[8], typeStats = KEYS[9], vocabulary = KEYS[10], wordViews = KEYS[11],
  wordClicks = KEYS[12], wordActions = KEYS[13], learnPending = KEYS[14], queueReady = KEYS[15],
  queueDelayed = KEYS[16], version = KEYS[17], clicks = KEYS[18], actions = KEYS[19],
}
local id, expected, adType, value, budget, dailyBudget, locations, task =
  ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5], ARGV[6], ARGV[7], ARGV[8]
local packed = cjson.decode(ARGV[9])
local words, droppedWords = packed.words, packed.droppedWords
local locationsAt = 20 -- KEYS: the first new location's hash
local wordsAt = locationsAt + packed.nLocations -- KEYS: the set of words[1], then of words[2] ...
local droppedLocationsAt = wordsAt + #words -- KEYS: the first dropped location's hash
local droppedWordsAt = droppedLocationsAt + packed.nDroppedLocations -- KEYS: the set of droppedWords[1] ...

local ver = redis.call('HGET', K.meta, 'ver') or '0'
if ver ~= expected then
  return STATUS.CHANGED
end

-- the new locations get the ad's card below
for i, word in ipairs(words) do
  redis.call('ZADD', KEYS[wordsAt + i - 1], 'NX', 0, id)
  redis.call('SADD', K.vocabulary, word)
end
for i = droppedLocationsAt, droppedWordsAt - 1 do
  redis.call('HDEL', KEYS[i], id)
end
for i, word in ipairs(droppedWords) do
  dropWord(K, id, KEYS[droppedWordsAt + i - 1], word)
end

local oldType = readProfile(K, id)
if oldType and oldType ~= adType then
  -- learned from other events: it counts its new type's events, and its words start again from no bonus
  redis.call('HSET', K.events, id, redis.call('HGET', K[eventsOf(adType)], id) or 0)
  for i = wordsAt, droppedLocationsAt - 1 do
    redis.call('ZADD', KEYS[i], 0, id)
  end
end
writeProfile(K, id, adType, value, adEcpm(K, id, adType, value), { wordsAt, droppedLocationsAt - 1 },
  { locationsAt, wordsAt - 1 })
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
