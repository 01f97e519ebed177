--[[
  markRead: move a member's read position forward (never backwards), then delete what everyone has read,
  keeping the most recent `history` messages. Refuses a chat that does not exist and a user who is not a member.

  KEYS[1] meta: hash, the chat's public (0/1), createdAt, createdBy
  KEYS[2] seq: string counter, the chat's last message id
  KEYS[3] members: sorted set, member → read position
  KEYS[4] messages: sorted set, message id → message JSON
  ARGV[1] member: the username reading
  ARGV[2] upTo: the message id read up to (clamped to the last id)
  ARGV[3] history: how many of the most recent messages are kept even when everyone has read them

  Returns the member's read position; STATUS.NOT_FOUND no such chat, STATUS.NOT_MEMBER.
]]
--- @include lib/trim-read
local meta, seq, members, messages = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local member, upTo, history = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
if redis.call('EXISTS', meta) == 0 then
  return STATUS.NOT_FOUND
end
local read = redis.call('ZSCORE', members, member)
if not read then
  return STATUS.NOT_MEMBER
end
read = tonumber(read)
local last = tonumber(redis.call('GET', seq))
local target = math.min(upTo, last)
if target <= read then
  return read
end
redis.call('ZADD', members, target, member)
trimRead(members, messages, last, history)
return target
