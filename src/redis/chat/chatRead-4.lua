-- chat-read: several members' read positions and the retained messages after an id, read atomically (one call
-- serves every reader of a chat that one process has at one moment).
-- KEYS[1] chat meta  KEYS[2] members  KEYS[3] messages  KEYS[4] version
-- ARGV[1] after (-1: after the lowest read position of the readers)  ARGV[2] limit  ARGV[3..] readers
-- Returns {} when the chat does not exist; else {the chat's version, position of each reader (-1 when not a
-- member), message JSON...}, the messages in id order.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {}
end
local result = { tonumber(redis.call('GET', KEYS[4])) }
local lowest = nil
for i = 3, #ARGV do
  local read = redis.call('ZSCORE', KEYS[2], ARGV[i])
  local position = read and tonumber(read) or -1
  result[#result + 1] = position
  if position >= 0 and (lowest == nil or position < lowest) then
    lowest = position
  end
end
local after = tonumber(ARGV[1])
if after < 0 then
  after = lowest
end
if after ~= nil then
  local messages = redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. after, '+inf', 'LIMIT', 0, tonumber(ARGV[2]))
  for _, json in ipairs(messages) do
    result[#result + 1] = json
  end
end
return result
