--[[
  beginSearch: what a search of one user checks and changes on the user's slot, in one step: a place among the
  user's searches running now (at most `limit`: refused otherwise, nothing written), then either the live result
  the user pins (its description renewed and returned, with a page of its merged copy when asked) or, when there is
  none (or it answers another query), the new result noted among the user's live results, the least recently used
  past `max` leaving with their descriptions (returned, so that the caller deletes the matches they made). An
  entry of `results` older than the TTL has expired: it is not found, and being the least recently used, it is the
  first to leave.

  KEYS[1] searching: sorted set, holder id -> expiry (ms), the user's searches running now
  KEYS[2] results: sorted set, the user's live result ids by last use (ms), expiring with the newest
  KEYS[3] descriptions: hash, result id -> JSON of its description, expiring with the newest description kept
    or found
  KEYS[4] merged: list, the pinned result's merged copy ("<score> <id>" each); any key of the user's slot otherwise
  ARGV[1] limit: searches of the user at once
  ARGV[2] holdMs: a place not given back is dropped after this long (a process that died)
  ARGV[3] holder: this search's holder id
  ARGV[4] ttlMs: the results' TTL, ms
  ARGV[5] max: how many live results the user keeps
  ARGV[6] resultId: the new result's id, noted when nothing pinned is found
  ARGV[7] pinned: the result id the search names ('' for none)
  ARGV[8] fingerprint: the query the pinned result must answer (its description's `fingerprint`)
  ARGV[9] offset: the first entry of the merged copy read
  ARGV[10] count: how many entries of the merged copy are read (0: none)

  Returns 0 when every place is taken; else {1, description or false, page of the merged copy or false (none or not
  asked), {evicted id, its description or false, ...}}: a description means the pinned result was found and nothing
  was noted.
]]
--- @include lib/now
--- @include lib/holders
local searching, results, descriptions, merged = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local limit, holdMs, holder, ttlMs, max = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local resultId, pinned, fingerprint = ARGV[6], ARGV[7], ARGV[8]
local offset, count = tonumber(ARGV[9]), tonumber(ARGV[10])
local now = nowMs()

dropExpired(searching, now)
if redis.call('ZCARD', searching) >= limit and not redis.call('ZSCORE', searching, holder) then
  return 0
end
-- every holder is added for holdMs from its Redis time: the newest holds longest
redis.call('ZADD', searching, now + holdMs, holder)
redis.call('PEXPIRE', searching, holdMs)

local used = pinned ~= '' and tonumber(redis.call('ZSCORE', results, pinned))
if used and used > now - ttlMs then
  local description = redis.call('HGET', descriptions, pinned)
  if description and cjson.decode(description).fingerprint == fingerprint then
    redis.call('ZADD', results, now, pinned)
    redis.call('PEXPIRE', results, ttlMs)
    redis.call('PEXPIRE', descriptions, ttlMs)
    local page = false
    if count > 0 and redis.call('PEXPIRE', merged, ttlMs) == 1 then
      page = redis.call('LRANGE', merged, offset, offset + count - 1)
    end
    return { 1, description, page, {} }
  end
end

redis.call('ZADD', results, now, resultId)
local evicted = {}
local over = redis.call('ZCARD', results) - max
if over > 0 then
  local popped = redis.call('ZPOPMIN', results, over)
  for i = 1, #popped, 2 do
    evicted[#evicted + 1] = popped[i]
    evicted[#evicted + 1] = redis.call('HGET', descriptions, popped[i]) or false
    redis.call('HDEL', descriptions, popped[i])
  end
end
redis.call('PEXPIRE', results, ttlMs)
return { 1, false, false, evicted }
