-- chat-create: create a chat with its members and an optional first message.
-- KEYS[1] chat meta  KEYS[2] seq  KEYS[3] version  KEYS[4] members  KEYS[5] names  KEYS[6] messages
-- ARGV[1] creator  ARGV[2] public (0/1)  ARGV[3] first message text ('' for none)  ARGV[4] doorbell channel
-- ARGV[5..] other members
-- Every member starts at read position 0, so a first message is unread for all of them (the book's create_chat).
-- Returns the last message id (0 or 1), or -1 when the chat already exists (nothing is written).
--- @include lib/now
if redis.call('EXISTS', KEYS[1]) == 1 then
  return -1
end
local now = nowMs()
redis.call('HSET', KEYS[1], 'public', ARGV[2], 'createdAt', now, 'createdBy', ARGV[1], 'lastAt', now)
for i = 5, #ARGV do
  redis.call('ZADD', KEYS[4], 0, ARGV[i])
  redis.call('ZADD', KEYS[5], 0, ARGV[i])
end
redis.call('ZADD', KEYS[4], 0, ARGV[1])
redis.call('ZADD', KEYS[5], 0, ARGV[1])
local last = 0
if ARGV[3] ~= '' then
  last = 1
  redis.call('ZADD', KEYS[6], 1, cjson.encode({ id = 1, sender = ARGV[1], text = ARGV[3], sentAt = now }))
end
redis.call('SET', KEYS[2], last)
redis.call('SET', KEYS[3], 1)
-- Members' all-chats subscriptions may already watch this chat (their indexes are written first).
redis.call('SPUBLISH', ARGV[4], KEYS[3] .. ' 1')
return last
