-- readChat: several members' read positions and the retained messages after an id, read atomically (one call
-- serves every reader of a chat that one process has at one moment).
-- Returns {} when the chat does not exist; else {the chat's version, position of each reader (-1 when not a
-- member), message JSON...}, the messages in id order.
local meta, members, messages, version = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local after, limit = tonumber(ARGV[1]), tonumber(ARGV[2]) -- after -1: after the lowest read position of the readers
-- the readers follow, from ARGV[3]
if redis.call('EXISTS', meta) == 0 then
  return {}
end
local result = { tonumber(redis.call('GET', version)) }
local lowest = nil
for i = 3, #ARGV do
  local read = redis.call('ZSCORE', members, ARGV[i])
  local position = read and tonumber(read) or -1
  result[#result + 1] = position
  if position >= 0 and (lowest == nil or position < lowest) then
    lowest = position
  end
end
if after < 0 then
  after = lowest
end
if after ~= nil then
  for _, json in ipairs(redis.call('ZRANGEBYSCORE', messages, '(' .. after, '+inf', 'LIMIT', 0, limit)) do
    result[#result + 1] = json
  end
end
return result
