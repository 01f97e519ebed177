--[[
  chatState: what the Chat type shows of one chat to one viewer, read atomically.

  KEYS[1] meta: hash, the chat's public (0/1), createdAt, lastAt
  KEYS[2] seq: string counter, the chat's last message id
  KEYS[3] members: sorted set, member → read position
  ARGV[1] viewer: the username viewing

  Returns {} when the chat does not exist; else {public, createdAt, lastAt, lastMessageId, memberCount, the
  viewer's read position or STATUS.NOT_MEMBER when the viewer is not a member}.
]]
local meta, seq, members = KEYS[1], KEYS[2], KEYS[3]
local viewer = ARGV[1]
local m = redis.call('HMGET', meta, 'public', 'createdAt', 'lastAt')
if not m[1] then
  return {}
end
local read = redis.call('ZSCORE', members, viewer)
return { tonumber(m[1]), tonumber(m[2]), tonumber(m[3]), tonumber(redis.call('GET', seq) or '0'),
  redis.call('ZCARD', members), read and tonumber(read) or STATUS.NOT_MEMBER }
