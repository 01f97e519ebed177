-- logs-share-done: a processor's share of an upload is counted, once: its visits are added (ZINCRBY: a second
-- file of the same day adds) and its line and error counts recorded, in one step with marking the share done.
-- KEYS[1] record  KEYS[2] shares  KEYS[3..] visit sets
-- ARGV[1] share (1..N)  ARGV[2] lines  ARGV[3] malformed lines  then, for each visit set in KEYS order: the
-- number of places n, then n pairs of count and place
-- Returns {1} counted, {2, lines, errors} counted and every share is now done, {0} counted before, {-1} no such upload.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return { -1 }
end
if redis.call('SADD', KEYS[2], ARGV[1]) == 0 then
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
local lines = redis.call('HINCRBY', KEYS[1], 'lines', ARGV[2])
local errors = redis.call('HINCRBY', KEYS[1], 'errors', ARGV[3])
if redis.call('SCARD', KEYS[2]) >= tonumber(redis.call('HGET', KEYS[1], 'processors')) then
  return { 2, lines, errors }
end
return { 1 }
