-- chat-read: a member's read position and the retained messages after an id, read atomically.
-- KEYS[1] chat meta  KEYS[2] members  KEYS[3] messages
-- ARGV[1] member  ARGV[2] after (-1: after the member's read position)  ARGV[3] limit
-- Returns {-1} no such chat, {-2} not a member; else {readPosition, message JSON...} in id order.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return { -1 }
end
local read = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not read then
  return { -2 }
end
local after = tonumber(ARGV[2])
if after < 0 then
  after = tonumber(read)
end
local result = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. after, '+inf', 'LIMIT', 0, tonumber(ARGV[3]))
table.insert(result, 1, tonumber(read))
return result
