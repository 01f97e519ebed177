--[[
  chatState: what the Chat type shows of one chat to one viewer, read atomically. The chat's last activity is its
  last message's time (trimming always keeps the last message), or its creation.

  KEYS[1] meta: hash, the chat's public (0/1), createdAt
  KEYS[2] seq: string counter, the chat's last message id
  KEYS[3] members: sorted set, member → read position
  KEYS[4] messages: sorted set, message id → message JSON {id, sender, text, sentAt}
  ARGV[1] viewer: the username viewing

  Returns {} when the chat does not exist; else {public, createdAt, lastAt, lastMessageId, memberCount, the
  viewer's read position or STATUS.NOT_MEMBER when the viewer is not a member}.
]]
local meta, seq, members, messages = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local viewer = ARGV[1]
local m = redis.call('HMGET', meta, 'public', 'createdAt')
if not m[1] then
  return {}
end
local createdAt = tonumber(m[2])
local last = redis.call('ZRANGE', messages, -1, -1)
local lastAt = #last > 0 and cjson.decode(last[1]).sentAt or createdAt
local read = redis.call('ZSCORE', members, viewer)
return { tonumber(m[1]), createdAt, lastAt, tonumber(redis.call('GET', seq) or '0'),
  redis.call('ZCARD', members), read and tonumber(read) or STATUS.NOT_MEMBER }
