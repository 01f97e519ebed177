--[[
  recordClick: the book's record_click, counting once. The targeting must be known, at most 15 minutes old and of
  this ad; its first click (or, with `action`, its first action) counts: a click as a click, an action as an action
  (never a click), for the ad, its type and each word the targeting matched that the ad still has (a replaced ad
  forgets the words it dropped). A click on a CPC ad, an action on a CPA ad, is charged to an ad within its budgets
  and makes it due to be learned again. The keys are bound in the table K by these names (lib/ads.lua takes K).

  KEYS[1] targetings: hash, the targetings of the minute, "<nonce>" → "<ad id> <ms> <matched words>", "<nonce>:c|a"
  KEYS[2] profiles: hash, ad id → "<type> <value>"
  KEYS[3] clicks: hash, ad id → its clicks
  KEYS[4] actions: hash, ad id → its actions
  KEYS[5] events: hash, ad id → what its eCPM learns from (clicks, actions for CPA)
  KEYS[6] spent: hash, ad id → the price of every event charged to it
  KEYS[7] budgets: hash, ad id → its total budget
  KEYS[8] dailyBudgets: hash, ad id → its daily budget
  KEYS[9] daily: hash, ad id → spent on the UTC day ARGV[4]
  KEYS[10] typeStats: hash, "<TYPE>:views|clicks|actions" → counts of the shard's ads of a type, "<TYPE>:avg"
  KEYS[11] wordClicks: hash, "<ad id> <word>" → clicks
  KEYS[12] wordActions: hash, "<ad id> <word>" → actions
  KEYS[13] learnPending: set of the ads due to be learned again
  KEYS[14] queueReady: list, the learning queue's ready tasks
  KEYS[15] queueDelayed: sorted set, the learning queue's delayed tasks
  KEYS[16] meta: hash of the ad: locations, terms (its words, space-separated), ver
  ARGV[1] nonce: the targeting's
  ARGV[2] id: the ad clicked
  ARGV[3] action: '1' for an action, '0' for a click
  ARGV[4] day: the UTC day (days since 1970) of KEYS[9]
  ARGV[5] task: the learning task queued when the ad becomes due

  Returns 1 when counted, 0 when not; STATUS.WRONG_DAY when `day` is not Redis's day (nothing is written).
]]
--- @include lib/ads
local K = {
  targetings = KEYS[1], profiles = KEYS[2], clicks = KEYS[3], actions = KEYS[4], events = KEYS[5], spent = KEYS[6],
  budgets = KEYS[7], dailyBudgets = KEYS[8], daily = KEYS[9], typeStats = KEYS[10], wordClicks = KEYS[11],
  wordActions = KEYS[12], learnPending = KEYS[13], queueReady = KEYS[14], queueDelayed = KEYS[15], meta = KEYS[16],
}
local nonce, id, action, day, task = ARGV[1], ARGV[2], ARGV[3] == '1', tonumber(ARGV[4]), ARGV[5]
local TARGETING_MS = 900000

local now = nowMs()
if dayOf(now) ~= day then
  return STATUS.WRONG_DAY
end
local targeting = redis.call('HGET', K.targetings, nonce)
if not targeting then
  return 0
end
local ad, at, words = string.match(targeting, '^(%S+) (%d+) ?(.*)$')
local adType, value = readProfile(K, id)
if ad ~= id or now - tonumber(at) > TARGETING_MS or not adType then
  return 0
end
local event = 'clicks'
if action then
  event = 'actions'
end
if redis.call('HSETNX', K.targetings, nonce .. ':' .. string.sub(event, 1, 1), 1) == 0 then
  return 0
end
redis.call('HINCRBY', K[event], id, 1)
redis.call('HINCRBY', K.typeStats, adType .. ':' .. event, 1)
local wordEvents = K.wordClicks
if action then
  wordEvents = K.wordActions
end
local terms = {}
for word in string.gmatch(redis.call('HGET', K.meta, 'terms') or '', '%S+') do
  terms[word] = true
end
for word in string.gmatch(words, '%S+') do
  if terms[word] then
    redis.call('HINCRBY', wordEvents, id .. ' ' .. word, 1)
  end
end
if event == eventsOf(adType) then
  redis.call('HINCRBY', K.events, id, 1)
  if adType ~= 'CPM' then
    charge(K, id, value, now)
    dueToLearn(K, id, task, now)
  end
end
return 1
