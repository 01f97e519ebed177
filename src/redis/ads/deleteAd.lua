-- deleteAd: removes an ad, everything it learned and what it spent today from every index (viewers' caps stay
-- until the day ends: they are one hash per viewer). Refuses with STATUS.CHANGED when its version is not
-- `expected` (the caller read its locations and words of that version), STATUS.WRONG_DAY when ARGV[5] is not
-- today. Returns 1, or 0 when there was no such ad.
--- @include lib/ads
local K = {
  ids = KEYS[1], meta = KEYS[2], ecpm = KEYS[3], vocabulary = KEYS[4], wordViews = KEYS[5], wordClicks = KEYS[6],
  wordActions = KEYS[7], learnPending = KEYS[8], daily = KEYS[9],
}
-- KEYS[10 .. 9 + nColumns]: the attribute columns; then the locations' hashes, then the words' sets (ARGV[6 ..]).
local id, expected, nColumns, nLocations, day = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local FIXED = 9

if dayOf(nowMs()) ~= day then
  return STATUS.WRONG_DAY
end
local ver = redis.call('HGET', K.meta, 'ver') or '0'
if ver ~= expected then
  return STATUS.CHANGED
end
if ver == '0' then
  return 0
end
for i = FIXED + 1, FIXED + nColumns do
  redis.call('HDEL', KEYS[i], id)
end
for i = FIXED + nColumns + 1, FIXED + nColumns + nLocations do
  redis.call('HDEL', KEYS[i], id)
end
local first = FIXED + nColumns + nLocations
for i = first + 1, #KEYS do
  dropWord(K, id, KEYS[i], ARGV[5 + i - first])
end
redis.call('HDEL', K.daily, id)
redis.call('DEL', K.meta)
redis.call('ZREM', K.ids, id)
redis.call('ZREM', K.ecpm, id)
redis.call('SREM', K.learnPending, id)
return 1
