--[[
  createChat: create a chat with its members and an optional first message. Every member starts at read
  position 0, so a first message is unread for all of them (the book's create_chat). Refuses a chat that exists.

  KEYS[1] meta: hash, the chat's public (0/1), createdAt, createdBy
  KEYS[2] seq: string counter, the chat's last message id
  KEYS[3] version: string counter, the chat's version (1 at creation)
  KEYS[4] members: sorted set, member → read position
  KEYS[5] names: sorted set, every score 0: member names
  KEYS[6] messages: sorted set, message id → message JSON
  ARGV[1] creator: the creator's username (a member too)
  ARGV[2] public: 1 for a public chat, 0 otherwise
  ARGV[3] text: the first message's text, '' for no first message
  ARGV[4] bell: the chat's doorbell channel
  ARGV[5..] others: the other members, one username each

  Returns the last message id (0 or 1), or STATUS.EXISTS when the chat already exists (nothing is written).
]]
--- @include lib/now
local meta, seq, version, members, names, messages = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local creator, public, text, bell = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local othersAt = 5
if redis.call('EXISTS', meta) == 1 then
  return STATUS.EXISTS
end
local now = nowMs()
redis.call('HSET', meta, 'public', public, 'createdAt', now, 'createdBy', creator)
for i = othersAt, #ARGV do
  redis.call('ZADD', members, 0, ARGV[i])
  redis.call('ZADD', names, 0, ARGV[i])
end
redis.call('ZADD', members, 0, creator)
redis.call('ZADD', names, 0, creator)
local last = 0
if text ~= '' then
  last = 1
  redis.call('ZADD', messages, 1, cjson.encode({ id = 1, sender = creator, text = text, sentAt = now }))
end
redis.call('SET', seq, last)
redis.call('SET', version, 1)
-- Members' all-chats subscriptions may already watch this chat (their indexes are written first).
redis.call('SPUBLISH', bell, version .. ' 1')
return last
