--[[
  indexChat: add a chat to, or remove it from, a user's index of memberships; ring the user's doorbell when the
  index changed.

  KEYS[1] chats: sorted set, the user's chats, chat id → ms joined
  KEYS[2] chatsVersion: string counter, bumped when the index changes
  ARGV[1] op: 'add' or 'remove'
  ARGV[2] chatId: the chat's id
  ARGV[3] bell: the user's doorbell channel

  Returns 1 when the index changed, 0 otherwise.
]]
--- @include lib/now
local chats, chatsVersion = KEYS[1], KEYS[2]
local op, chatId, bell = ARGV[1], ARGV[2], ARGV[3]
local changed
if op == 'add' then
  changed = redis.call('ZADD', chats, 'NX', nowMs(), chatId)
else
  changed = redis.call('ZREM', chats, chatId)
end
if changed == 1 then
  redis.call('SPUBLISH', bell, chatsVersion .. ' ' .. redis.call('INCR', chatsVersion))
end
return changed
