-- chat-state: what the Chat type shows of one chat to one viewer, read atomically.
-- KEYS[1] chat meta  KEYS[2] seq  KEYS[3] members
-- ARGV[1] viewer
-- Returns {} when the chat does not exist; else {public, createdAt, lastAt, lastMessageId, memberCount,
-- viewer's read position or -1 when not a member}.
local meta = redis.call('HMGET', KEYS[1], 'public', 'createdAt', 'lastAt')
if not meta[1] then
  return {}
end
local read = redis.call('ZSCORE', KEYS[3], ARGV[1])
return { tonumber(meta[1]), tonumber(meta[2]), tonumber(meta[3]), tonumber(redis.call('GET', KEYS[2]) or '0'),
  redis.call('ZCARD', KEYS[3]), read and tonumber(read) or -1 }
