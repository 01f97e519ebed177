--[[
  readChat: several members' read positions and the retained messages after an id, read atomically (one call
  serves every reader of a chat that one process has at one moment).

  KEYS[1] meta: hash, the chat's public (0/1), createdAt, createdBy
  KEYS[2] members: sorted set, member → read position
  KEYS[3] messages: sorted set, message id → message JSON
  KEYS[4] version: string counter, the chat's version
  ARGV[1] after: the message id to read after; -1: after the lowest read position of the readers
  ARGV[2] limit: the most messages returned
  ARGV[3..] readers: one username each

  Returns {} when the chat does not exist; else {the chat's version, position of each reader (STATUS.NOT_MEMBER
  when not a member), message JSON...}, the messages in id order.
]]
local meta, members, messages, version = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local after, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
local readersAt = 3
if redis.call('EXISTS', meta) == 0 then
  return {}
end
local result = { tonumber(redis.call('GET', version)) }
local lowest = nil
for i = readersAt, #ARGV do
  local read = redis.call('ZSCORE', members, ARGV[i])
  if read then
    local position = tonumber(read)
    result[#result + 1] = position
    if lowest == nil or position < lowest then
      lowest = position
    end
  else
    result[#result + 1] = STATUS.NOT_MEMBER
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
