-- createChat: create a chat with its members and an optional first message. Every member starts at read
-- position 0, so a first message is unread for all of them (the book's create_chat).
-- Returns the last message id (0 or 1), or STATUS.EXISTS when the chat already exists (nothing is written).
--- @include lib/now
local meta, seq, version, members, names, messages = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local creator, public, text, bell = ARGV[1], ARGV[2], ARGV[3], ARGV[4] -- text '' for no first message
-- the other members follow, from ARGV[5]
if redis.call('EXISTS', meta) == 1 then
  return STATUS.EXISTS
end
local now = nowMs()
redis.call('HSET', meta, 'public', public, 'createdAt', now, 'createdBy', creator, 'lastAt', now)
for i = 5, #ARGV do
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
