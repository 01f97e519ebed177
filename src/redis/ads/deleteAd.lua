--[[
  deleteAd: removes an ad, everything it learned and what it spent today from every index (viewers' caps stay until
  the day ends: they are one hash per viewer). Refuses with STATUS.CHANGED when its version is not `expected` (the
  caller read its locations and words of that version), STATUS.WRONG_DAY when `day` is not today. The fixed keys
  are bound in the table K by these names (lib/ads.lua takes K).

  KEYS[1] ids: sorted set of the ad ids, every score 0
  KEYS[2] meta: hash of the ad: locations, terms, ver
  KEYS[3] ecpm: sorted set, ad id → its learned eCPM
  KEYS[4] vocabulary: set of the words some ad has
  KEYS[5] wordViews: hash, "<ad id> <word>" → views
  KEYS[6] wordClicks: hash, "<ad id> <word>" → clicks
  KEYS[7] wordActions: hash, "<ad id> <word>" → actions
  KEYS[8] learnPending: set of the ads due to be learned again
  KEYS[9] daily: hash, ad id → spent on the UTC day `day`
  KEYS[10..] columns: from `columnsAt` (10) the per-ad attribute hashes (ARGV[3] of them, ad id → a value), then
    from `locationsAt` the hashes of the ad's locations (ARGV[4] of them, ad id → card), then from `wordsAt` one
    sorted set per word of ARGV[6..], in that order (ad id → the word's bonus)
  ARGV[1] id: the ad
  ARGV[2] expected: the version the caller read ('0': none)
  ARGV[3] nColumns: how many attribute hashes KEYS has
  ARGV[4] nLocations: how many locations' hashes KEYS has
  ARGV[5] day: the UTC day (days since 1970) of KEYS[9]
  ARGV[6..] words: the ad's words, one each

  Returns 1, or 0 when there was no such ad; STATUS.CHANGED or STATUS.WRONG_DAY (nothing is written).
]]
--- @include lib/ads
local K = {
  ids = KEYS[1], meta = KEYS[2], ecpm = KEYS[3], vocabulary = KEYS[4], wordViews = KEYS[5], wordClicks = KEYS[6],
  wordActions = KEYS[7], learnPending = KEYS[8], daily = KEYS[9],
}
local id, expected, nColumns, nLocations, day =
  ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local FIRST_WORD = 6 -- ARGV: the first word
local columnsAt = 10 -- KEYS: the first attribute hash
local locationsAt = columnsAt + nColumns -- KEYS: the first location's hash
local wordsAt = locationsAt + nLocations -- KEYS: the set of ARGV[FIRST_WORD]'s word, then the next word's ...

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
for i = columnsAt, wordsAt - 1 do -- the attribute hashes and the locations' hashes
  redis.call('HDEL', KEYS[i], id)
end
for i = FIRST_WORD, #ARGV do
  dropWord(K, id, KEYS[wordsAt + i - FIRST_WORD], ARGV[i])
end
redis.call('HDEL', K.daily, id)
redis.call('DEL', K.meta)
redis.call('ZREM', K.ids, id)
redis.call('ZREM', K.ecpm, id)
redis.call('SREM', K.learnPending, id)
return 1
