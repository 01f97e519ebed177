-- finishShare: a processor's share of an upload is counted, once: its visits are added (ZINCRBY: a second
-- file of the same day adds) and its line and error counts recorded, in one step with marking the share done.
-- KEYS after the first two are visit sets; ARGV after the first three gives, for each visit set in KEYS order,
-- the number of places n, then n pairs of count and place.
-- Returns {1} counted, {2, lines, errors} counted and every share is now done, {0} counted before,
-- {STATUS.NOT_FOUND} no such upload.
local record, shares = KEYS[1], KEYS[2]
local share, lines, malformed = ARGV[1], ARGV[2], ARGV[3]
if redis.call('EXISTS', record) == 0 then
  return { STATUS.NOT_FOUND }
end
if redis.call('SADD', shares, share) == 0 then
  return { 0 }
end
local a = 4
for k = 3, #KEYS do
  local n = tonumber(ARGV[a])
  for i = a + 1, a + 2 * n, 2 do
    redis.call('ZINCRBY', KEYS[k], ARGV[i], ARGV[i + 1])
  end
  a = a + 1 + 2 * n
end
local totalLines = redis.call('HINCRBY', record, 'lines', lines)
local totalErrors = redis.call('HINCRBY', record, 'errors', malformed)
if redis.call('SCARD', shares) >= tonumber(redis.call('HGET', record, 'processors')) then
  return { 2, totalLines, totalErrors }
end
return { 1 }
